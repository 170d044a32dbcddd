/* Tests for lib/found/proc.c against a live fixture (build/fixtures/shm_tree: a
 * process with a shared anonymous region, a pointer to it in a global, and
 * two children) and against a fake /proc tree (PGBT_PROC_ROOT) for maps
 * parsing and PostgreSQL process-tree discovery. Run from the repo root. */
#include "check.h"
#include "lib/found/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIXTURE_MAGIC 0x7067627473686d31ULL

struct fixture {
	char path[PATH_MAX];
	pid_t pid, children[2];
	uint64_t region;
	size_t size;
};

static char tmpdir[PATH_MAX];

/* ---- helpers ---- */

static const char *fixtures_dir(void)
{
	const char *dir = getenv("PGBT_FIXTURES");

	return dir && *dir ? dir : "build/fixtures";
}

static unsigned char pattern_byte(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* snprintf into an array, dying on truncation (test paths are short). */
#define FMT(buf, ...) format((buf), sizeof(buf), __VA_ARGS__)

__attribute__((format(printf, 3, 4)))
static void format(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "test_proc: string too long: %s\n", fmt);
		exit(2);
	}
}

/* Starts shm_tree with cwd as its working directory and reads its line. */
static void fixture_start(struct fixture *f, const char *cwd)
{
	char line[256], real[PATH_MAX];
	int fds[2], pid, c0, c1;
	unsigned long size;
	FILE *out;

	FMT(f->path, "%s/shm_tree", fixtures_dir());
	if (!realpath(f->path, real))
		die(f->path);
	FMT(f->path, "%s", real);
	if (pipe(fds) < 0)
		die("pipe");
	f->pid = fork();
	if (f->pid < 0)
		die("fork");
	if (f->pid == 0) {
		if (chdir(cwd) < 0 || dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		close(fds[0]);
		close(fds[1]);
		execl(f->path, f->path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	if (!out || !fgets(line, sizeof(line), out) ||
	    sscanf(line, "pid=%d region=%" SCNx64 " size=%lu child=%d child=%d", &pid,
		   &f->region, &size, &c0, &c1) != 5 || pid != f->pid) {
		fprintf(stderr, "shm_tree did not start (line '%s')\n", line);
		exit(2);
	}
	fclose(out);
	f->size = size;
	f->children[0] = c0;
	f->children[1] = c1;
}

/* Kills the fixture and reaps it and its children, which this process
 * inherits as a subreaper (they die with their parent). */
static void fixture_stop(struct fixture *f)
{
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	for (int i = 0; i < 2; i++)
		waitpid(f->children[i], NULL, 0);
}

/* A symbol's value from `nm` (lib/found/elfimg.c is tested elsewhere). */
static uint64_t nm_symbol(const char *path, const char *name)
{
	char cmd[PATH_MAX + 32], line[512], sym[256], type;
	uint64_t value, found = 0;
	FILE *p;

	FMT(cmd, "nm '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		die("popen nm");
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%" SCNx64 " %c %255s", &value, &type, sym) == 3 &&
		    strcmp(sym, name) == 0)
			found = value;
	pclose(p);
	return found;
}

/* The state letter of /proc/PID/stat, read here independently. */
static char state_of(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *fp;
	size_t n;

	FMT(path, "/proc/%d/stat", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren ? paren[2] : 0;
}

static void wait_for_zombie(pid_t pid)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 500 && state_of(pid) != 'Z'; i++)
		nanosleep(&ts, NULL);
}

/* A child that sleeps until killed. */
static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* The PID of a child that has already been reaped: certainly not running
 * (short of PID reuse within the test). */
static pid_t reaped_pid(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static pid_t pid_beyond_max(void)
{
	FILE *fp = fopen("/proc/sys/kernel/pid_max", "r");
	long max = 4194304;

	if (fp) {
		if (fscanf(fp, "%ld", &max) != 1)
			max = 4194304;
		fclose(fp);
	}
	return (pid_t)(max + 1);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp || fputs(text, fp) < 0 || fclose(fp) != 0)
		die(path);
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die(path);
}

static void make_link(const char *target, const char *path)
{
	if (symlink(target, path) < 0)
		die(path);
}

static void expect_msg(int rc, const struct pgbt_err *err, const char *want)
{
	CHECK(rc == -1);
	CHECK_STR(err->msg, want);
}

/* ---- live fixture ---- */

static void test_maps(const struct fixture *f)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_err err = { .msg = "" };
	const struct pgbt_map *m;
	bool stack = false, exe = false;

	CHECK(pgbt_proc_maps(f->pid, &maps, &err) == 0);
	CHECK(maps.n > 5);
	m = pgbt_maps_find(&maps, f->region);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->perms, "rw-s");
		CHECK_STR(m->path, "/dev/zero (deleted)");
		CHECK_EQ_U(m->start, f->region);
		CHECK_EQ_U(m->end - m->start, f->size);
	}
	CHECK(pgbt_maps_find(&maps, f->region + f->size - 1) == m);
	CHECK(pgbt_maps_find(&maps, 0) == NULL);
	CHECK(pgbt_maps_find(&maps, UINT64_MAX - 1) == NULL);
	for (size_t i = 0; i < maps.n; i++) {
		stack |= strcmp(maps.maps[i].path, "[stack]") == 0;
		exe |= strcmp(maps.maps[i].path, f->path) == 0;
		if (i > 0)
			CHECK(maps.maps[i].start >= maps.maps[i - 1].end);
	}
	CHECK(stack);
	CHECK(exe);
	pgbt_proc_maps_free(&maps);
	CHECK(maps.maps == NULL && maps.n == 0);
}

static void test_read_region(const struct fixture *f)
{
	struct pgbt_err err = { .msg = "" };
	unsigned char *buf = malloc(f->size);
	size_t bad = 0;

	CHECK(pgbt_proc_read(f->pid, f->region, buf, f->size, &err) == 0);
	for (size_t i = 0; i < f->size; i++)
		bad += buf[i] != pattern_byte(i);
	CHECK_EQ_U(bad, 0);
	/* A child shares the region, as backends share PostgreSQL's. */
	CHECK(pgbt_proc_read(f->children[1], f->region + 100, buf, 4, &err) == 0);
	CHECK(buf[0] == pattern_byte(100) && buf[3] == pattern_byte(103));
	CHECK(pgbt_proc_read(f->pid, f->region, buf, 0, &err) == 0);
	free(buf);
}

/* The global pointer, found through the load bias and nm's symbol value,
 * holds the region's address, as a shared-memory pointer in PostgreSQL. */
static void test_read_globals(const struct fixture *f)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_err err = { .msg = "" };
	uint64_t bias = 0, sym_region, sym_magic, value = 0;
	struct stat st;

	sym_region = nm_symbol(f->path, "shm_region");
	sym_magic = nm_symbol(f->path, "shm_magic");
	CHECK(sym_region != 0 && sym_magic != 0);
	CHECK(stat(f->path, &st) == 0);
	CHECK(pgbt_proc_maps(f->pid, &maps, &err) == 0);
	/* A PIE's lowest PT_LOAD has p_vaddr == p_offset == 0. */
	CHECK(pgbt_maps_load_bias(&maps, major(st.st_dev), minor(st.st_dev), st.st_ino,
				  0, &bias, &err) == 0);
	CHECK(bias != 0);
	CHECK(pgbt_proc_read(f->pid, bias + sym_region, &value, sizeof(value), &err) == 0);
	CHECK_EQ_U(value, f->region);
	CHECK(pgbt_proc_read(f->pid, bias + sym_magic, &value, sizeof(value), &err) == 0);
	CHECK_EQ_U(value, FIXTURE_MAGIC);
	pgbt_proc_maps_free(&maps);
}

/* Reads that fault: address 0, a kernel address, and a read running past
 * the end of a mapping into a hole. */
static void test_read_unmapped(const struct fixture *f)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_err err = { .msg = "" };
	char want[256], buf[8];
	uint64_t edge = 0;

	FMT(want, "process %d: cannot read 8 bytes at 0x0 (not mapped)",
		 (int)f->pid);
	expect_msg(pgbt_proc_read(f->pid, 0, buf, 8, &err), &err, want);
	FMT(want,
		 "process %d: cannot read 8 bytes at 0xffff800000001000 (not mapped)", (int)f->pid);
	expect_msg(pgbt_proc_read(f->pid, 0xffff800000001000ULL, buf, 8, &err), &err, want);

	CHECK(pgbt_proc_maps(f->pid, &maps, &err) == 0);
	for (size_t i = 0; i + 1 < maps.n && !edge; i++)
		if (maps.maps[i].perms[0] == 'r' && maps.maps[i].end != maps.maps[i + 1].start)
			edge = maps.maps[i].end - 4;
	CHECK(edge != 0);
	FMT(want, "process %d: cannot read 8 bytes at 0x%" PRIx64
		 " (not mapped)", (int)f->pid, edge);
	expect_msg(pgbt_proc_read(f->pid, edge, buf, 8, &err), &err, want);
	CHECK(pgbt_proc_read(f->pid, edge, buf, 4, &err) == 0);
	pgbt_proc_maps_free(&maps);
}

static void test_no_such_process(void)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_err err = { .msg = "" };
	pid_t pid = pid_beyond_max(), ppid;
	char want[128], buf[PATH_MAX];

	FMT(want, "process %d: no such process", (int)pid);
	CHECK(!pgbt_proc_exists(pid));
	CHECK(!pgbt_proc_exists(0));
	expect_msg(pgbt_proc_read(pid, 0x1000, buf, 8, &err), &err, want);
	CHECK(err.code == PGBT_EGONE);
	expect_msg(pgbt_proc_maps(pid, &maps, &err), &err, want);
	expect_msg(pgbt_proc_ppid(pid, &ppid, &err), &err, want);
	expect_msg(pgbt_proc_exe(pid, buf, sizeof(buf), &err), &err, want);
	expect_msg(pgbt_proc_cwd(pid, buf, sizeof(buf), &err), &err, want);
	CHECK(!pgbt_proc_is_postgres(pid));

	pid = reaped_pid();
	FMT(want, "process %d: no such process", (int)pid);
	expect_msg(pgbt_proc_read(pid, 0x1000, buf, 8, &err), &err, want);
}

/* A process seen once and then gone: reaped, or a zombie (whose memory is
 * gone though its /proc entry stays). */
static void test_exited(const struct fixture *f)
{
	struct pgbt_err err = { .msg = "" };
	pid_t pid = spawn_sleeper(), ppid;
	char want[128];
	uint64_t value;

	CHECK(pgbt_proc_ppid(pid, &ppid, &err) == 0);
	CHECK(pgbt_proc_exists(pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	FMT(want, "process %d: exited while being resolved", (int)pid);
	expect_msg(pgbt_proc_read(pid, f->region, &value, sizeof(value), &err), &err, want);
	expect_msg(pgbt_proc_ppid(pid, &ppid, &err), &err, want);
	CHECK(!pgbt_proc_exists(pid));

	/* The fixture does not reap its children: the first stays a zombie. */
	pid = f->children[0];
	CHECK(pgbt_proc_read(pid, f->region, &value, sizeof(value), &err) == 0);
	kill(pid, SIGKILL);
	wait_for_zombie(pid);
	CHECK(state_of(pid) == 'Z');
	CHECK(!pgbt_proc_exists(pid));
	FMT(want, "process %d: exited while being resolved", (int)pid);
	expect_msg(pgbt_proc_read(pid, f->region, &value, sizeof(value), &err), &err, want);
}

static void test_identity(const struct fixture *f, const char *cwd)
{
	struct pgbt_err err = { .msg = "" };
	char buf[PATH_MAX], want[PATH_MAX + 128];
	unsigned maj = 0, min = 0;
	uint64_t ino = 0;
	pid_t ppid = 0;
	struct stat st;

	CHECK(pgbt_proc_exists(f->pid));
	for (int i = 0; i < 2; i++) {
		CHECK(pgbt_proc_ppid(f->children[i], &ppid, &err) == 0);
		CHECK_EQ_U(ppid, f->pid);
	}
	CHECK(pgbt_proc_ppid(f->pid, &ppid, &err) == 0);
	CHECK_EQ_U(ppid, getpid());

	CHECK(pgbt_proc_exe(f->pid, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, f->path);
	CHECK(pgbt_proc_exe_path(f->pid, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, f->path);
	FMT(want, "process %d: /proc/%d/exe is longer than 3 bytes",
		 (int)f->pid, (int)f->pid);
	expect_msg(pgbt_proc_exe(f->pid, buf, 4, &err), &err, want);
	CHECK(stat(f->path, &st) == 0);
	CHECK(pgbt_proc_exe_id(f->pid, &maj, &min, &ino, &err) == 0);
	CHECK_EQ_U(maj, major(st.st_dev));
	CHECK_EQ_U(min, minor(st.st_dev));
	CHECK_EQ_U(ino, st.st_ino);

	CHECK(pgbt_proc_cwd(f->pid, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, cwd);
	CHECK(pgbt_proc_cwd_path(f->pid, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, cwd);    /* our own view: the path itself */

	CHECK(!pgbt_proc_is_postgres(f->pid));
	FMT(want,
		 "process %d: not a PostgreSQL process (its executable is %s)", (int)f->pid,
		 f->path);
	expect_msg(pgbt_proc_postmaster_of(f->pid, &ppid, &err), &err, want);
}

/* An unprivileged user cannot read a root process's memory. The child
 * reports its error message through a pipe. */
static void test_permission(const struct fixture *f)
{
	char got[sizeof(((struct pgbt_err *)0)->msg)] = "", want[256];
	int fds[2];
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0) {
		check_skip("permission test: needs root");
		return;
	}
	if (pipe(fds) < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct pgbt_err err = { .msg = "" };
		uint64_t value;

		close(fds[0]);
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			FMT(err.msg, "cannot drop to nobody");
		else if (pgbt_proc_read(f->pid, f->region, &value, sizeof(value), &err) == 0)
			FMT(err.msg, "read succeeded");
		if (write(fds[1], err.msg, strlen(err.msg)) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	waitpid(pid, NULL, 0);
	FMT(want,
		 "process %d: permission denied reading /proc/%d/mem (run as root, or check "
		 "ptrace_scope / the process's owner)", (int)f->pid, (int)f->pid);
	CHECK_STR(got, want);
}

/* tmpdir/dd is the fixture's working directory: its "data directory". */
static void test_datadir(const struct fixture *f, const char *datadir)
{
	struct pgbt_err err = { .msg = "" };
	char want[PATH_MAX * 2], pidfile[PATH_MAX], text[64], cwd[PATH_MAX], alias[PATH_MAX];
	pid_t pid = 0, dead = reaped_pid();

	FMT(pidfile, "%s/postmaster.pid", datadir);
	FMT(want, "%s: no postmaster.pid (server not running?)", datadir);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);

	FMT(want, "%s/missing: cannot access data directory: %s",
		 tmpdir, strerror(ENOENT));
	FMT(alias, "%s/missing", tmpdir);
	expect_msg(pgbt_datadir_postmaster(alias, &pid, &err), &err, want);

	write_file(pidfile, "12x\n/data\n");
	FMT(want,
		 "%s: postmaster.pid does not start with a PID (first line '12x')", datadir);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);
	write_file(pidfile, " 12\n");
	CHECK(pgbt_datadir_postmaster(datadir, &pid, &err) == -1);
	write_file(pidfile, "");
	FMT(want,
		 "%s: postmaster.pid does not start with a PID (first line '')", datadir);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);
	write_file(pidfile, "99999999999999999999\n");
	CHECK(pgbt_datadir_postmaster(datadir, &pid, &err) == -1);
	write_file(pidfile, "-4242\n");
	FMT(want, "%s: postmaster.pid names PID 4242, a single-user backend, not a postmaster",
	    datadir);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);
	write_file(pidfile, "--4242\n");
	CHECK(pgbt_datadir_postmaster(datadir, &pid, &err) == -1);
	CHECK(strstr(err.msg, "does not start with a PID") != NULL);

	FMT(text, "%d\n", (int)dead);
	write_file(pidfile, text);
	FMT(want, "%s: postmaster.pid names PID %d, which is not running",
		 datadir, (int)dead);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);

	FMT(text, "%d\n", (int)getpid());
	write_file(pidfile, text);
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd");
	FMT(want,
		 "%s: postmaster.pid names PID %d, which is not this data directory's "
		 "postmaster (its working directory is %s)", datadir, (int)getpid(), cwd);
	expect_msg(pgbt_datadir_postmaster(datadir, &pid, &err), &err, want);

	/* The first line only; the rest is PostgreSQL's. No trailing newline
	 * is fine too. A symlink to the data directory names it as well. */
	FMT(text, "%d\n%s\n1700000000\n", (int)f->pid, datadir);
	write_file(pidfile, text);
	CHECK(pgbt_datadir_postmaster(datadir, &pid, &err) == 0);
	CHECK_EQ_U(pid, f->pid);
	FMT(text, "%d", (int)f->pid);
	write_file(pidfile, text);
	pid = 0;
	CHECK(pgbt_datadir_postmaster(datadir, &pid, &err) == 0);
	CHECK_EQ_U(pid, f->pid);
	FMT(alias, "%s/alias", tmpdir);
	make_link(datadir, alias);
	pid = 0;
	CHECK(pgbt_datadir_postmaster(alias, &pid, &err) == 0);
	CHECK_EQ_U(pid, f->pid);
}

/* ---- fake /proc tree ---- */

/* A process directory: stat with the given comm, state and ppid; exe and
 * cwd links when given. */
static void fake_proc(const char *root, int pid, const char *comm, char state, int ppid,
		      const char *exe, const char *cwd)
{
	char path[PATH_MAX], text[256];

	FMT(path, "%s/%d", root, pid);
	make_dir(path);
	FMT(path, "%s/%d/stat", root, pid);
	FMT(text, "%d (%s) %c %d %d %d 0 -1 4194560 100 0 0 0\n", pid, comm,
		 state, ppid, pid, pid);
	write_file(path, text);
	FMT(path, "%s/%d/exe", root, pid);
	if (exe)
		make_link(exe, path);
	FMT(path, "%s/%d/cwd", root, pid);
	if (cwd)
		make_link(cwd, path);
	FMT(path, "%s/%d/root", root, pid);
	make_link("/", path);
}

static const char fake_maps[] =
	"55d0c0000000-55d0c0001000 r--p 00000000 fe:01 1234                       /opt/pg dir/bin/postgres\n"
	"55d0c0001000-55d0c0005000 r-xp 00001000 fe:01 1234                       /opt/pg dir/bin/postgres\n"
	"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000100000 rw-s 00000000 00:01 42                         /dev/zero (deleted)\n"
	"7f0000200000-7f0000201000 rw-p 00000000 00:00 0 \n"
	"7f0000300000-7f0000301000 r--p 00002000 103:02 9876543210                /lib/x  y.so\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n";

static void test_fake_maps(const char *root)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_err err = { .msg = "" };
	char path[PATH_MAX];
	uint64_t bias = 0;
	const struct pgbt_map *m;

	FMT(path, "%s/100/maps", root);
	write_file(path, fake_maps);
	FMT(path, "%s/101/maps", root);
	write_file(path, "55d0c0000000-55d0c0001000 r--p 00000000 fe:01 1234 /x\ngarbage\n");

	CHECK(pgbt_proc_maps(100, &maps, &err) == 0);
	CHECK_EQ_U(maps.n, 7);
	if (maps.n == 7) {
		m = &maps.maps[0];
		CHECK_EQ_U(m->start, 0x55d0c0000000ULL);
		CHECK_EQ_U(m->end, 0x55d0c0001000ULL);
		CHECK_STR(m->perms, "r--p");
		CHECK_EQ_U(m->dev_major, 0xfe);
		CHECK_EQ_U(m->dev_minor, 1);
		CHECK_EQ_U(m->inode, 1234);
		CHECK_STR(m->path, "/opt/pg dir/bin/postgres");
		CHECK_EQ_U(maps.maps[1].offset, 0x1000);
		CHECK_STR(maps.maps[2].path, "[heap]");
		CHECK_STR(maps.maps[3].perms, "rw-s");
		CHECK_STR(maps.maps[3].path, "/dev/zero (deleted)");
		CHECK_STR(maps.maps[4].path, "");
		CHECK_EQ_U(maps.maps[4].inode, 0);
		CHECK_EQ_U(maps.maps[5].dev_major, 0x103);
		CHECK_EQ_U(maps.maps[5].inode, 9876543210ULL);
		CHECK_STR(maps.maps[5].path, "/lib/x  y.so");
		CHECK_STR(maps.maps[6].path, "[stack]");
	}
	m = pgbt_maps_find(&maps, 0x7f0000000000ULL + 5);
	CHECK(m && strcmp(m->path, "/dev/zero (deleted)") == 0);
	CHECK(pgbt_maps_find(&maps, 0x7f0000100000ULL) == NULL);
	CHECK(pgbt_maps_find(&maps, 0x7ffc00020fffULL) == &maps.maps[6]);
	CHECK(pgbt_maps_find(&maps, 0x55d0c0000000ULL) == &maps.maps[0]);
	CHECK(pgbt_maps_find(&maps, 0x55d0bfffffffULL) == NULL);

	CHECK(pgbt_maps_load_bias(&maps, 0xfe, 1, 1234, 0, &bias, &err) == 0);
	CHECK_EQ_U(bias, 0x55d0c0000000ULL);
	CHECK(pgbt_maps_load_bias(&maps, 0x103, 2, 9876543210ULL, 0x400000, &bias, &err) == 0);
	CHECK_EQ_U(bias, 0x7f0000300000ULL - 0x2000 - 0x400000);
	expect_msg(pgbt_maps_load_bias(&maps, 0xfe, 1, 999, 0, &bias, &err), &err,
		   "file with device fe:01 inode 999: not mapped in the process");
	pgbt_proc_maps_free(&maps);

	expect_msg(pgbt_proc_maps(101, &maps, &err), &err,
		   "process 101: cannot parse maps line 2: 'garbage'");
}

/* 1 init; 100 a postmaster (pg) with backends 101 and 102 (102 under 101);
 * 200 a postmaster of another build (pg2, named "postmaster") under 100;
 * 300 not postgres; 301 a zombie; 400 a postmaster in a container (own
 * root); 500 on a deleted binary. */
static void test_fake_tree(const char *root)
{
	char pg[PATH_MAX], pg2[PATH_MAX], init[PATH_MAX], data[PATH_MAX], path[PATH_MAX];
	char buf[PATH_MAX], want[PATH_MAX * 2];
	struct pgbt_err err = { .msg = "" };
	pid_t *pms = NULL, pid = 0;
	size_t n = 0;

	FMT(path, "%s/bin", tmpdir);
	make_dir(path);
	FMT(pg, "%s/bin/postgres", tmpdir);
	FMT(pg2, "%s/bin/postmaster", tmpdir);
	FMT(init, "%s/bin/init", tmpdir);
	write_file(pg, "pg");
	write_file(pg2, "pg2");
	write_file(init, "init");
	FMT(data, "%s/data", tmpdir);
	make_dir(data);
	FMT(path, "%s/self", root);
	make_dir(path);
	FMT(path, "%s/self/root", root);
	make_link("/", path);
	FMT(path, "%s/notapid", root);
	make_dir(path);

	fake_proc(root, 1, "init", 'S', 0, init, "/");
	fake_proc(root, 100, "postgres", 'S', 1, pg, data);
	fake_proc(root, 101, "postgres: a) b (c)", 'S', 100, pg, data);
	fake_proc(root, 102, "postgres", 'R', 101, pg, data);
	fake_proc(root, 200, "postmaster", 'S', 100, pg2, "/");
	fake_proc(root, 300, "sh", 'S', 1, init, "/");
	fake_proc(root, 301, "postgres", 'Z', 100, NULL, NULL);
	fake_proc(root, 400, "postgres", 'S', 1, pg, "/");
	fake_proc(root, 500, "postgres", 'S', 1, "/usr/lib/postgresql/15/bin/postgres (deleted)",
		  NULL);
	FMT(path, "%s/400/root", root);
	unlink(path);
	make_link(tmpdir, path);

	setenv("PGBT_PROC_ROOT", root, 1);
	test_fake_maps(root);

	CHECK(pgbt_proc_ppid(101, &pid, &err) == 0);
	CHECK_EQ_U(pid, 100);
	CHECK(pgbt_proc_exists(100));
	CHECK(!pgbt_proc_exists(301));
	CHECK(!pgbt_proc_exists(pid_beyond_max()));
	CHECK(pgbt_proc_is_postgres(100));
	CHECK(pgbt_proc_is_postgres(200));
	CHECK(!pgbt_proc_is_postgres(300));
	CHECK(!pgbt_proc_is_postgres(301));
	CHECK(pgbt_proc_is_postgres(500));
	CHECK(pgbt_proc_exe(500, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, "/usr/lib/postgresql/15/bin/postgres");

	CHECK(pgbt_proc_postmaster_of(102, &pid, &err) == 0);
	CHECK_EQ_U(pid, 100);
	CHECK(pgbt_proc_postmaster_of(101, &pid, &err) == 0);
	CHECK_EQ_U(pid, 100);
	CHECK(pgbt_proc_postmaster_of(100, &pid, &err) == 0);
	CHECK_EQ_U(pid, 100);
	CHECK(pgbt_proc_postmaster_of(200, &pid, &err) == 0);
	CHECK_EQ_U(pid, 200);
	FMT(want, "process 300: not a PostgreSQL process (its executable is %s)",
		 init);
	expect_msg(pgbt_proc_postmaster_of(300, &pid, &err), &err, want);
	pid = pid_beyond_max();
	FMT(want, "process %d: no such process", (int)pid);
	expect_msg(pgbt_proc_postmaster_of(pid, &pid, &err), &err, want);

	CHECK(pgbt_proc_postmasters(&pms, &n, &err) == 0);
	CHECK_EQ_U(n, 3);
	if (n == 3)
		CHECK(pms[0] == 100 && pms[1] == 200 && pms[2] == 400);
	free(pms);

	CHECK(pgbt_proc_exe_path(100, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, pg);
	/* 400 has its own root, but its exe path names the same file for us
	 * too, so that path is used. (A path seen only inside another mount
	 * namespace is tested for real in tests/e2e/container.sh.) */
	CHECK(pgbt_proc_exe_path(400, buf, sizeof(buf), &err) == 0);
	CHECK_STR(buf, pg);

	FMT(path, "%s/postmaster.pid", data);
	write_file(path, "100\n");
	CHECK(pgbt_datadir_postmaster(data, &pid, &err) == 0);
	CHECK_EQ_U(pid, 100);
	write_file(path, "301\n");
	FMT(want, "%s: postmaster.pid names PID 301, which is not running",
		 data);
	expect_msg(pgbt_datadir_postmaster(data, &pid, &err), &err, want);
	unsetenv("PGBT_PROC_ROOT");
}

/* Every live child of postmaster pm that runs postgres resolves to pm. */
static size_t check_real_children(pid_t pm)
{
	struct pgbt_err err = { .msg = "" };
	struct dirent *de;
	pid_t pid, ppid, got;
	size_t n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		die("/proc");
	while ((de = readdir(dir))) {
		pid = (pid_t)atoi(de->d_name);
		if (pid <= 0 || pgbt_proc_ppid(pid, &ppid, NULL) < 0 || ppid != pm ||
		    !pgbt_proc_is_postgres(pid))
			continue;
		if (pgbt_proc_postmaster_of(pid, &got, &err) < 0) {
			if (pgbt_proc_exists(pid))
				CHECK_STR(err.msg, "");
			continue;
		}
		CHECK_EQ_U(got, pm);
		n++;
	}
	closedir(dir);
	return n;
}

/* The data directory of running postmaster pm names it. Servers that are
 * starting or stopping get a few tries; single-user backends (initdb) and
 * processes that exit meanwhile are skipped. */
static void check_real_datadir(pid_t pm)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	struct pgbt_err err = { .msg = "" };
	char cwd[PATH_MAX] = "";
	pid_t got = 0;

	for (int try = 0; try < 10; try++) {
		if (pgbt_proc_cwd_path(pm, cwd, sizeof(cwd), &err) == 0 &&
		    pgbt_datadir_postmaster(cwd, &got, &err) == 0)
			break;
		if (!pgbt_proc_exists(pm) || strstr(err.msg, "single-user backend"))
			return;
		nanosleep(&ts, NULL);
	}
	if (got == 0 && pgbt_proc_exists(pm))
		CHECK_STR(err.msg, "");
	if (got == 0)
		return;
	CHECK_EQ_U(got, pm);
	fprintf(stderr, "test_proc: postmaster %d (%s), %zu children\n", (int)pm, cwd,
		check_real_children(pm));
}

/* Only when a PostgreSQL server happens to run: every postmaster found is
 * its own postmaster, its children resolve to it, and its data directory
 * names it. */
static void test_real_postgres(void)
{
	struct pgbt_err err = { .msg = "" };
	pid_t *pms = NULL, pm;
	size_t n = 0;

	CHECK(pgbt_proc_postmasters(&pms, &n, &err) == 0);
	for (size_t i = 0; i < n; i++) {
		if (pgbt_proc_postmaster_of(pms[i], &pm, &err) < 0) {
			if (pgbt_proc_exists(pms[i]))
				CHECK_STR(err.msg, "");
			continue;
		}
		CHECK_EQ_U(pm, pms[i]);
		check_real_datadir(pms[i]);
	}
	fprintf(stderr, "test_proc: %zu running postmaster(s) found\n", n);
	free(pms);
}

/* ---- main ---- */

static void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	FMT(cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_proc: cannot remove %s\n", dir);
}

int main(void)
{
	char datadir[PATH_MAX], fake_root[PATH_MAX];
	struct fixture f;

	unsetenv("PGBT_PROC_ROOT");
	/* The fixture's children are reparented to us when it dies, to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	FMT(tmpdir, "/tmp/pgbt-test-proc.XXXXXX");
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	FMT(datadir, "%s/dd", tmpdir);
	make_dir(datadir);

	fixture_start(&f, datadir);
	test_maps(&f);
	test_read_region(&f);
	test_read_globals(&f);
	test_read_unmapped(&f);
	test_identity(&f, datadir);
	test_permission(&f);
	test_datadir(&f, datadir);
	test_no_such_process();
	test_exited(&f);
	fixture_stop(&f);

	FMT(fake_root, "%s/proc", tmpdir);
	make_dir(fake_root);
	test_fake_tree(fake_root);

	test_real_postgres();
	remove_tree(tmpdir);
	return check_done();
}
