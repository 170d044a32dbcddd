/* calibrate: what one probe event costs on this host, for each kind of
 * probe pgbt's scripts use, so a script's overhead can be predicted
 * (events per transaction x cost per event) before it meets production.
 *
 *   calibrate [-c] [-q] [PROBE...]     (root: it runs bpftrace)
 *     -c   CSV instead of a table       -q  quick (shorter, noisier)
 *
 * For each probe, a tight loop that makes the probe fire once per
 * iteration runs bare, then with a bpftrace program attached that only
 * counts (@n = count(), filtered to this process, as the scripts filter to
 * the server), then bare again:
 *     cost per event = (t_traced - t_bare) per iteration / events per iteration
 * with events counted by bpftrace itself. Three such cycles (two with -q);
 * the median and the range are reported. x86-64 only: the uprobe targets
 * are written in assembly so their first instruction is known, since that
 * decides whether the kernel emulates it or single-steps a copy of it (the
 * latter costs a second trap).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "calibrate's uprobe targets are x86-64 assembly"
#endif

/* Uprobe targets: only the first instruction differs. */
__asm__(".text\n"
	".globl calib_nop_first\n.type calib_nop_first, @function\n"
	"calib_nop_first:\n\tnop\n\tret\n.size calib_nop_first, .-calib_nop_first\n"
	".globl calib_push_first\n.type calib_push_first, @function\n"
	"calib_push_first:\n\tpush %rbp\n\tpop %rbp\n\tret\n.size calib_push_first, .-calib_push_first\n"
	".globl calib_mov_first\n.type calib_mov_first, @function\n"
	"calib_mov_first:\n\tmov %rdi, %rax\n\tret\n.size calib_mov_first, .-calib_mov_first\n");
void calib_nop_first(void);
void calib_push_first(void);
void calib_mov_first(void);

volatile uint64_t calib_watched;
static char self_path[4096];
static pid_t self_pid;
static int quick;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Workloads: each runs n iterations, one event per iteration. */
static void loop_call(void (*f)(void), long n)
{
	for (long i = 0; i < n; i++)
		f();
}
static void loop_nop(long n) { loop_call(calib_nop_first, n); }
static void loop_push(long n) { loop_call(calib_push_first, n); }
static void loop_mov(long n) { loop_call(calib_mov_first, n); }

static void loop_usdt(long n)
{
	for (long i = 0; i < n; i++) {
		DTRACE_PROBE(pgbt_calib, tick);
		__asm__ volatile("" ::: "memory");
	}
}

static void loop_write(long n)
{
	for (long i = 0; i < n; i++)
		calib_watched = (uint64_t)i;
}

static void loop_getppid(long n)
{
	for (long i = 0; i < n; i++)
		(void)getppid();
}

/* Pipe ping-pong with a child: each round trip puts both processes off
 * CPU once, so sched_switch fires for each of them. Both run on one CPU:
 * the switches are then direct, with no idle CPU to wake, and steadier. */
static void loop_pingpong(long n)
{
	int to_child[2], to_parent[2];
	char c = 0;
	cpu_set_t one, all;
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	if (pipe(to_child) || pipe(to_parent)) {
		perror("calibrate: pipe");
		exit(1);
	}
	pid_t child = fork();
	if (child < 0) {
		perror("calibrate: fork");
		exit(1);
	}
	if (child == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		while (read(to_child[0], &c, 1) == 1 && write(to_parent[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	for (long i = 0; i < n; i++)
		if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
			break;
	close(to_child[1]);
	close(to_parent[0]);
	waitpid(child, NULL, 0);
	sched_setaffinity(0, sizeof(all), &all);
}

struct probe {
	const char *name;
	const char *what;
	void (*loop)(long);
	const char *spec;     /* bpftrace probe, %s = this binary */
	const char *filter;   /* predicate, %d = this PID */
};

static const char PID_FILTER[] = "pid == %d";
static const struct probe probes[] = {
	{ "uprobe-nop", "uprobe, first instruction nop (emulated)", loop_nop,
	  "uprobe:%s:calib_nop_first", PID_FILTER },
	{ "uprobe-push", "uprobe, first instruction push %rbp (emulated on recent kernels)", loop_push,
	  "uprobe:%s:calib_push_first", PID_FILTER },
	{ "uprobe-stepped", "uprobe, first instruction mov (single-stepped out of line)", loop_mov,
	  "uprobe:%s:calib_mov_first", PID_FILTER },
	{ "uretprobe", "uretprobe (return of a function whose entry is a nop)", loop_nop,
	  "uretprobe:%s:calib_nop_first", PID_FILTER },
	{ "usdt", "USDT probe (a nop with a .note.stapsdt entry)", loop_usdt,
	  "usdt:%s:pgbt_calib:tick", PID_FILTER },
	{ "watchpoint", "hardware watchpoint, 8-byte write", loop_write,
	  "watchpoint:0x%lx:8:w", PID_FILTER },
	{ "tp-syscall", "tracepoint syscalls:sys_enter_getppid", loop_getppid,
	  "tracepoint:syscalls:sys_enter_getppid", PID_FILTER },
	{ "tp-sched-switch", "tracepoint sched:sched_switch (per off-CPU period)", loop_pingpong,
	  "tracepoint:sched:sched_switch", "pid == %d || curtask->real_parent->tgid == %d" },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

struct tracer {
	pid_t pid;
	int out;          /* bpftrace's stdout and stderr */
	char buf[8192];
	size_t len;
};

/* Reads bpftrace's output into t->buf until NEEDLE shows, EOF or timeout. */
static int read_until(struct tracer *t, const char *needle, int timeout_ms)
{
	double end = now_s() + timeout_ms / 1000.0;
	while (!(needle && strstr(t->buf, needle))) {
		int left = (int)((end - now_s()) * 1000);
		if (left <= 0)
			return -1;
		struct pollfd p = { .fd = t->out, .events = POLLIN };
		if (poll(&p, 1, left) <= 0)
			continue;
		if (t->len + 1 >= sizeof(t->buf))  /* keep the tail */
			t->len = 0;
		ssize_t r = read(t->out, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
		if (r <= 0)
			return needle ? -1 : 0;
		t->len += (size_t)r;
		t->buf[t->len] = '\0';
	}
	return 0;
}

static int tracer_start(const struct probe *p, struct tracer *t)
{
	char spec[4200], filter[128], prog[4600];
	if (strncmp(p->spec, "watchpoint", 10) == 0)
		snprintf(spec, sizeof(spec), p->spec, (unsigned long)&calib_watched);
	else
		snprintf(spec, sizeof(spec), p->spec, self_path);
	snprintf(filter, sizeof(filter), p->filter, self_pid, self_pid);
	snprintf(prog, sizeof(prog), "%s /%s/ { @n = count(); }", spec, filter);

	int fd[2];
	if (pipe(fd)) {
		perror("calibrate: pipe");
		return -1;
	}
	memset(t, 0, sizeof(*t));
	t->pid = fork();
	if (t->pid < 0) {
		perror("calibrate: fork");
		return -1;
	}
	if (t->pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execlp("bpftrace", "bpftrace", "-e", prog, (char *)NULL);
		fprintf(stderr, "exec bpftrace: %s\n", strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	t->out = fd[0];
	if (read_until(t, "Attaching", 60000) < 0) {
		fprintf(stderr, "calibrate: %s: bpftrace did not attach: %s\n", p->name, t->buf);
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		close(t->out);
		return -1;
	}
	sleep(1);  /* "Attaching" comes before every probe is live */
	return 0;
}

/* Stops bpftrace and returns the count it printed (-1 if none). */
static long tracer_stop(struct tracer *t)
{
	kill(t->pid, SIGINT);
	t->len = 0;
	t->buf[0] = '\0';
	read_until(t, NULL, 20000);
	waitpid(t->pid, NULL, 0);
	close(t->out);
	const char *at = strstr(t->buf, "@n: ");
	return at ? strtol(at + 4, NULL, 10) : -1;
}

static double timed(void (*loop)(long), long n)
{
	double t0 = now_s();
	loop(n);
	return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result {
	double cost_us[3], bare_ns, events_per_iter;
	long iters;
	int cycles;
};

/* Bare, traced, bare, traced, ... bare: each traced run is compared with
 * the mean of the bare runs either side. */
static int measure(const struct probe *p, struct result *r)
{
	double target = quick ? 0.2 : 0.5, costs[3], bare_sum = 0;
	int cycles = quick ? 2 : 3;
	long n = 0;
	struct tracer t;

	memset(r, 0, sizeof(*r));
	for (int c = 0; c < cycles; c++) {
		if (tracer_start(p, &t) < 0)
			return -1;
		double traced;
		if (n == 0) {  /* first traced run: as many iterations as fit the target */
			double t0 = now_s();
			long chunk = 200;
			while (now_s() - t0 < target) {
				p->loop(chunk);
				n += chunk;
			}
			traced = now_s() - t0;
		} else {
			traced = timed(p->loop, n);
		}
		long events = tracer_stop(&t);
		if (events <= 0) {
			fprintf(stderr, "calibrate: %s: the probe never fired (bpftrace said: %s)\n",
				p->name, t.buf);
			return -1;
		}
		double before = timed(p->loop, n), after = timed(p->loop, n);
		double bare = (before + after) / 2;
		bare_sum += bare;
		double per_iter = (double)events / n;
		costs[c] = (traced - bare) / n / per_iter * 1e6;
		r->events_per_iter = per_iter;
	}
	qsort(costs, cycles, sizeof(double), cmp_double);
	r->cost_us[0] = costs[cycles / 2];  /* median (upper one of two) */
	r->cost_us[1] = costs[0];
	r->cost_us[2] = costs[cycles - 1];
	r->bare_ns = bare_sum / cycles / n * 1e9;
	r->iters = n;
	r->cycles = cycles;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: calibrate [-c] [-q] [PROBE...]\n"
		   "  -c  CSV output   -q  quick (shorter, noisier)\n"
		   "probes:");
	for (size_t i = 0; i < NPROBES; i++)
		fprintf(f, " %s", probes[i].name);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	int csv = 0, opt, failed = 0;
	while ((opt = getopt(argc, argv, "cqh")) != -1) {
		switch (opt) {
		case 'c': csv = 1; break;
		case 'q': quick = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		size_t k = 0;
		while (k < NPROBES && strcmp(argv[i], probes[k].name) != 0)
			k++;
		if (k == NPROBES) {
			fprintf(stderr, "calibrate: unknown probe '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "calibrate: run as root (it attaches bpftrace)\n");
		return 1;
	}
	ssize_t len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (len <= 0) {
		perror("calibrate: /proc/self/exe");
		return 1;
	}
	self_path[len] = '\0';
	self_pid = getpid();
	signal(SIGPIPE, SIG_IGN);

	if (csv)
		printf("probe,cost_us,cost_us_min,cost_us_max,events_per_iter,bare_ns_per_iter,iterations,what\n");
	else
		printf("%-16s %10s %19s %8s %9s  %s\n", "PROBE", "US/EVENT", "RANGE",
		       "EV/ITER", "BARE NS", "WHAT");
	for (size_t i = 0; i < NPROBES; i++) {
		const struct probe *p = &probes[i];
		int wanted = optind == argc;
		for (int a = optind; a < argc; a++)
			wanted |= strcmp(argv[a], p->name) == 0;
		if (!wanted)
			continue;
		struct result r;
		if (measure(p, &r) < 0) {
			failed = 1;
			if (csv)
				printf("%s,,,,,,,\"%s\"\n", p->name, p->what);
			else
				printf("%-16s %10s %19s %8s %9s  %s\n", p->name, "failed", "", "", "", p->what);
			fflush(stdout);
			continue;
		}
		if (csv)
			printf("%s,%.3f,%.3f,%.3f,%.2f,%.1f,%ld,\"%s\"\n", p->name, r.cost_us[0],
			       r.cost_us[1], r.cost_us[2], r.events_per_iter, r.bare_ns, r.iters, p->what);
		else
			printf("%-16s %10.3f  [%7.3f, %7.3f] %8.2f %9.1f  %s\n", p->name, r.cost_us[0],
			       r.cost_us[1], r.cost_us[2], r.events_per_iter, r.bare_ns, p->what);
		fflush(stdout);
	}
	return failed;
}
