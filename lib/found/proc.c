/* A live process through /proc (see proc.h). Every path is built under
 * PGBT_PROC_ROOT when set, so tests can point the module at a fake tree. */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"
#define PERM_HINT "(run as root, or check ptrace_scope / the process's owner)"

/* Deeper than any real process tree; only guards against a corrupt one. */
#define MAX_TREE_DEPTH 4096

/* ---- paths and process state ---- */

static const char *proc_root(void)
{
	const char *root = getenv("PGBT_PROC_ROOT");

	return root && *root ? root : "/proc";
}

/* "<root>/<pid>/<name>". Truncation cannot matter: the longest name is a
 * few bytes and PGBT_PROC_ROOT is a short test directory. */
static void proc_path(char *buf, size_t len, pid_t pid, const char *name)
{
	snprintf(buf, len, "%s/%d/%s", proc_root(), (int)pid, name);
}

/* PIDs whose /proc entries we have read, so that a later ENOENT/ESRCH can
 * say "exited while being resolved" rather than "no such process". A small
 * ring: forgetting an old PID only costs the less specific message. The
 * library is single-threaded, like pgbt-gen. */
static pid_t seen_pids[64];
static size_t seen_next;

static void mark_seen(pid_t pid)
{
	for (size_t i = 0; i < sizeof(seen_pids) / sizeof(seen_pids[0]); i++)
		if (seen_pids[i] == pid)
			return;
	seen_pids[seen_next] = pid;
	seen_next = (seen_next + 1) % (sizeof(seen_pids) / sizeof(seen_pids[0]));
}

static bool was_seen(pid_t pid)
{
	for (size_t i = 0; i < sizeof(seen_pids) / sizeof(seen_pids[0]); i++)
		if (seen_pids[i] == pid)
			return true;
	return false;
}

/* read(2) until EOF or error, retrying on EINTR. Returns bytes read or -1. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* The state letter of /proc/PID/stat (field 3), or 0 when unreadable. */
static char proc_state(pid_t pid)
{
	char path[PATH_MAX], buf[512], *paren, state = 0;
	ssize_t n;
	int fd;

	proc_path(path, sizeof(path), pid, "stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read_full(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		/* comm may hold spaces and parentheses: parse after the last ')'. */
		paren = strrchr(buf, ')');
		if (paren && paren[1] == ' ')
			state = paren[2];
	}
	close(fd);
	return state;
}

/* Gone, or a zombie: a zombie has no memory, exe or cwd left to read. */
static bool proc_gone(pid_t pid)
{
	char state = proc_state(pid);

	return state == 0 || state == 'Z' || state == 'X';
}

bool pgbt_proc_exists(pid_t pid)
{
	return pid > 0 && !proc_gone(pid);
}

/* ---- error messages ---- */

static int gone_fail(struct pgbt_err *err, pid_t pid)
{
	if (was_seen(pid))
		return pgbt_fail_code(err, PGBT_EGONE, "process %d: exited while being resolved",
				      (int)pid);
	return pgbt_fail_code(err, PGBT_EGONE, "process %d: no such process", (int)pid);
}

/* A failed open/read/readlink/stat of a /proc/PID file, as one line naming
 * the process and the cause. ENOENT alone does not mean the process is gone
 * (a kernel thread has no exe), so that is checked. */
static int proc_fail(struct pgbt_err *err, pid_t pid, const char *path, int errnum)
{
	if (errnum == EACCES || errnum == EPERM)
		return pgbt_fail(err, "process %d: permission denied reading %s " PERM_HINT,
				 (int)pid, path);
	if ((errnum == ENOENT || errnum == ESRCH) && proc_gone(pid))
		return gone_fail(err, pid);
	return pgbt_fail(err, "process %d: cannot read %s: %s", (int)pid, path,
			 strerror(errnum));
}

/* ---- small /proc readers ---- */

/* The whole of /proc/PID/NAME, NUL-terminated, in a malloc'd buffer. */
static int read_proc_file(pid_t pid, const char *name, char **ret,
			  struct pgbt_err *err)
{
	char path[PATH_MAX], *buf = NULL, *grown;
	size_t cap = 4096, len = 0;
	int fd, rc = -1;

	proc_path(path, sizeof(path), pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proc_fail(err, pid, path, errno);
	mark_seen(pid);
	for (;;) {
		ssize_t n;

		grown = realloc(buf, cap);
		if (!grown) {
			pgbt_fail(err, "process %d: out of memory reading %s", (int)pid, path);
			goto out;
		}
		buf = grown;
		n = read_full(fd, buf + len, cap - len - 1);
		if (n < 0) {
			proc_fail(err, pid, path, errno);
			goto out;
		}
		len += (size_t)n;
		if (len < cap - 1)
			break;
		cap *= 2;
	}
	buf[len] = '\0';
	*ret = buf;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

/* readlink of /proc/PID/NAME into ret (NUL-terminated). */
static int readlink_proc(pid_t pid, const char *name, char *ret, size_t len,
			 struct pgbt_err *err)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	proc_path(path, sizeof(path), pid, name);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return proc_fail(err, pid, path, errno);
	mark_seen(pid);
	target[n] = '\0';
	if ((size_t)n >= len)
		return pgbt_fail(err, "process %d: %s is longer than %zu bytes", (int)pid,
				 path, len - 1);
	memcpy(ret, target, (size_t)n + 1);
	return 0;
}

static int stat_proc(pid_t pid, const char *name, struct stat *st,
		     struct pgbt_err *err)
{
	char path[PATH_MAX];

	proc_path(path, sizeof(path), pid, name);
	if (stat(path, st) < 0)
		return proc_fail(err, pid, path, errno);
	mark_seen(pid);
	return 0;
}

/* ---- maps ---- */

/* One line of /proc/PID/maps:
 *   start-end perms offset major:minor inode [path]
 * The path is the rest of the line after the padding, so it may hold
 * spaces and keeps a " (deleted)" suffix; anonymous mappings have none. */
static bool parse_maps_line(const char *line, struct pgbt_map *m)
{
	const char *path;
	int used = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
		   &m->start, &m->end, m->perms, &m->offset, &m->dev_major,
		   &m->dev_minor, &m->inode, &used) != 7 || used == 0)
		return false;
	if (m->end < m->start || strlen(m->perms) != 4)
		return false;
	path = line + used;
	if (*path != '\0' && *path != ' ')
		return false;
	path += strspn(path, " ");
	snprintf(m->path, sizeof(m->path), "%s", path);
	return true;
}

static int maps_append(struct pgbt_maps *maps, size_t *cap, const struct pgbt_map *m)
{
	if (maps->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct pgbt_map *grown = realloc(maps->maps, ncap * sizeof(*grown));

		if (!grown)
			return -1;
		maps->maps = grown;
		*cap = ncap;
	}
	maps->maps[maps->n++] = *m;
	return 0;
}

int pgbt_proc_maps(pid_t pid, struct pgbt_maps *ret, struct pgbt_err *err)
{
	struct pgbt_maps maps = { 0 };
	struct pgbt_map m;
	char *text = NULL, *line, *next;
	size_t cap = 0, lineno = 0;
	int rc = -1;

	if (read_proc_file(pid, "maps", &text, err) < 0)
		return -1;
	/* A process that exits between open and read leaves an empty file. */
	if (*text == '\0' && proc_gone(pid)) {
		gone_fail(err, pid);
		goto out;
	}
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		lineno++;
		if (!parse_maps_line(line, &m)) {
			pgbt_fail(err, "process %d: cannot parse maps line %zu: '%s'",
				  (int)pid, lineno, line);
			goto out;
		}
		if (maps_append(&maps, &cap, &m) < 0) {
			pgbt_fail(err, "process %d: out of memory reading maps", (int)pid);
			goto out;
		}
	}
	*ret = maps;
	maps.maps = NULL;
	rc = 0;
out:
	free(maps.maps);
	free(text);
	return rc;
}

void pgbt_proc_maps_free(struct pgbt_maps *maps)
{
	if (!maps)
		return;
	free(maps->maps);
	maps->maps = NULL;
	maps->n = 0;
}

/* Binary search: the kernel lists mappings in address order. */
const struct pgbt_map *pgbt_maps_find(const struct pgbt_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pgbt_map *m = &maps->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

int pgbt_maps_load_bias(const struct pgbt_maps *maps, unsigned dev_major,
			unsigned dev_minor, uint64_t inode, uint64_t load_vaddr,
			uint64_t *ret, struct pgbt_err *err)
{
	const struct pgbt_map *lowest = NULL;

	for (size_t i = 0; i < maps->n; i++) {
		const struct pgbt_map *m = &maps->maps[i];

		if (m->dev_major != dev_major || m->dev_minor != dev_minor ||
		    m->inode != inode)
			continue;
		if (!lowest || m->start < lowest->start)
			lowest = m;
	}
	if (!lowest)
		return pgbt_fail(err, "file with device %02x:%02x inode %" PRIu64
				 ": not mapped in the process", dev_major, dev_minor, inode);
	*ret = lowest->start - lowest->offset - load_vaddr;
	return 0;
}

/* ---- memory ---- */

/* Why pread stopped short: errnum is 0 for a short read. The kernel
 * returns 0 bytes once the process has exited (its mm is gone), so a short
 * read is only a fault while the process is still alive. pread rejects
 * offsets above INT64_MAX with EINVAL: those are kernel addresses. */
static int read_fail(struct pgbt_err *err, pid_t pid, const char *path,
		     uint64_t addr, size_t len, int errnum)
{
	if (errnum == EACCES || errnum == EPERM || errnum == ENOENT || errnum == ESRCH)
		return proc_fail(err, pid, path, errnum);
	if (proc_gone(pid))
		return gone_fail(err, pid);
	if (errnum == 0 || errnum == EIO || errnum == EFAULT || errnum == EINVAL)
		return pgbt_fail(err, "process %d: cannot read %zu bytes at 0x%" PRIx64
				 " (not mapped)", (int)pid, len, addr);
	return pgbt_fail(err, "process %d: cannot read %zu bytes at 0x%" PRIx64 ": %s",
			 (int)pid, len, addr, strerror(errnum));
}

int pgbt_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len,
		   struct pgbt_err *err)
{
	char path[PATH_MAX];
	size_t done = 0;
	int fd, rc = -1;

	proc_path(path, sizeof(path), pid, "mem");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proc_fail(err, pid, path, errno);
	mark_seen(pid);
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			read_fail(err, pid, path, addr, len, n < 0 ? errno : 0);
			goto out;
		}
		done += (size_t)n;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* ---- executable, cwd, parent ---- */

int pgbt_proc_exe(pid_t pid, char *ret, size_t len, struct pgbt_err *err)
{
	size_t n, suffix = strlen(DELETED_SUFFIX);

	if (readlink_proc(pid, "exe", ret, len, err) < 0)
		return -1;
	/* An upgraded package leaves running servers on a deleted binary; the
	 * caller wants the path it had. */
	n = strlen(ret);
	if (n > suffix && strcmp(ret + n - suffix, DELETED_SUFFIX) == 0)
		ret[n - suffix] = '\0';
	return 0;
}

int pgbt_proc_exe_id(pid_t pid, unsigned *ret_major, unsigned *ret_minor,
		     uint64_t *ret_inode, struct pgbt_err *err)
{
	struct stat st;

	if (stat_proc(pid, "exe", &st, err) < 0)
		return -1;
	*ret_major = major(st.st_dev);
	*ret_minor = minor(st.st_dev);
	*ret_inode = st.st_ino;
	return 0;
}

static bool same_file(const char *path, const struct stat *want)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* A path through which we reach what /proc/PID/NAME ("exe", "cwd") links
 * to: the path the process sees, when it names the same file for us (same
 * file system view), else that path under the process's root (a
 * container, or another mount namespace), else the /proc link itself. */
static int reachable_path(pid_t pid, const char *name, const char *inside, char *ret,
			  size_t len, struct pgbt_err *err)
{
	char path[3][PATH_MAX + 64];
	struct stat target;

	if (stat_proc(pid, name, &target, err) < 0)
		return -1;
	snprintf(path[0], sizeof(path[0]), "%s", inside);
	snprintf(path[1], sizeof(path[1]), "%s/%d/root%s", proc_root(), (int)pid, inside);
	snprintf(path[2], sizeof(path[2]), "%s/%d/%s", proc_root(), (int)pid, name);
	for (int i = 0; i < 3; i++) {
		if (i < 2 && !same_file(path[i], &target))
			continue;
		if (strlen(path[i]) >= len)
			return pgbt_fail(err, "process %d: path of its %s longer than %zu bytes",
					 (int)pid, name, len - 1);
		snprintf(ret, len, "%s", path[i]);
		return 0;
	}
	return -1;
}

int pgbt_proc_exe_path(pid_t pid, char *ret, size_t len, struct pgbt_err *err)
{
	char exe[PATH_MAX];

	if (pgbt_proc_exe(pid, exe, sizeof(exe), err) < 0)
		return -1;
	return reachable_path(pid, "exe", exe, ret, len, err);
}

int pgbt_proc_cwd(pid_t pid, char *ret, size_t len, struct pgbt_err *err)
{
	return readlink_proc(pid, "cwd", ret, len, err);
}

int pgbt_proc_cwd_path(pid_t pid, char *ret, size_t len, struct pgbt_err *err)
{
	char cwd[PATH_MAX];

	if (pgbt_proc_cwd(pid, cwd, sizeof(cwd), err) < 0)
		return -1;
	return reachable_path(pid, "cwd", cwd, ret, len, err);
}

int pgbt_proc_ppid(pid_t pid, pid_t *ret, struct pgbt_err *err)
{
	char *text = NULL, *paren, state;
	int ppid, rc = -1;

	if (read_proc_file(pid, "stat", &text, err) < 0)
		return -1;
	/* comm (field 2) may hold spaces and ')': fields resume after the last ')'. */
	paren = strrchr(text, ')');
	if (!paren || sscanf(paren + 1, " %c %d", &state, &ppid) != 2) {
		if (*text == '\0' && proc_gone(pid))
			gone_fail(err, pid);
		else
			pgbt_fail(err, "process %d: cannot parse stat: '%.64s'", (int)pid, text);
		goto out;
	}
	*ret = (pid_t)ppid;
	rc = 0;
out:
	free(text);
	return rc;
}

/* ---- the PostgreSQL process tree ---- */

static bool is_postgres_path(const char *exe)
{
	const char *slash = strrchr(exe, '/');
	const char *base = slash ? slash + 1 : exe;

	return strcmp(base, "postgres") == 0 || strcmp(base, "postmaster") == 0;
}

bool pgbt_proc_is_postgres(pid_t pid)
{
	char exe[PATH_MAX];

	return pgbt_proc_exe(pid, exe, sizeof(exe), NULL) == 0 && is_postgres_path(exe);
}

/* Whether pid runs the executable with this device and inode. A process
 * we cannot inspect does not count: a postmaster's parent is rarely one. */
static bool runs_exe(pid_t pid, unsigned dev_major, unsigned dev_minor, uint64_t inode)
{
	unsigned maj, min;
	uint64_t ino;

	return pgbt_proc_exe_id(pid, &maj, &min, &ino, NULL) == 0 &&
	       maj == dev_major && min == dev_minor && ino == inode;
}

int pgbt_proc_postmaster_of(pid_t pid, pid_t *ret, struct pgbt_err *err)
{
	char exe[PATH_MAX];
	unsigned maj, min;
	uint64_t ino;
	pid_t cur = pid, parent;

	if (pgbt_proc_exe(pid, exe, sizeof(exe), err) < 0)
		return -1;
	if (!is_postgres_path(exe))
		return pgbt_fail(err, "process %d: not a PostgreSQL process (its executable is %s)",
				 (int)pid, exe);
	if (pgbt_proc_exe_id(pid, &maj, &min, &ino, err) < 0)
		return -1;
	/* Backends are forked from the postmaster without exec, so they share
	 * its executable; the postmaster's own parent (a shell, systemd, pg_ctl)
	 * does not. PID 1 may be the postmaster itself in a container. */
	for (int depth = 0; depth < MAX_TREE_DEPTH; depth++) {
		if (pgbt_proc_ppid(cur, &parent, err) < 0)
			return -1;
		if (parent <= 0 || parent == cur || !runs_exe(parent, maj, min, ino)) {
			*ret = cur;
			return 0;
		}
		cur = parent;
	}
	return pgbt_fail(err, "process %d: process tree deeper than %d levels",
			 (int)pid, MAX_TREE_DEPTH);
}

/* A /proc entry name that is a PID: decimal digits only. */
static bool parse_pid_name(const char *name, pid_t *ret)
{
	long v = 0;

	if (*name == '\0')
		return false;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9' || v > (INT_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*ret = (pid_t)v;
	return v > 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Calls visit(pid, ctx) for each child of parent until it returns true;
 * -1 when /proc cannot be listed. */
static int each_child(pid_t parent, bool (*visit)(pid_t, void *), void *ctx,
		      struct pgbt_err *err)
{
	struct dirent *de;
	pid_t pid, ppid;
	DIR *dir;

	dir = opendir(proc_root());
	if (!dir)
		return pgbt_fail(err, "%s: cannot list processes: %s", proc_root(),
				 strerror(errno));
	while ((de = readdir(dir)))
		if (parse_pid_name(de->d_name, &pid) && pgbt_proc_ppid(pid, &ppid, NULL) == 0 &&
		    ppid == parent && visit(pid, ctx))
			break;
	closedir(dir);
	return 0;
}

struct children {
	pid_t *pids;
	size_t n, max;
};

static bool add_child(pid_t pid, void *ctx)
{
	struct children *c = ctx;

	c->pids[c->n++] = pid;
	return c->n == c->max;
}

int pgbt_proc_children(pid_t parent, pid_t *ret, size_t max, size_t *ret_n,
		       struct pgbt_err *err)
{
	struct children c = { ret, 0, max };

	*ret_n = 0;
	if (max && each_child(parent, add_child, &c, err) < 0)
		return -1;
	if (c.n > 1)
		qsort(ret, c.n, sizeof(*ret), cmp_pid);
	*ret_n = c.n;
	return 0;
}

int pgbt_proc_postmasters(pid_t **ret, size_t *ret_n, struct pgbt_err *err)
{
	pid_t *pids = NULL, *grown, pid, pm;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;
	int rc = -1;

	dir = opendir(proc_root());
	if (!dir)
		return pgbt_fail(err, "%s: cannot list processes: %s", proc_root(),
				 strerror(errno));
	/* Processes come and go while we scan; one that cannot be read is
	 * skipped rather than failing the whole scan. */
	while ((de = readdir(dir))) {
		if (!parse_pid_name(de->d_name, &pid) || !pgbt_proc_is_postgres(pid) ||
		    pgbt_proc_postmaster_of(pid, &pm, NULL) < 0 || pm != pid)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(pids, cap * sizeof(*pids));
			if (!grown) {
				pgbt_fail(err, "%s: out of memory listing processes", proc_root());
				goto out;
			}
			pids = grown;
		}
		pids[n++] = pid;
	}
	if (n > 1) /* pids is NULL when none was found */
		qsort(pids, n, sizeof(*pids), cmp_pid);
	*ret = pids;
	*ret_n = n;
	pids = NULL;
	rc = 0;
out:
	free(pids);
	closedir(dir);
	return rc;
}

/* ---- PID namespaces ---- */

int pgbt_proc_nspid(pid_t pid, pid_t *ret, struct pgbt_err *err)
{
	char *status, *line, *last;
	int rc;

	if (read_proc_file(pid, "status", &status, err) < 0)
		return -1;
	line = strstr(status, "\nNSpid:");
	/* NSpid lists the PID in each namespace, ours first, its own last. */
	last = line ? line + 7 : NULL;
	if (last) {
		last[strcspn(last, "\n")] = '\0';
		last = strrchr(last, '\t') ? strrchr(last, '\t') + 1 : last;
	}
	rc = last && parse_pid_name(last, ret) ? 0 :
		pgbt_fail(err, "process %d: no NSpid line in its status", (int)pid);
	free(status);
	return rc;
}

int pgbt_proc_pidns_depth(pid_t pid, int *ret, struct pgbt_err *err)
{
	char *status, *line;
	int n = 0;

	if (read_proc_file(pid, "status", &status, err) < 0)
		return -1;
	line = strstr(status, "\nNSpid:");
	if (line)
		for (char *p = line + 7; *p && *p != '\n'; p++)
			n += *p == '\t';
	free(status);
	if (n < 1)
		return pgbt_fail(err, "process %d: no NSpid line in its status", (int)pid);
	*ret = n - 1;
	return 0;
}

bool pgbt_proc_other_pidns(pid_t pid)
{
	char self[64], other[64], path[PATH_MAX];
	ssize_t a, b;

	snprintf(path, sizeof(path), "%s/self/ns/pid", proc_root());
	a = readlink(path, self, sizeof(self) - 1);
	proc_path(path, sizeof(path), pid, "ns/pid");
	b = readlink(path, other, sizeof(other) - 1);
	/* Unreadable links (old kernels, fake trees): one namespace. */
	return a > 0 && b > 0 && (a != b || memcmp(self, other, (size_t)a) != 0);
}

struct by_nspid {
	pid_t nspid, found;
};

static bool has_nspid(pid_t pid, void *ctx)
{
	struct by_nspid *b = ctx;
	pid_t ns;

	if (pgbt_proc_nspid(pid, &ns, NULL) < 0 || ns != b->nspid)
		return false;
	b->found = pid;
	return true;
}

int pgbt_proc_child_by_nspid(pid_t parent, pid_t nspid, pid_t *ret, struct pgbt_err *err)
{
	struct by_nspid b = { nspid, 0 };

	if (each_child(parent, has_nspid, &b, err) < 0)
		return -1;
	if (!b.found)
		return pgbt_fail(err, "no child of postmaster %d has PID %d in its namespace",
				 (int)parent, (int)nspid);
	*ret = b.found;
	return 0;
}

/* ---- data directory ---- */

/* The first line of DATADIR/postmaster.pid into buf, without its newline
 * (a line longer than buf is cut, and then fails to parse as a PID). */
static int read_pid_file(const char *datadir, char *buf, size_t len,
			 struct pgbt_err *err)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/postmaster.pid", datadir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int open_errno = errno;

		/* Tell a wrong directory from a stopped server. */
		if (open_errno == ENOENT && stat(datadir, &st) < 0)
			return pgbt_fail(err, "%s: cannot access data directory: %s", datadir,
					 strerror(errno));
		if (open_errno == ENOENT)
			return pgbt_fail(err, "%s: no postmaster.pid (server not running?)",
					 datadir);
		return pgbt_fail(err, "%s: cannot read postmaster.pid: %s", datadir,
				 strerror(open_errno));
	}
	n = read_full(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return pgbt_fail(err, "%s: cannot read postmaster.pid: %s", datadir,
				 strerror(errno));
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Whether two paths name the same directory: equal real paths, or the same
 * device and inode (a server in a container sees its own mount namespace,
 * where the path its cwd link shows means something else to us). */
static bool same_dir(const char *a, const char *b)
{
	char real_a[PATH_MAX], real_b[PATH_MAX];
	struct stat sa, sb;

	if (realpath(a, real_a) && realpath(b, real_b) && strcmp(real_a, real_b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* A postmaster in another PID namespace, working in datadir, whose PID
 * there is nspid: our PID for it in *ret. */
static bool contained_postmaster(const char *datadir, pid_t nspid, pid_t *ret)
{
	char cwd_link[PATH_MAX];
	pid_t *pms, ns;
	size_t n;
	bool found = false;

	if (pgbt_proc_postmasters(&pms, &n, NULL) < 0)
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		proc_path(cwd_link, sizeof(cwd_link), pms[i], "cwd");
		found = pgbt_proc_other_pidns(pms[i]) &&
			pgbt_proc_nspid(pms[i], &ns, NULL) == 0 && ns == nspid &&
			same_dir(datadir, cwd_link);
		if (found)
			*ret = pms[i];
	}
	free(pms);
	return found;
}

int pgbt_datadir_postmaster(const char *datadir, pid_t *ret, struct pgbt_err *err)
{
	char line[64], cwd[PATH_MAX], cwd_link[PATH_MAX];
	pid_t pid;

	if (read_pid_file(datadir, line, sizeof(line), err) < 0)
		return -1;
	/* A single-user backend (initdb, postgres --single) writes its PID
	 * negated; it has no shared memory for us to read. */
	if (line[0] == '-' && parse_pid_name(line + 1, &pid))
		return pgbt_fail(err, "%s: postmaster.pid names PID %d, a single-user backend, "
				 "not a postmaster", datadir, (int)pid);
	/* Strict: digits only, so "12x" and " 12" are errors, not PID 12. */
	if (!parse_pid_name(line, &pid))
		return pgbt_fail(err, "%s: postmaster.pid does not start with a PID (first line '%s')",
				 datadir, line);
	/* A server in a container wrote the PID its own namespace gave it. */
	if (contained_postmaster(datadir, pid, ret))
		return 0;
	if (!pgbt_proc_exists(pid))
		return pgbt_fail(err, "%s: postmaster.pid names PID %d, which is not running",
				 datadir, (int)pid);
	if (pgbt_proc_cwd(pid, cwd, sizeof(cwd), err) < 0)
		return pgbt_fail_prefix(err, "%s", datadir);
	/* The postmaster chdirs into its data directory; a recycled PID does not.
	 * realpath and stat of the cwd link follow it like the kernel does. */
	proc_path(cwd_link, sizeof(cwd_link), pid, "cwd");
	if (!same_dir(datadir, cwd_link))
		return pgbt_fail(err, "%s: postmaster.pid names PID %d, which is not this data "
				 "directory's postmaster (its working directory is %s)",
				 datadir, (int)pid, cwd);
	*ret = pid;
	return 0;
}

int pgbt_datadir_port(const char *datadir, int *ret, struct pgbt_err *err)
{
	char path[PATH_MAX], buf[1024], *line;
	ssize_t n;
	long port;
	int fd;

	snprintf(path, sizeof(path), "%s/postmaster.pid", datadir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pgbt_fail(err, "%s: %s", path, strerror(errno));
	n = read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return pgbt_fail(err, "%s: %s", path, strerror(errno));
	buf[n] = '\0';
	line = buf;
	for (int i = 1; i < 4 && line; i++)
		if ((line = strchr(line, '\n')))
			line++;
	if (!line || sscanf(line, "%ld", &port) != 1 || port < 1 || port > 65535)
		return pgbt_fail(err, "%s: no port on its fourth line", path);
	*ret = (int)port;
	return 0;
}
