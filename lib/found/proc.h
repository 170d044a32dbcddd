/* A live process through /proc: its maps, its memory, its executable, and
 * the PostgreSQL process tree (postmaster and children). Paths are built
 * from PGBT_PROC_ROOT when set (tests), else "/proc". */
#ifndef PGBT_PROC_H
#define PGBT_PROC_H

#include "lib/common/err.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pgbt_map {
	uint64_t start, end, offset;
	char perms[5];          /* "rw-s", "r-xp", ... */
	unsigned dev_major, dev_minor;
	uint64_t inode;
	char path[PATH_MAX];    /* "" for anonymous mappings */
};

struct pgbt_maps {
	struct pgbt_map *maps;
	size_t n;
};

/* Errors name the process: "process 1234: no such process",
 * "process 1234: permission denied reading /proc/1234/mem (run as root)",
 * "process 1234: exited while being resolved" (when it was seen before). */

bool pgbt_proc_exists(pid_t pid);

int pgbt_proc_maps(pid_t pid, struct pgbt_maps *ret, struct pgbt_err *err);
void pgbt_proc_maps_free(struct pgbt_maps *maps);

/* The mapping that contains addr, or NULL. */
const struct pgbt_map *pgbt_maps_find(const struct pgbt_maps *maps, uint64_t addr);

/* Load bias of the file with this device and inode in the process:
 * (start - offset) of its lowest mapping, minus load_vaddr (see
 * pgbt_elf_load_vaddr). Fails when the file is not mapped. */
int pgbt_maps_load_bias(const struct pgbt_maps *maps, unsigned dev_major,
			unsigned dev_minor, uint64_t inode, uint64_t load_vaddr,
			uint64_t *ret, struct pgbt_err *err);

/* Reads exactly len bytes at addr from /proc/PID/mem (retries on EINTR; a
 * short read or EIO is a fault at that address; EACCES/EPERM is a
 * permission error; ESRCH/ENOENT means the process exited). */
int pgbt_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len,
		   struct pgbt_err *err);

/* readlink of /proc/PID/exe ("/usr/lib/postgresql/15/bin/postgres"),
 * without a " (deleted)" suffix. */
int pgbt_proc_exe(pid_t pid, char *ret, size_t len, struct pgbt_err *err);

/* Device and inode of the executable (stat of /proc/PID/exe). */
int pgbt_proc_exe_id(pid_t pid, unsigned *ret_major, unsigned *ret_minor,
		     uint64_t *ret_inode, struct pgbt_err *err);

/* A path through which we (and bpftrace) can open the process's
 * executable: the exe path when it names the same file for us, else
 * "/proc/PID/root" + exe path (a container, or another mount namespace),
 * else "/proc/PID/exe". */
int pgbt_proc_exe_path(pid_t pid, char *ret, size_t len, struct pgbt_err *err);

/* readlink of /proc/PID/cwd. The postmaster's is its data directory. */
int pgbt_proc_cwd(pid_t pid, char *ret, size_t len, struct pgbt_err *err);
/* The same directory as we can open it (see pgbt_proc_exe_path). */
int pgbt_proc_cwd_path(pid_t pid, char *ret, size_t len, struct pgbt_err *err);

/* Parent PID, from /proc/PID/stat (field 4, parsed after the last ')'). */
int pgbt_proc_ppid(pid_t pid, pid_t *ret, struct pgbt_err *err);

/* True when the executable's base name is "postgres" or "postmaster". */
bool pgbt_proc_is_postgres(pid_t pid);

/* The postmaster for pid: pid itself when its parent is not a postgres
 * process of the same executable, else the nearest such ancestor. Fails
 * with "process N: not a PostgreSQL process (its executable is PATH)". */
int pgbt_proc_postmaster_of(pid_t pid, pid_t *ret, struct pgbt_err *err);

/* PID namespaces. A server in a container sees its processes under other
 * PIDs than we do: pg_stat_activity.pid is the PID in the process's own
 * namespace (the last NSpid of /proc/PID/status). */
int pgbt_proc_nspid(pid_t pid, pid_t *ret, struct pgbt_err *err);
/* How many PID namespaces below ours pid's own is (0: ours), from the
 * number of NSpid entries. */
int pgbt_proc_pidns_depth(pid_t pid, int *ret, struct pgbt_err *err);
/* True when pid runs in another PID namespace than this process. */
bool pgbt_proc_other_pidns(pid_t pid);
/* The child of parent whose PID in its own namespace is nspid (our PID
 * for it in *ret); fails with "no child of postmaster P has PID N". */
int pgbt_proc_child_by_nspid(pid_t parent, pid_t nspid, pid_t *ret, struct pgbt_err *err);

/* Up to max children of parent, sorted by PID, in ret; their number in
 * *ret_n (0 is no error). */
int pgbt_proc_children(pid_t parent, pid_t *ret, size_t max, size_t *ret_n,
		       struct pgbt_err *err);

/* Every running postmaster, sorted by PID. The caller frees *ret. */
int pgbt_proc_postmasters(pid_t **ret, size_t *ret_n, struct pgbt_err *err);

/* The postmaster PID from DATADIR/postmaster.pid (first line), checked to
 * be alive. Fails with "DATADIR: no postmaster.pid (server not running?)"
 * or "DATADIR: postmaster.pid names PID N, which is not running". */
int pgbt_datadir_postmaster(const char *datadir, pid_t *ret, struct pgbt_err *err);

/* The port the server listens on: the fourth line of DATADIR/postmaster.pid
 * (PostgreSQL's LOCK_FILE_LINE_PORT). */
int pgbt_datadir_port(const char *datadir, int *ret, struct pgbt_err *err);

#endif
