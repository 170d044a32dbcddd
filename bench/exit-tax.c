/* exit-tax: what an armed hardware watchpoint adds to each exit to the
 * hypervisor, on this machine.
 *
 *   exit-tax [-c] [PAIRS]     (PAIRS default 200; -c: CSV)
 *
 * CPUID always leaves a virtual machine for the hypervisor (a VM exit),
 * and on bare metal costs some 100 ns. This times blocks of CPUID on one
 * CPU, in pairs: once with a write watchpoint of its own armed (a perf
 * hardware breakpoint on a variable nobody writes, as xid-rate's on
 * nextXid on -S) and once disarmed, and prints the median difference per
 * CPUID with its quartiles. A hypervisor that must save and restore the
 * guest's debug registers around each exit while one is armed shows it
 * here; every halt of an idle CPU, timer reprogramming and interrupt
 * between CPUs is such an exit too, which is how a watchpoint that never
 * fires costs a busy server.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PER_BLOCK 20000

static volatile uint64_t never_written;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per CPUID over one block */
static double cpuid_block(void)
{
	unsigned a, b, c, d;
	double t0 = now_ns();

	for (int i = 0; i < PER_BLOCK; i++)
		__cpuid(0, a, b, c, d);
	(void)a, (void)b, (void)c, (void)d;
	return (now_ns() - t0) / PER_BLOCK;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	int csv = argc > 1 && strcmp(argv[1], "-c") == 0;
	const char *pairs_arg = argc > 1 + csv ? argv[1 + csv] : "200";
	int pairs = atoi(pairs_arg);
	struct perf_event_attr attr;
	cpu_set_t one;
	double *diff, bare_sum = 0;
	int fd;

	if (pairs < 10) {
		fprintf(stderr, "exit-tax: PAIRS '%s': want 10 or more\n", pairs_arg);
		return 2;
	}
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)&never_written;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.sample_period = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("exit-tax: perf_event_open (a hardware breakpoint)");
		return 1;
	}
	diff = calloc(pairs, sizeof(*diff));
	if (!diff)
		return 1;
	cpuid_block();    /* warm up */
	for (int i = 0; i < pairs; i++) {
		double bare, armed;

		/* alternate which half comes first, so a drift cancels */
		if (i % 2) {
			bare = cpuid_block();
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
			armed = cpuid_block();
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		} else {
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
			armed = cpuid_block();
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
			bare = cpuid_block();
		}
		diff[i] = armed - bare;
		bare_sum += bare;
	}
	qsort(diff, pairs, sizeof(*diff), cmp_double);
	if (csv)
		printf("cpuid_ns,armed_extra_ns,armed_extra_q1_ns,armed_extra_q3_ns,pairs\n%.0f,%.0f,%.0f,%.0f,%d\n",
		       bare_sum / pairs, diff[pairs / 2], diff[pairs / 4], diff[3 * pairs / 4], pairs);
	else
		printf("CPUID %.0f ns bare; armed watchpoint adds %.0f ns (quartiles %.0f..%.0f), %d pairs of %d\n",
		       bare_sum / pairs, diff[pairs / 2], diff[pairs / 4], diff[3 * pairs / 4], pairs, PER_BLOCK);
	return 0;
}
