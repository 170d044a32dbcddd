/* A write watchpoint on our own variable, through perf_event_open, as
 * bpftrace sets its watchpoint probes: if ours never fires, theirs will not. */
#include "hwbp.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITES 4

static volatile uint64_t watched;

int pgbt_hw_watchpoints_fire(struct pgbt_err *err)
{
	struct perf_event_attr attr;
	uint64_t hits = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)&watched;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return pgbt_fail(err, "could not test this machine's hardware watchpoints "
				 "(perf_event_open: %s)", strerror(errno));
	for (int i = 0; i < WRITES; i++)
		watched = watched + 1;
	if (read(fd, &hits, sizeof(hits)) != (ssize_t)sizeof(hits)) {
		int e = errno;
		close(fd);
		return pgbt_fail(err, "could not test this machine's hardware watchpoints "
				 "(reading the count: %s)", strerror(e));
	}
	close(fd);
	if (hits == 0) {
		pgbt_fail(err, "this machine's hardware watchpoints do not fire (a test "
			  "watchpoint saw 0 of %d writes; some hypervisors do not pass the "
			  "CPU's debug registers through)", WRITES);
		return 0;
	}
	return 1;
}
