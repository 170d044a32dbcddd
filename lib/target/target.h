/* The server being traced: its binary (symbols, USDT, version, types from
 * DWARF or a built-in layout) and, when live, its postmaster process (load
 * bias, data directory, shared memory). Every answer comes with "how" it
 * was found, for the rendered script's provenance block. */
#ifndef PGBT_TARGET_H
#define PGBT_TARGET_H

#include "lib/types/dwarf.h"
#include "lib/found/elfimg.h"
#include "lib/common/err.h"
#include "lib/types/gdb.h"
#include "lib/types/layout.h"
#include "lib/found/proc.h"
#include "lib/found/rows.h"
#include "lib/found/usdt.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PGBT_HOW_LEN 512

struct pgbt_target {
	pid_t pid;                /* the postmaster; 0 when offline (--bin) */
	pid_t named_pid;          /* the PID the user gave, maybe a child */
	bool other_pidns;         /* the server runs in another PID namespace
				     (a container): its PIDs differ from ours */
	pid_t nspid;              /* the postmaster's PID there */
	int pidns_depth;          /* that namespace's depth below ours */
	char datadir[PATH_MAX];   /* "" when offline; as we can open it */
	char datadir_inside[PATH_MAX]; /* as the postmaster sees it */
	char datadir_version[16]; /* PG_VERSION of the data directory, or "" */
	char exe[PATH_MAX];       /* the binary as its process sees it */
	char path[PATH_MAX];      /* the binary as we and bpftrace open it */
	struct pgbt_elf *elf;
	struct pgbt_usdt usdt;
	char version[512];        /* PG_VERSION_STR */
	int major;
	unsigned machine;         /* the binary's ELF e_machine (machine.h) */
	struct pgbt_maps maps;
	uint64_t bias;            /* load bias of the binary in the process */

	/* Types: DWARF when the build has it (opened on first use), else the
	 * built-in layout for this major; or gdb when types_from_gdb is set
	 * before first use (--resolver gdb). */
	bool types_from_gdb;
	struct pgbt_gdb *gdb;
	bool types_opened;
	struct pgbt_dwarf *dwarf;
	struct pgbt_err dwarf_err;
	bool has_layout;
	struct pgbt_layout layout;

	/* the last static global found in code (pgbt_found_static) */
	char found_name[64];
	uint64_t found_addr;
	char found_how[PGBT_HOW_LEN];
};

/* Each open fills *t (memset first) and fails with a one-line message,
 * leaving nothing to close. */
int pgbt_target_open_pid(struct pgbt_target *t, pid_t pid, struct pgbt_err *err);
int pgbt_target_open_datadir(struct pgbt_target *t, const char *datadir, struct pgbt_err *err);
int pgbt_target_open_binary(struct pgbt_target *t, const char *path, struct pgbt_err *err);
/* The single running postmaster; none or several is an error. */
int pgbt_target_open_default(struct pgbt_target *t, struct pgbt_err *err);
void pgbt_target_close(struct pgbt_target *t);

/* Where types come from, for the provenance block:
 * "DWARF in /path" or "built-in layout for PostgreSQL 15 (no DWARF: ...)". */
void pgbt_target_types_origin(struct pgbt_target *t, char *ret, size_t len);

int pgbt_target_member(struct pgbt_target *t, const char *type, const char *member,
		       uint64_t *ret_off, uint64_t *ret_size, char *how, struct pgbt_err *err);
int pgbt_target_sizeof(struct pgbt_target *t, const char *type, uint64_t *ret_size,
		       char *how, struct pgbt_err *err);
int pgbt_target_var_type(struct pgbt_target *t, const char *var, char *ret_type,
			 size_t len, int *ret_pointers, char *how, struct pgbt_err *err);
int pgbt_target_enum(struct pgbt_target *t, const char *name,
		     struct pgbt_enumerator **ret, size_t *ret_n, char *how,
		     struct pgbt_err *err);
int pgbt_target_enumerator(struct pgbt_target *t, const char *name, int64_t *ret,
			   char *how, struct pgbt_err *err);

/* The name users see for an enumerator (a "label" fact of the built-in
 * layout for this major, kept for DWARF builds too); -1 when there is none. */
int pgbt_target_label(struct pgbt_target *t, const char *name, char *ret, size_t len);

/* Runtime address of a symbol: ELF value + load bias. Needs a process.
 * A global the build keeps static is found in code where pgbt knows how
 * (found_static.h). */
int pgbt_target_symbol_addr(struct pgbt_target *t, const char *name, uint64_t *ret,
			    char *how, struct pgbt_err *err);

/* Reads a pointer at addr in the postmaster and checks that it points into
 * a shared mapping (so it is valid in every backend), with room for size
 * bytes after off. */
int pgbt_target_read_shared_ptr(struct pgbt_target *t, const char *what, uint64_t addr,
				uint64_t off, uint64_t size, uint64_t *ret, char *how,
				struct pgbt_err *err);
/* The same, read in process pid (a backend: forked, so the binary and the
 * main shared memory are at the postmaster's addresses) instead. */
int pgbt_target_read_shared_ptr_in(struct pgbt_target *t, pid_t pid, const char *what,
				   uint64_t addr, uint64_t off, uint64_t size, uint64_t *ret,
				   char *how, struct pgbt_err *err);

/* The strings of a global array of C string pointers (const char *NAME[]),
 * read from the running postmaster (its size from the symbol table): one
 * row per element, columns "index" and "value" (escaped for a bpftrace
 * string, at most max_bytes; a NULL pointer gives ""). Fails without a
 * process, for a symbol that is not an array of pointers, or a bad read. */
int pgbt_target_strings(struct pgbt_target *t, const char *name, size_t max_bytes,
			struct pgbt_rows *ret, char *how, struct pgbt_err *err);

#endif
