/* Templates: bpftrace text with placeholders that the generator fills in.
 *
 * A template is a bpftrace program. Its header comment follows the bpftrace
 * tools' convention (" * NAME<tab>summary" on its first line, then USAGE
 * and an example of real output). Lines starting with "//@" declare:
 *   //@ param NAME TYPE DEFAULT DESCRIPTION...
 *        TYPE: int:MIN..MAX | choice:a|b|c | ident | backend   (values
 *        are checked, so nothing a user passes can change the program's code)
 *        backend: a PID, 0 for none (the default must be 0); a PID other
 *        than 0 must be a live child of the postmaster (a backend or an
 *        auxiliary process), checked before rendering: "pid=N: no such
 *        process", "... is not a backend of postmaster M"
 *   //@ let NAME = EXPR        a name for an expression, used as {{NAME}}
 * The rendered script carries its provenance block where these were.
 *
 * Placeholders, {{ ... }}:
 *   {{ &(TransamVariables|ShmemVariableCache)->nextXid }}
 *        address in a live server: the global pointer is read from the
 *        postmaster's memory, checked to point into shared memory, and the
 *        member's offset added. "(A|B)" takes the first name the build has.
 *   {{ &MyProc }}  {{ &Global.member }}   address of a global (or member)
 *   {{ *my_wait_event_info }}   the pointer stored in a global, checked to
 *        point into shared memory (same "(A|B)" choice)
 *   {{ backend($pid, EXPR) }}   EXPR with every read of process memory
 *        (the pointers of "&G->m" and "*G") done in the backend that the
 *        backend-type parameter pid names instead of the postmaster, for
 *        per-backend globals: backend($pid, *my_wait_event_info) is that
 *        backend's PGPROC.wait_event_info. pid=0 is an error ("this needs
 *        pid=PID"). Symbols keep the postmaster's load bias (forked).
 *   {{ A + B }}                  the sum of two numbers (hex if either is),
 *        e.g. backend($pid, *MyProc + offsetof(PGPROC, wait_event_info))
 *   {{ error(TEXT) }}            stops rendering with "SCRIPT: TEXT", for
 *        combinations a template cannot serve ({{if}} around it)
 *   {{ offsetof(PGPROC, wait_event_info) }}  {{ sizeof(FullTransactionId) }}
 *   {{ WAIT_EVENT_PG_SLEEP }}    an enumerator's value
 *   {{ $interval }}              a parameter's (checked) value (a backend
 *        parameter: our PID for the process the user named)
 *   {{ postmaster.pid }} {{ binary }} {{ datadir }} {{ major }}
 *   {{ shmem.base }}             start of the postmaster's main shared memory
 *        segment (its largest shared mapping)
 *   {{ pg_pid }}                 a bpftrace expression for the current
 *        process's PID as PostgreSQL knows it (pg_stat_activity.pid): `pid`,
 *        or in a container (condition "pidns") its PID in its own namespace
 * Blocks, on lines of their own or inline:
 *   {{if usdt(postgresql:query__start)}} ... {{else}} ... {{end}}
 *        conditions: usdt(P:N), symbol(NAME), live, major OP N,
 *        bpftrace OP X.Y (the bpftrace rendered for), pidns (the server
 *        runs in another PID namespace),
 *        $param == value (OP: == != < <= > >=), negated with "!",
 *        joined with "&&" and "||" (&& binds tighter; no parentheses)
 *   {{for E in enum(WaitEventIO)}} @names[{{E.value}}] = "{{E.name}}"; {{end}}
 *        {{E.label}}: the name users see (DataFileRead for
 *        WAIT_EVENT_DATA_FILE_READ), a "label" fact of the built-in layout
 *        (lib/layout.h), or E.name when the layout has none
 * Shared text, on a line of its own:
 *   {{include wait-event-names}}  the text of scripts/include/NAME.bt (built
 *        in, or under --scripts-dir), inserted by pgbt-gen when it loads the
 *        template (pgbt_template_load), before anything else is read:
 *        always, whatever {{if}} it sits in; line numbers in errors count
 *        the inserted lines. Fragments do not include others.
 *   {{include lock-tag fields=acquire}}  the same with arguments (KEY=VALUE,
 *        letters, digits, '_', '.', '-'): inside that copy of the fragment
 *        $fields reads like a parameter ({{ $fields }}, {{if $fields ==
 *        acquire}}) and hides a parameter of that name; outside it, nothing
 *        changes. A fragment declares its arguments, a line "//@ arg NAME"
 *        each (dropped from the text); every include passes exactly those.
 *        Errors at load, naming the fragment and NAME: an argument missing
 *        or not declared, and a $NAME read in a fragment that is neither
 *        its argument nor a parameter (so an argument never falls back to
 *        a parameter of the same name).
 *   {{for R in relations limit $max_relations}} @relname[{{R.db}}, {{R.oid}}]
 *        = "{{R.name}}"; {{end}}   rows the generator was given
 *        (pgbt_template_add_rows: a database's catalog, with -d CONNINFO),
 *        at most LIMIT of them (an expression); {{R.COLUMN}} is a cell,
 *        already safe in a bpftrace string. No such rows: no iterations.
 *        Condition "connected": the generator was given rows.
 *   {{for S in strings(IndividualLWLockNames)}} @name[{{S.index}}] =
 *        "{{S.value}}"; {{end}}   a global array of C strings as the running
 *        server has it (read from the postmaster's memory; its length from
 *        the symbol's size), for names a backend may not have mapped yet
 *        (BPF cannot fault pages in). {{S.value}} is safe in a bpftrace
 *        string; a NULL element gives "".
 */
#ifndef PGBT_TEMPLATE_H
#define PGBT_TEMPLATE_H

#include "bpftrace.h"
#include "err.h"
#include "rows.h"
#include "target.h"

#include <stdbool.h>
#include <stddef.h>

#define PGBT_MAX_PARAMS 16
#define PGBT_MAX_LETS 32
#define PGBT_MAX_TABLES 4
#define PGBT_MAX_INCLUDES 16
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
	char expr[256];
};

/* Where {{include NAME KEY=VALUE...}} put a fragment's text, and its
 * arguments: those passed, which are exactly those the fragment declares. */
struct pgbt_include {
	char name[48];
	size_t from, to;        /* offsets in the template's text */
	char keys[PGBT_MAX_ARGS][32];
	char values[PGBT_MAX_ARGS][64];
	size_t nargs;
};

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
};

/* Requirements, found by reading the template without a target. */
struct pgbt_needs {
	bool live;      /* addresses in a running server */
	bool types;     /* offsets, sizes or enumerators: DWARF or a layout */
	bool usdt;      /* USDT probes, where the build has them */
	char live_expr[256];  /* the first expression that needs a process */
};

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

/* Backend parameters name a process as pg_stat_activity.pid shows it,
 * which in a container is not our PID for it: turned into ours here (the
 * provenance says both). Needs the live target. */
int pgbt_template_resolve_backends(struct pgbt_template *tpl, const struct pgbt_target *t,
				   struct pgbt_err *err);

void pgbt_template_needs(const struct pgbt_template *tpl, struct pgbt_needs *ret);

/* Renders for target t into a malloc'ed string (*ret). Nothing is returned
 * on error, so a caller never prints half a script. */
int pgbt_template_render(const struct pgbt_template *tpl, struct pgbt_target *t,
			 char **ret, struct pgbt_err *err);

#endif
