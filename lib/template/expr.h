/* Evaluates the expressions and conditions inside a template's {{ }} (see
 * docs/templates.md for the language) against a target, and writes down how
 * every value was found, for the provenance block. */
#ifndef PGBT_EXPR_H
#define PGBT_EXPR_H

#include "lib/found/bpftrace.h"
#include "lib/common/buf.h"
#include "lib/template/resolved.h"
#include "lib/types/dwarf.h"
#include "lib/common/err.h"
#include "lib/found/rows.h"
#include "lib/target/target.h"

#include <stdbool.h>

#define PGBT_MAX_SEEN 128

struct pgbt_binding {
	char name[32];
	const struct pgbt_enumerator *item;     /* for X in enum(T) */
	const struct pgbt_rows *rows;           /* for X in ROWS: row i */
	size_t row;
};

/* A name and what it stands for: a parameter's value, a fragment's
 * argument, or a let's expression. */
struct pgbt_var {
	const char *name, *value;
	bool backend;                   /* a parameter of type backend (a PID) */
};

/* What the template being rendered gives its expressions to read. */
struct pgbt_scope {
	const char *name;               /* the template's, for messages to users */
	const char *where;              /* the tag's "NAME:LINE", for the others */
	const struct pgbt_var *lets, *params;
	size_t nlets, nparams;
	const char *fragment;           /* the fragment being rendered, or NULL */
	const struct pgbt_var *args;    /* its arguments, which hide parameters */
	size_t nargs;
	const struct pgbt_bpftrace *bpftrace;   /* NULL: the oldest supported */
	bool connected;                 /* given rows from a connection (-d) */
	/* {{if watchpoints}}: whether this machine's hardware watchpoints
	   fire (1), do not (0) or cannot be tested (-1, err says why) */
	int (*watchpoint_test)(struct pgbt_err *err);
};

struct pgbt_eval {
	struct pgbt_target *t;
	struct pgbt_scope scope;
	struct pgbt_binding loop[4];
	size_t nloop;
	int depth;                      /* of let expansion, against cycles */
	pid_t in_pid;                   /* whose memory is read: a backend
					   inside backend(), else 0 (postmaster) */
	const char *binary;             /* {{ binary }} when not t->path (the
					   path under a backend's /proc root) */
	struct pgbt_resolved resolved;        /* what was asked, for the provenance block */
	struct pgbt_buf notes;          /* "// KEY: TEXT" lines of {{ note() }} */
	int watchpoints;                /* watchpoint_test's answer + 2, once asked */
	char *seen[PGBT_MAX_SEEN];      /* notes already in notes */
	size_t nseen;
};

int pgbt_eval(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
	      struct pgbt_err *err);

/* What a template needs of a server, read from its tags without one, by
 * the same reading of expressions that pgbt_eval dispatches on. */
struct pgbt_needs {
	bool live;      /* addresses in a running server */
	bool types;     /* offsets, sizes or enumerators: DWARF or a layout */
	bool usdt;      /* USDT probes, where the build has them */
	char live_expr[256];  /* the first expression that needs a process */
};
/* Adds what EXPR ({{ EXPR }}; lets expanded from scope) needs. */
void pgbt_expr_needs(const struct pgbt_scope *scope, const char *expr, struct pgbt_needs *n);
/* ... a condition ({{if COND}}) needs. */
void pgbt_cond_needs(const char *cond, struct pgbt_needs *n);
/* ... the source of a loop ({{for X in SOURCE}}) needs. */
void pgbt_for_needs(const char *source, struct pgbt_needs *n);
int pgbt_eval_cond(struct pgbt_eval *ev, const char *cond, bool *ret,
		   struct pgbt_err *err);
void pgbt_eval_free(struct pgbt_eval *ev);

#endif
