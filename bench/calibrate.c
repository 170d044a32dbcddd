/* calibrate: what one probe event costs on this host, for each kind of
 * probe pgbt's scripts use, so a script's overhead can be predicted
 * (events per transaction x cost per event) before it meets production.
 *
 *   calibrate [-c] [-q] [PROBE...]     (root: it runs bpftrace)
 *     -c   CSV instead of a table       -q  quick (shorter, noisier)
 *
 * Each probe is measured in two workloads, with a bpftrace program attached
 * that only counts (@n = count(), filtered to the process, as the scripts
 * filter to the server):
 *
 * hot loop: a tight loop fires the probe once per iteration; it runs bare,
 *   then traced, then bare again, three times (two with -q):
 *     cost = (t_traced - t_bare) per iteration / events per iteration.
 *   The cheapest the probe can be: everything it touches stays in cache.
 *
 * server: a client and a server process talk over pipes, one byte each way
 *   per request, as pgbench and a backend do (wake-ups across CPUs, the
 *   server sleeping between requests, a working set it touches per
 *   request). The server fires the probe once per request or, in
 *   alternating blocks of requests under the same attached tracer, does
 *   the same work without the event:
 *     cost = (round trip with the event - round trip without) per event,
 *   the median (and quartiles) over 120 pairs of 12 ms blocks: short
 *   blocks next to each other, since the time of a round trip drifts. On this project's VM an event costs
 *   several times more here than in the hot loop, and this is the cost a
 *   busy PostgreSQL backend pays.
 *
 * armed: the same client and server with the probe attached where it never
 *   fires (a watchpoint on a variable nobody writes, a USDT site nobody
 *   reaches, a function nobody calls) against no tracer: cost per round
 *   trip of merely having it attached (with a debug register in use the
 *   hypervisor may have to switch it at every VM exit).
 *
 * CALIB_PIN=same (both on one CPU) or 0 (not pinned) change where the
 * client and server run, for experiments.
 *
 * x86-64 only: the uprobe targets are written in assembly so their first
 * instruction is known, since that decides whether the kernel emulates it
 * or single-steps a copy of it (the latter costs a second trap).
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
#include <sys/mman.h>
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
	"calib_mov_first:\n\tmov %rdi, %rax\n\tret\n.size calib_mov_first, .-calib_mov_first\n"
	/* GetNewTransactionId's first instruction on most builds (push), and
	   on CET builds such as Debian 13's (endbr64); each returns a value */
	".globl calib_push_ret\n.type calib_push_ret, @function\n"
	"calib_push_ret:\n\tpush %rbp\n\tmov $3, %eax\n\tpop %rbp\n\tret\n.size calib_push_ret, .-calib_push_ret\n"
	".globl calib_endbr_ret\n.type calib_endbr_ret, @function\n"
	"calib_endbr_ret:\n\tendbr64\n\tpush %rbp\n\tmov $3, %eax\n\tpop %rbp\n\tret\n.size calib_endbr_ret, .-calib_endbr_ret\n"
	".globl calib_never_called\n.type calib_never_called, @function\n"
	"calib_never_called:\n\tnop\n\tret\n.size calib_never_called, .-calib_never_called\n");
void calib_nop_first(void);
void calib_push_first(void);
void calib_mov_first(void);
void calib_push_ret(void);
void calib_endbr_ret(void);
void calib_never_called(void);

volatile uint64_t calib_watched, calib_unwatched, calib_never_written;
static volatile int calib_never;    /* 0: guards the USDT site nobody reaches */
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
static void loop_push_ret(long n) { loop_call(calib_push_ret, n); }
static void loop_endbr_ret(long n) { loop_call(calib_endbr_ret, n); }

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

/* A counter in a shared mapping, as nextXid is in PostgreSQL's shared
 * memory (MAP_SHARED, inherited by the server process). */
static volatile uint64_t *shared_counter;

static void loop_write_shared(long n)
{
	for (long i = 0; i < n; i++)
		shared_counter[0] = (uint64_t)i;
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

/* Server side of the client/server workload: one event when ON, the same
 * work without the event when not (getpid for getppid: both syscalls). */
static void fire_nop(int on) { if (on) calib_nop_first(); }
static void fire_push(int on) { if (on) calib_push_first(); }
static void fire_mov(int on) { if (on) calib_mov_first(); }
static void fire_push_ret(int on) { if (on) calib_push_ret(); }
static void fire_endbr_ret(int on) { if (on) calib_endbr_ret(); }
static void fire_usdt(int on)
{
	if (on)
		DTRACE_PROBE(pgbt_calib, tick);
	if (calib_never)
		DTRACE_PROBE(pgbt_calib, never);
}
static void fire_write(int on)
{
	if (on)
		calib_watched++;
	else
		calib_unwatched++;
}
static void fire_write_shared(int on)
{
	if (on)
		shared_counter[0]++;
	else
		shared_counter[8]++;
}
static void fire_getppid(int on) { (void)(on ? getppid() : getpid()); }

struct probe {
	const char *name;
	const char *what;
	void (*loop)(long);      /* hot loop */
	void (*fire)(int on);    /* server workload; NULL: the switches themselves are the events */
	const char *spec;        /* bpftrace probe: %s = this binary, %lx = &calib_watched */
	const char *idle_spec;   /* the same kind of probe, attached where it never fires; NULL: none */
	const char *filter;      /* predicate, %d = the PID whose events count */
};

static const char PID_FILTER[] = "pid == %d";
static const struct probe probes[] = {
	{ "uprobe-nop", "uprobe, first instruction nop (emulated)", loop_nop, fire_nop,
	  "uprobe:%s:calib_nop_first", "uprobe:%s:calib_never_called", PID_FILTER },
	{ "uprobe-push", "uprobe, first instruction push %rbp (emulated on recent kernels)", loop_push, fire_push,
	  "uprobe:%s:calib_push_first", NULL, PID_FILTER },
	{ "uprobe-stepped", "uprobe, first instruction mov (single-stepped out of line)", loop_mov, fire_mov,
	  "uprobe:%s:calib_mov_first", NULL, PID_FILTER },
	{ "uretprobe", "uretprobe (return of a function whose entry is a nop)", loop_nop, fire_nop,
	  "uretprobe:%s:calib_nop_first", NULL, PID_FILTER },
	{ "uretprobe-push", "uretprobe, entry push %rbp (GetNewTransactionId's on most builds: xid-rate via=uprobe)",
	  loop_push_ret, fire_push_ret, "uretprobe:%s:calib_push_ret", NULL, PID_FILTER },
	{ "uprobe-endbr", "uprobe, first instruction endbr64 (CET builds, e.g. Debian 13's)",
	  loop_endbr_ret, fire_endbr_ret, "uprobe:%s:calib_endbr_ret", NULL, PID_FILTER },
	{ "uretprobe-endbr", "uretprobe, entry endbr64 (GetNewTransactionId's on CET builds)",
	  loop_endbr_ret, fire_endbr_ret, "uretprobe:%s:calib_endbr_ret", NULL, PID_FILTER },
	{ "usdt", "USDT probe (a nop with a .note.stapsdt entry)", loop_usdt, fire_usdt,
	  "usdt:%s:pgbt_calib:tick", "usdt:%s:pgbt_calib:never", PID_FILTER },
	{ "watchpoint", "hardware watchpoint, 8-byte write", loop_write, fire_write,
	  "watchpoint:0x%lx:8:w", "watchpoint:0x%lx:8:w", PID_FILTER },
	{ "watchpoint-shm", "hardware watchpoint, 8-byte write to a shared mapping (like nextXid)", loop_write_shared,
	  fire_write_shared, "watchpoint:0x%lx:8:w", NULL, PID_FILTER },
	{ "tp-syscall", "tracepoint syscalls:sys_enter_getppid", loop_getppid, fire_getppid,
	  "tracepoint:syscalls:sys_enter_getppid", NULL, PID_FILTER },
	{ "tp-sched-switch", "tracepoint sched:sched_switch (per off-CPU period)", loop_pingpong, NULL,
	  "tracepoint:sched:sched_switch", NULL, "pid == %d || curtask->real_parent->tgid == %d" },
	/* The kernel fills no record for a raw tracepoint. Needs bpftrace
	 * 0.18+: measured only when named. */
	{ "rawtp-sched-switch", "raw tracepoint sched_switch (per off-CPU period; bpftrace 0.18+)",
	  loop_pingpong, NULL, "rawtracepoint:sched_switch", NULL,
	  "pid == %d || curtask->real_parent->tgid == %d" },
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

/* The variable a watchpoint probe watches. */
static volatile uint64_t *watched_of(const struct probe *p)
{
	return p->loop == loop_write_shared ? shared_counter : &calib_watched;
}

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

/* Attaches SPEC_FMT (p->spec or p->idle_spec; a watchpoint goes on
 * WATCHED) counting the events of PID. */
static int tracer_start(const struct probe *p, const char *spec_fmt, volatile uint64_t *watched,
			pid_t pid, struct tracer *t)
{
	char spec[4200], filter[128], prog[4600];
	if (strncmp(spec_fmt, "watchpoint", 10) == 0)
		snprintf(spec, sizeof(spec), spec_fmt, (unsigned long)watched);
	else
		snprintf(spec, sizeof(spec), spec_fmt, self_path);
	snprintf(filter, sizeof(filter), p->filter, pid, pid);
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
		if (tracer_start(p, p->spec, watched_of(p), self_pid, &t) < 0)
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

/* The client/server workload: a server process answers one byte per
 * request and touches its working set each time, like a backend. */
#define WORKSET (256 * 1024)
static unsigned char workset[WORKSET];

/* Pins the calling process to CPU K of the ones it may use (the client
 * on the first, the server on the second, so every request wakes the other
 * CPU as pgbench's requests wake a backend); no-op with one CPU. */
static void pin_to(int k)
{
	cpu_set_t all, one;
	const char *mode = getenv("CALIB_PIN");
	if (mode && strcmp(mode, "0") == 0)
		return;
	if (mode && strcmp(mode, "same") == 0)
		k = 0;
	if (sched_getaffinity(0, sizeof(all), &all) || CPU_COUNT(&all) < 2)
		return;
	for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		if (seen++ == k) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
			return;
		}
	}
}

struct server {
	pid_t pid;
	int req, resp;   /* client ends of the two pipes */
	cpu_set_t cpus;  /* the client's CPUs before pinning */
};

static int server_start(const struct probe *p, struct server *sv)
{
	int req[2], resp[2];
	if (pipe(req) || pipe(resp)) {
		perror("calibrate: pipe");
		return -1;
	}
	sv->pid = fork();
	if (sv->pid < 0) {
		perror("calibrate: fork");
		return -1;
	}
	if (sv->pid == 0) {
		unsigned char c;
		pin_to(1);
		close(req[1]);
		close(resp[0]);
		while (read(req[0], &c, 1) == 1) {
			if (p->fire)
				p->fire(c == 'f');
			for (size_t i = 0; i < WORKSET; i += 64)
				workset[i]++;
			if (write(resp[1], &c, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(resp[1]);
	sched_getaffinity(0, sizeof(sv->cpus), &sv->cpus);
	pin_to(0);
	sv->req = req[1];
	sv->resp = resp[0];
	return 0;
}

static void server_stop(struct server *sv)
{
	close(sv->req);
	close(sv->resp);
	waitpid(sv->pid, NULL, 0);
	sched_setaffinity(0, sizeof(sv->cpus), &sv->cpus);
}

/* N round trips asking for command C ('f': fire, 'n': do not); returns
 * seconds per round trip. */
static double server_block(struct server *sv, char c, long n)
{
	double t0 = now_s();
	for (long i = 0; i < n; i++)
		if (write(sv->req, &c, 1) != 1 || read(sv->resp, &c, 1) != 1)
			break;
	return (now_s() - t0) / n;
}

/* Round trips that take about SECONDS. */
static long server_sized(struct server *sv, double seconds)
{
	double rt = server_block(sv, 'n', 500);
	long n = (long)(seconds / rt);
	return n < 100 ? 100 : n;
}

struct server_result {
	double cost_us[3], bare_us, events_per_rt;
	int ok;
};

/* Median and quartiles of V[0..N-1] (sorts V). */
static void quartiles(double *v, int n, double out[3])
{
	qsort(v, n, sizeof(double), cmp_double);
	out[0] = v[n / 2];
	out[1] = v[n / 4];
	out[2] = v[(3 * n) / 4];
}

/* Per event in the server: the tracer stays attached; blocks with and
 * without the event alternate (on off, off on, ...), each pair gives a
 * difference; median and quartiles. */
static int measure_server(const struct probe *p, struct server_result *r)
{
	int pairs = quick ? 40 : 120;
	double d[120], bare = 0;
	struct server sv;
	struct tracer t;

	memset(r, 0, sizeof(*r));
	if (server_start(p, &sv) < 0)
		return -1;
	long n = server_sized(&sv, 0.012);
	if (tracer_start(p, p->spec, watched_of(p), sv.pid, &t) < 0) {
		server_stop(&sv);
		return -1;
	}
	for (int i = 0; i < pairs; i++) {
		double on, off;
		if (i % 2) {
			off = server_block(&sv, 'n', n);
			on = server_block(&sv, 'f', n);
		} else {
			on = server_block(&sv, 'f', n);
			off = server_block(&sv, 'n', n);
		}
		d[i] = on - off;
		bare += off;
	}
	long events = tracer_stop(&t);
	server_stop(&sv);
	if (events <= 0) {
		fprintf(stderr, "calibrate: %s (server): the probe never fired (bpftrace said: %s)\n",
			p->name, t.buf);
		return -1;
	}
	r->events_per_rt = (double)events / ((double)pairs * n);
	for (int i = 0; i < pairs; i++)
		d[i] = d[i] / r->events_per_rt * 1e6;
	quartiles(d, pairs, r->cost_us);
	r->bare_us = bare / pairs * 1e6;
	r->ok = 1;
	return 0;
}

/* Attached against not attached, in the server workload: SPEC_FMT on
 * WATCHED (bare, attached, bare, attached, ... bare; each attached block
 * against the mean of the bare ones either side). Per round trip, or per
 * event when the probe fires (sched_switch: the round trips' own switches). */
static int measure_attached(const struct probe *p, const char *spec_fmt, volatile uint64_t *watched,
			    struct server_result *r)
{
	int cycles = quick ? 3 : 6;
	double d[16], bare_sum = 0;
	long events = 0;
	struct server sv;
	struct tracer t;

	memset(r, 0, sizeof(*r));
	if (server_start(p, &sv) < 0)
		return -1;
	long n = server_sized(&sv, quick ? 0.3 : 0.5);
	double before = server_block(&sv, 'n', n);
	for (int c = 0; c < cycles; c++) {
		if (tracer_start(p, spec_fmt, watched, sv.pid, &t) < 0) {
			server_stop(&sv);
			return -1;
		}
		double attached = server_block(&sv, 'n', n);
		long e = tracer_stop(&t);
		if (e > 0)
			events += e;
		double after = server_block(&sv, 'n', n);
		d[c] = attached - (before + after) / 2;
		bare_sum += before;
		before = after;
	}
	server_stop(&sv);
	r->events_per_rt = (double)events / ((double)cycles * n);
	double per = r->events_per_rt > 0.5 ? r->events_per_rt : 1;
	for (int c = 0; c < cycles; c++)
		d[c] = d[c] / per * 1e6;
	quartiles(d, cycles, r->cost_us);
	r->bare_us = bare_sum / cycles * 1e6;
	r->ok = 1;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: calibrate [-c] [-q] [PROBE...]\n"
		   "  cost per event: hot loop median [min..max]; server and armed median [quartiles]\n"
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
	shared_counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_counter == MAP_FAILED) {
		perror("calibrate: mmap");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	if (csv)
		printf("probe,cost_us,cost_us_min,cost_us_max,events_per_iter,bare_ns_per_iter,iterations,"
		       "server_us,server_us_min,server_us_max,server_rt_us,armed_us,armed_us_min,armed_us_max,what\n");
	else
		printf("%-16s %23s %31s %23s  %s\n", "PROBE", "HOT LOOP US/EVENT", "SERVER US/EVENT (RT US)",
		       "ARMED US/ROUND TRIP", "WHAT");
	for (size_t i = 0; i < NPROBES; i++) {
		const struct probe *p = &probes[i];
		int wanted = optind == argc && strncmp(p->spec, "rawtracepoint", 13) != 0;
		for (int a = optind; a < argc; a++)
			wanted |= strcmp(argv[a], p->name) == 0;
		if (!wanted)
			continue;
		struct result r;
		struct server_result sr = { 0 }, ar = { 0 };
		int hot_ok = measure(p, &r) == 0;
		if (p->fire)
			measure_server(p, &sr);
		else
			measure_attached(p, p->spec, watched_of(p), &sr);
		if (p->idle_spec)
			measure_attached(p, p->idle_spec, &calib_never_written, &ar);
		if (!hot_ok || !sr.ok || (p->idle_spec && !ar.ok))
			failed = 1;
		char hot[128] = ",,,,,", srv[96] = ",,,", arm[64] = ",,";
		if (hot_ok)
			snprintf(hot, sizeof(hot), "%.3f,%.3f,%.3f,%.2f,%.1f,%ld", r.cost_us[0], r.cost_us[1],
				 r.cost_us[2], r.events_per_iter, r.bare_ns, r.iters);
		if (sr.ok)
			snprintf(srv, sizeof(srv), "%.3f,%.3f,%.3f,%.1f", sr.cost_us[0], sr.cost_us[1],
				 sr.cost_us[2], sr.bare_us);
		if (ar.ok)
			snprintf(arm, sizeof(arm), "%.3f,%.3f,%.3f", ar.cost_us[0], ar.cost_us[1], ar.cost_us[2]);
		if (csv) {
			printf("%s,%s,%s,%s,\"%s\"\n", p->name, hot, srv, arm, p->what);
		} else {
			printf("%-16s", p->name);
			if (hot_ok)
				printf(" %7.2f [%6.2f..%6.2f]", r.cost_us[0], r.cost_us[1], r.cost_us[2]);
			else
				printf(" %23s", "failed");
			if (sr.ok)
				printf(" %7.2f [%6.2f..%6.2f] %7.1f", sr.cost_us[0], sr.cost_us[1], sr.cost_us[2], sr.bare_us);
			else
				printf(" %31s", "failed");
			if (ar.ok)
				printf(" %7.2f [%6.2f..%6.2f]", ar.cost_us[0], ar.cost_us[1], ar.cost_us[2]);
			else
				printf(" %23s", p->idle_spec ? "failed" : "-");
			printf("  %s\n", p->what);
		}
		fflush(stdout);
	}
	return failed;
}
