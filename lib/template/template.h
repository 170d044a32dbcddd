/* Templates: bpftrace text with {{ }} tags that the generator fills in for
 * one server. The language (the header, "//@" directives, values, blocks,
 * fragments) is described once, for template authors, in docs/templates.md.
 * This file is the API: parse or load (with fragments) a template, set its
 * parameters, rows and bpftrace, read its needs, render it for a target. */
#ifndef PGBT_TEMPLATE_H
#define PGBT_TEMPLATE_H

#include "lib/found/bpftrace.h"
#include "lib/common/err.h"
#include "expr.h"
#include "lib/found/rows.h"
#include "lib/target/target.h"

#include <stdbool.h>
#include <stddef.h>

#define PGBT_MAX_PARAMS 16
#define PGBT_MAX_LETS 32
#define PGBT_MAX_TABLES 4
#define PGBT_MAX_INCLUDES 32
#define PGBT_MAX_ARGS 4

enum pgbt_param_type { PARAM_INT, PARAM_CHOICE, PARAM_IDENT, PARAM_BACKEND };

struct pgbt_param {
	char name[32];
	enum pgbt_param_type type;
	long min, max;          /* int */
	char choices[256];      /* choice: "a|b|c" */
	char def[64];
	char desc[160];
	char value[64];         /* after pgbt_template_set_param or the default */
	bool set;
	long named;             /* backend: the PID the user gave, when the
				   server's namespace calls it so (else 0) */
};

struct pgbt_let {
	char name[64];
	char *expr;             /* owned: any length */
};

/* Where {{include NAME KEY=VALUE...}} put a fragment's text, and its
 * arguments: those passed, which are exactly those the fragment declares. */
struct pgbt_include {
	char name[48];
	size_t from, to;        /* offsets in the template's text */
	char keys[PGBT_MAX_ARGS][32];
	char values[PGBT_MAX_ARGS][64];
	size_t nargs;
	/* for messages: the include's line in the script, the fragment's
	   "//@ arg" lines (dropped from the text, ascending), and the lines
	   of the template's text the fragment took */
	int line;
	int arg_lines[PGBT_MAX_ARGS];
	size_t narg_lines;
	int first_line, nlines;
};

/* A piece of a parsed template (lib/template/template_tree.h): text, a value, a block. */
struct pgbt_node;

struct pgbt_template {
	char name[64];
	char summary[200];
	char origin[PATH_MAX];  /* "built in" or the file it was read from */
	char *text;
	size_t len;
	struct pgbt_param params[PGBT_MAX_PARAMS];
	size_t nparams;
	struct pgbt_let lets[PGBT_MAX_LETS];
	size_t nlets;
	const struct pgbt_rows *tables[PGBT_MAX_TABLES];   /* not owned */
	size_t ntables;
	struct pgbt_include includes[PGBT_MAX_INCLUDES];
	size_t nincludes;
	const struct pgbt_bpftrace *bpftrace;   /* not owned; NULL: the oldest */
	int (*watchpoint_test)(struct pgbt_err *err);   /* NULL: lib/found/hwbp.c's */
	/* "//@ report ..." lines, for pgbt-gen report (report/spec.h reads
	   them): the text after "report ", and each one's line */
	char **report;
	int *report_lines;
	size_t nreport;
	/* "//@ bpftrace -p $NAME [if COND]": the script follows the process of
	   backend parameter NAME, and bpftrace -p should attach to it */
	char run_param[32];
	char *run_cond;         /* owned; NULL: always */
	const char *command;    /* how the user asked for it, for the Run line
				   ("pgbt-gen -p 1234 lock-events pid=4243");
				   not owned, NULL: "pgbt-gen ..." */
	bool as_root;           /* the user is root: no "sudo" in the Run line */
	struct pgbt_node *nodes;        /* text parsed once: the top level */
	size_t nnodes;
};

/* Requirements (struct pgbt_needs, expr.h), found by reading the
 * template's tags as the evaluator reads them, without a target. */

int pgbt_template_parse(const char *name, const char *origin, const char *text,
			size_t len, struct pgbt_template *ret, struct pgbt_err *err);
void pgbt_template_free(struct pgbt_template *tpl);

/* The text of fragment NAME (scripts/include/NAME.bt): *ret malloc'ed. */
typedef int pgbt_fragment_reader(void *ctx, const char *name, char **ret,
				 size_t *ret_len, struct pgbt_err *err);

/* pgbt_template_parse after replacing each "{{include NAME [KEY=VALUE...]}}"
 * line by the fragment's text (read with read). */
int pgbt_template_load(const char *name, const char *origin, const char *text,
		       size_t len, pgbt_fragment_reader *read, void *ctx,
		       struct pgbt_template *ret, struct pgbt_err *err);

/* pgbt_template_parse with the template's includes known (for messages):
 * incs[ninc] were put in text by pgbt_template_load (template_include.c). */
int pgbt_template_parse_expanded(const char *name, const char *origin, const char *text,
				 size_t len, const struct pgbt_include *incs, size_t ninc,
				 struct pgbt_template *ret, struct pgbt_err *err);

/* Where line (of tpl's text, fragments included) came from, into ret:
 * "NAME:LINE" for a line of the script, "NAME, include/FRAGMENT:LINE" for
 * one of a fragment. */
void pgbt_template_where(const struct pgbt_template *tpl, int line, char *ret, size_t len);

/* The value of argument key of the include inc (NULL: not passed). */
const char *pgbt_include_arg(const struct pgbt_include *inc, const char *key);

/* The parameter NAME (without '$'), or NULL. */
const struct pgbt_param *pgbt_template_param(const struct pgbt_template *tpl, const char *name);

/* NAME=VALUE from the command line: unknown names and values that do not
 * match the parameter's type are errors naming both. */
int pgbt_template_set_param(struct pgbt_template *tpl, const char *assignment,
			    struct pgbt_err *err);

/* Rows the template can loop over by name ({{for R in NAME}}); the caller
 * keeps them alive until rendering is done. */
int pgbt_template_add_rows(struct pgbt_template *tpl, const struct pgbt_rows *rows,
			   struct pgbt_err *err);

/* The bpftrace the script will run on ({{if bpftrace >= 0.21}}); the
 * caller keeps it alive until rendering is done. Without it, templates
 * are rendered for the oldest supported bpftrace. */
void pgbt_template_set_bpftrace(struct pgbt_template *tpl, const struct pgbt_bpftrace *bt);

/* How {{if watchpoints}} tests this machine (see watchpoint_test in
 * expr.h): for tests, a machine of either kind; by default
 * pgbt_hw_watchpoints_fire (lib/found/hwbp.h). */
void pgbt_template_set_watchpoint_test(struct pgbt_template *tpl,
				       int (*test)(struct pgbt_err *err));

/* Backend parameters name a process as pg_stat_activity.pid shows it,
 * which in a container is not our PID for it: turned into ours here (the
 * provenance says both). Needs the live target. */
int pgbt_template_resolve_backends(struct pgbt_template *tpl, const struct pgbt_target *t,
				   struct pgbt_err *err);

void pgbt_template_needs(const struct pgbt_template *tpl, struct pgbt_needs *ret);

/* The command line that rendered tpl ("pgbt-gen -p 1234 lock-events
 * pid=4243"), quoted for a shell, and whether its user is root: what the
 * rendering's Run line tells to run. The caller keeps command alive. */
void pgbt_template_set_command(struct pgbt_template *tpl, const char *command, bool as_root);

/* The PID bpftrace -p should attach to for tpl on target t: the host's PID
 * of the backend its "//@ bpftrace -p $NAME" directive names, when that
 * parameter is not 0 and the directive's condition holds; else 0. After
 * pgbt_template_resolve_backends. */
int pgbt_template_run_pid(const struct pgbt_template *tpl, struct pgbt_target *t, pid_t *ret,
			  struct pgbt_err *err);

/* Renders for target t into a malloc'ed string (*ret). Nothing is returned
 * on error, so a caller never prints half a script. A script that follows
 * one process (pgbt_template_run_pid) gets a Run line after its first
 * line (how to run bpftrace -p on it) and a provenance line about it, and
 * in a container the binary's path under that process's /proc/PID/root,
 * which bpftrace -p takes as it is. */
int pgbt_template_render(const struct pgbt_template *tpl, struct pgbt_target *t,
			 char **ret, struct pgbt_err *err);
/* The same, and the facts it resolved (resolved.h) in *resolved, which
 * the caller frees (pgbt_resolved_free). */
int pgbt_template_render_resolved(const struct pgbt_template *tpl, struct pgbt_target *t,
				  char **ret, struct pgbt_resolved *resolved,
				  struct pgbt_err *err);

#endif
