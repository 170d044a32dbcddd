/* The facts one rendering asked of its server, in the order asked, each
 * once, with where it came from. Rendering takes a fact asked before from
 * here instead of asking again; the rendered script's provenance block is
 * written from here, and --check-with gdb asks gdb the same facts. */
#ifndef PGBT_RESOLVED_H
#define PGBT_RESOLVED_H

#include "lib/common/buf.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum pgbt_resolved_kind {
	PGBT_RESOLVED_ADDRESS,      /* &G, &G.m, &G->m: an address in the server */
	PGBT_RESOLVED_POINTER,      /* *G: the pointer stored in a global */
	PGBT_RESOLVED_OFFSET,       /* offsetof(T, m) */
	PGBT_RESOLVED_SIZE,         /* sizeof(T) */
	PGBT_RESOLVED_ENUMERATOR,   /* an enumerator's value */
	PGBT_RESOLVED_IN_BACKEND,   /* backend($p, EXPR): EXPR read in a backend */
	PGBT_RESOLVED_DERIVED,      /* A + B, and the builtins (shmem.base, cpus) */
	PGBT_RESOLVED_SET,          /* a set a loop walks: rows, strings(A), enum(T) */
	PGBT_RESOLVED_MACHINE,      /* what the machine can do (watchpoints) */
};

struct pgbt_resolved_fact {
	enum pgbt_resolved_kind kind;
	char *expr;             /* as the template spells it */
	char *value;            /* as rendered ("" for a set) */
	char *how;              /* where it came from ("DWARF"...), or "" */
	pid_t pid;              /* whose memory was read: 0, the postmaster's */
	char *line;             /* its provenance line(s), each "//   ...\n" */
};

struct pgbt_resolved {
	struct pgbt_resolved_fact *v;
	size_t n, cap;
	bool oom;
};

/* The value of expr as read in pid (0: the postmaster), when asked
 * before as a fact of a kind that holds for the whole rendering (an
 * address, pointer, offset, size or enumerator); else NULL. */
const char *pgbt_resolved_value(const struct pgbt_resolved *f, const char *expr, pid_t pid);

/* Adds a fact. Its provenance line is "//   EXPR = VALUE (HOW)" (no
 * parentheses when how is empty; "read in backend PID N" when pid is
 * set and how is empty), then detail (indented lines, or NULL), unless
 * expr is already there. On allocation failure f->oom is set. */
void pgbt_resolved_add(struct pgbt_resolved *f, enum pgbt_resolved_kind kind, const char *expr,
		    const char *value, const char *how, pid_t pid, const char *detail);
/* Adds a fact whose provenance line is given whole (sets, the machine). */
void pgbt_resolved_add_line(struct pgbt_resolved *f, enum pgbt_resolved_kind kind, const char *expr,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The provenance lines, in the order the facts were asked. */
void pgbt_resolved_write(const struct pgbt_resolved *f, struct pgbt_buf *out);
void pgbt_resolved_free(struct pgbt_resolved *f);

#endif
