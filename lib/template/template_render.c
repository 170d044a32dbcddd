/* Rendering: a parsed template's tree filled in for one target, after
 * the provenance block that says where every value came from. */
#include "template.h"

#include "lib/common/buf.h"
#include "expr.h"
#include "lib/found/proc.h"
#include "template_tree.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROVENANCE_MARK "\001"

/* An enumeration a {{for}} walked: looked up once per render, so a loop
 * inside another neither scans the layout nor adds a provenance line on
 * every pass of the outer one. */
struct enum_seen {
	char type[256];
	struct pgbt_enumerator *items;
	size_t n;
};

#define ENUMS_SEEN_MAX 16

struct render {
	const struct pgbt_template *tpl;
	struct pgbt_eval ev;
	struct pgbt_var params[PGBT_MAX_PARAMS], lets[PGBT_MAX_LETS];
	struct pgbt_var args[PGBT_MAX_INCLUDES][PGBT_MAX_ARGS];    /* each include's */
	const char *text;       /* start of the template, for includes */
	char where[160];        /* the tag being rendered: "NAME:LINE" */
	bool marked;            /* provenance mark emitted */
	struct enum_seen enums[ENUMS_SEEN_MAX];
	size_t nenums;
	pid_t run_pid;          /* bpftrace -p: the process it follows, or 0 */
	char binary[PATH_MAX + 32];     /* {{ binary }} under its /proc root */
};

/* Copies literal text, dropping "//@" lines; the first becomes the mark
 * where the provenance block goes. */
static void emit_literal(struct render *r, struct pgbt_buf *out, const char *p, const char *e)
{
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *next = nl ? nl + 1 : e;
		bool line_start = p == r->text || p[-1] == '\n';

		if (line_start && (size_t)(e - p) >= strlen(DIRECTIVE) &&
		    strncmp(p, DIRECTIVE, strlen(DIRECTIVE)) == 0) {
			if (!r->marked)
				pgbt_buf_add(out, PROVENANCE_MARK "\n", 2);
			r->marked = true;
		} else {
			pgbt_buf_add(out, p, (size_t)(next - p));
		}
		p = next;
	}
}

static int render(struct render *r, const struct pgbt_node *v, size_t n, struct pgbt_buf *out,
		  struct pgbt_err *err);

/* A {{for}}'s body once for each of the first n rows, with var bound to
 * the row ({{VAR.COLUMN}}). */
static int render_rows(struct render *r, const struct pgbt_node *f, const char *var,
		       const struct pgbt_rows *rows, size_t n, struct pgbt_buf *out,
		       struct pgbt_err *err)
{
	int rc = 0;

	snprintf(r->ev.loop[r->ev.nloop].name, sizeof(r->ev.loop[0].name), "%s", var);
	r->ev.loop[r->ev.nloop].rows = rows;
	r->ev.loop[r->ev.nloop].item = NULL;
	r->ev.nloop++;
	for (size_t i = 0; i < n && rc == 0; i++) {
		r->ev.loop[r->ev.nloop - 1].row = i;
		rc = render(r, f->body, f->nbody, out, err);
	}
	r->ev.nloop--;
	r->ev.loop[r->ev.nloop].rows = NULL;
	return rc;
}

/* A {{for VAR in SOURCE}} tag's VAR (which must fit) and SOURCE; false
 * when it has not that shape. */
static bool for_parts(const char *inner, char *var, size_t len, const char **source)
{
	const char *p = inner + strspn(inner, " "), *v;
	size_t vl;

	if (strncmp(p, "for ", 4) != 0)
		return false;
	p += 4 + strspn(p + 4, " ");
	v = p;
	vl = strcspn(v, " ");
	p = v + vl + strspn(v + vl, " ");
	if (!vl || vl >= len || strncmp(p, "in ", 3) != 0)
		return false;
	snprintf(var, len, "%.*s", (int)vl, v);
	*source = p + 3 + strspn(p + 3, " ");
	return **source != '\0';
}

/* "FN(ARG)" of a {{for}}'s source: ARG into what, if it fits. */
static bool source_call(const char *source, const char *fn, char *what, size_t len)
{
	char *arg = pgbt_call_args(source, fn);
	bool ok = arg && arg[0] && !strchr(arg, ')') && strlen(arg) < len;

	if (ok)
		snprintf(what, len, "%s", arg);
	free(arg);
	return ok;
}

/* {{for R in NAME [limit EXPR]}}: one iteration per row the generator was
 * given (none when it was given no such rows), at most EXPR of them. */
static int render_rows_for(struct render *r, const struct pgbt_node *f, struct pgbt_buf *out,
			   struct pgbt_err *err)
{
	char var[32], what[64], value[64], *endp;
	const char *source, *limit = "";
	const struct pgbt_rows *rows = NULL;
	size_t n = 0, max = (size_t)-1, wl = 0;
	bool ok = for_parts(f->inner, var, sizeof(var), &source);

	if (ok) {
		wl = strcspn(source, " ");
		limit = source + wl + strspn(source + wl, " ");
		ok = wl < sizeof(what) && (!*limit || (strncmp(limit, "limit ", 6) == 0 &&
						     limit[6 + strspn(limit + 6, " ")]));
		limit += *limit ? 6 : 0;
	}
	if (!ok || r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s: cannot understand {{ %s }} (want: for X in enum(TYPE) "
				 "or for X in ROWS [limit N])", r->where, f->inner);
	snprintf(what, sizeof(what), "%.*s", (int)wl, source);
	if (limit[0]) {
		if (pgbt_eval(&r->ev, limit, value, sizeof(value), err) < 0)
			return -1;
		max = (size_t)strtoull(value, &endp, 10);
		if (*endp || !value[0] || value[0] == '-')
			return pgbt_fail(err, "%s: limit %s = '%s': not a count", r->where, limit,
					 value);
	}
	for (size_t i = 0; i < r->tpl->ntables; i++)
		if (strcmp(r->tpl->tables[i]->name, what) == 0)
			rows = r->tpl->tables[i];
	if (rows) {
		n = rows->nrows < max ? rows->nrows : max;
		pgbt_resolved_add_line(&r->ev.resolved, PGBT_RESOLVED_SET, what,
				    "//   %s: %zu of %zu rows (%s)%s\n", what, n, rows->nrows,
				    rows->origin, n < rows->nrows ? "; the rest print as OIDs" : "");
	}
	return render_rows(r, f, var, rows, n, out, err);
}

/* {{for S in strings(ARRAY)}}: one iteration per element of a global
 * array of C strings in the running server ({{S.index}}, {{S.value}}). */
static int render_strings_for(struct render *r, const struct pgbt_node *f,
			      struct pgbt_buf *out, struct pgbt_err *err)
{
	char var[32], what[256], how[PGBT_HOW_LEN];
	const char *source;
	struct pgbt_rows rows;
	int rc;

	if (!for_parts(f->inner, var, sizeof(var), &source) ||
	    !source_call(source, "strings", what, sizeof(what)) ||
	    r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s: cannot understand {{ %s }} (want: for X in "
				 "strings(ARRAY))", r->where, f->inner);
	/* 63: bpftrace's default string size, with its NUL */
	if (pgbt_target_strings(r->ev.t, what, 63, &rows, how, err) < 0)
		return pgbt_fail_prefix(err, "%s", r->where);
	pgbt_resolved_add_line(&r->ev.resolved, PGBT_RESOLVED_SET, source, "//   strings(%s): %s\n", what, how);
	rc = render_rows(r, f, var, &rows, rows.nrows, out, err);
	pgbt_rows_free(&rows);
	return rc;
}

/* The enumerators of type, from the target on first use (with their
 * provenance line), after that from r's cache. */
static int enum_lookup(struct render *r, const char *type, struct pgbt_enumerator **items,
		       size_t *n, struct pgbt_err *err)
{
	char how[PGBT_HOW_LEN];
	struct enum_seen *seen;

	for (size_t i = 0; i < r->nenums; i++)
		if (strcmp(r->enums[i].type, type) == 0) {
			*items = r->enums[i].items;
			*n = r->enums[i].n;
			return 0;
		}
	if (r->nenums == ENUMS_SEEN_MAX)
		return pgbt_fail(err, "more than %d enumerations walked", ENUMS_SEEN_MAX);
	if (pgbt_target_enum(r->ev.t, type, items, n, how, err) < 0)
		return -1;
	pgbt_resolved_add_line(&r->ev.resolved, PGBT_RESOLVED_SET, type, "//   enum(%s): %zu names (%s)\n",
			    type, *n, how);
	seen = &r->enums[r->nenums++];
	snprintf(seen->type, sizeof(seen->type), "%s", type);
	seen->items = *items;
	seen->n = *n;
	return 0;
}

static int render_for(struct render *r, const struct pgbt_node *f, struct pgbt_buf *out,
		      struct pgbt_err *err)
{
	char var[32], what[256];
	const char *source;
	struct pgbt_enumerator *items = NULL;
	size_t n = 0;
	int rc = 0;

	if (strstr(f->inner, " strings("))
		return render_strings_for(r, f, out, err);
	if (!strstr(f->inner, " enum("))
		return render_rows_for(r, f, out, err);
	if (!for_parts(f->inner, var, sizeof(var), &source) ||
	    !source_call(source, "enum", what, sizeof(what)) ||
	    r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s: cannot understand {{ %s }} (want: for X in enum(TYPE))",
				 r->where, f->inner);
	if (enum_lookup(r, what, &items, &n, err) < 0)
		return pgbt_fail_prefix(err, "%s", r->where);
	snprintf(r->ev.loop[r->ev.nloop].name, sizeof(r->ev.loop[0].name), "%s", var);
	r->ev.nloop++;
	for (size_t i = 0; i < n && rc == 0; i++) {
		r->ev.loop[r->ev.nloop - 1].item = &items[i];
		rc = render(r, f->body, f->nbody, out, err);
	}
	r->ev.nloop--;
	return rc;
}

/* The fragment whose text holds offset at, or NULL. */
static const struct pgbt_include *include_at(const struct pgbt_template *tpl, size_t at)
{
	for (size_t i = 0; i < tpl->nincludes; i++)
		if (at >= tpl->includes[i].from && at < tpl->includes[i].to)
			return &tpl->includes[i];
	return NULL;
}

/* What the evaluator reads: the template's parameters and lets. */
static void scope_init(struct render *r)
{
	const struct pgbt_template *tpl = r->tpl;

	for (size_t i = 0; i < tpl->nparams; i++) {
		const struct pgbt_param *p = &tpl->params[i];
		r->params[i] = (struct pgbt_var){ p->name, p->set ? p->value : p->def,
						  p->type == PARAM_BACKEND };
	}
	for (size_t i = 0; i < tpl->nlets; i++)
		r->lets[i] = (struct pgbt_var){ tpl->lets[i].name, tpl->lets[i].expr, false };
	for (size_t i = 0; i < tpl->nincludes; i++)
		for (size_t j = 0; j < tpl->includes[i].nargs; j++)
			r->args[i][j] = (struct pgbt_var){ tpl->includes[i].keys[j],
							   tpl->includes[i].values[j], false };
	snprintf(r->where, sizeof(r->where), "%s", tpl->name);
	r->ev.scope = (struct pgbt_scope){
		.name = tpl->name,
		.where = r->where,
		.lets = r->lets, .nlets = tpl->nlets,
		.params = r->params, .nparams = tpl->nparams,
		.bpftrace = tpl->bpftrace,
		.connected = tpl->ntables > 0,
		.watchpoint_test = tpl->watchpoint_test,
	};
}

/* The evaluator reads inc's arguments (NULL: outside any fragment). */
static void in_fragment(struct render *r, const struct pgbt_include *inc)
{
	r->ev.scope.fragment = inc ? inc->name : NULL;
	r->ev.scope.args = inc ? r->args[inc - r->tpl->includes] : NULL;
	r->ev.scope.nargs = inc ? inc->nargs : 0;
}

static int render(struct render *r, const struct pgbt_node *v, size_t n, struct pgbt_buf *out,
		  struct pgbt_err *err)
{
	char value[PATH_MAX + 64];      /* a path, at the longest */
	bool cond;

	for (size_t i = 0; i < n; i++) {
		const struct pgbt_node *node = &v[i];

		if (node->kind == NODE_TEXT) {
			emit_literal(r, out, node->from, node->to);
			continue;
		}
		in_fragment(r, include_at(r->tpl, (size_t)(node->open - r->text)));
		pgbt_template_where(r->tpl, node->line, r->where, sizeof(r->where));
		if (node->kind == NODE_FOR) {
			if (render_for(r, node, out, err) < 0)
				return -1;
		} else if (node->kind == NODE_IF) {
			if (pgbt_eval_cond(&r->ev, node->inner + 2, &cond, err) < 0)
				return -1;
			if (cond && render(r, node->body, node->nbody, out, err) < 0)
				return -1;
			if (!cond && render(r, node->els, node->nels, out, err) < 0)
				return -1;
		} else {
			if (pgbt_eval(&r->ev, node->inner, value, sizeof(value), err) < 0)
				return -1;
			pgbt_buf_add(out, value, strlen(value));
		}
	}
	return 0;
}

/* What bpftrace -p does for a script that follows one process. */
static void run_provenance(const struct render *r, struct pgbt_buf *b)
{
	const struct pgbt_bpftrace *bt = r->tpl->bpftrace;
	int pid = (int)r->run_pid;

	if (pgbt_bpftrace_scopes_uprobes(bt))
		pgbt_buf_printf(b, "// bpftrace -p: %d, as the Run line says: bpftrace then attaches the "
				"probes to that process alone (without -p its uprobes trap in every "
				"process of the server, whatever the filters say)", pid);
	else
		pgbt_buf_printf(b, "// bpftrace -p: %d, as the Run line says: bpftrace v%d.%d.%d then "
				"keeps its USDT probes and watchpoints to that process, but not its "
				"uprobes (0.20 and later do): they trap in every process of the server, "
				"at the cost the header's Cost line gives", pid,
				bt ? bt->version[0] : 0, bt ? bt->version[1] : 17, bt ? bt->version[2] : 0);
	if (r->ev.binary)
		pgbt_buf_printf(b, "; the binary's path is under that process's root, as -p wants it");
	pgbt_buf_printf(b, "\n");
}

/* The Run line: how to run bpftrace on this rendering. */
static void run_line(const struct render *r, struct pgbt_buf *b)
{
	const struct pgbt_bpftrace *bt = r->tpl->bpftrace;
	const char *prog = bt && bt->program[0] ? bt->program : "bpftrace";
	const char *sudo = r->tpl->as_root ? "" : "sudo ";

	pgbt_buf_printf(b, "// Run: %s | %s%s -p %d -   (from a file: %s%s -p %d FILE)\n",
			r->tpl->command ? r->tpl->command : "pgbt-gen ...", sudo, prog,
			(int)r->run_pid, sudo, prog, (int)r->run_pid);
}

static void provenance(struct render *r, struct pgbt_buf *b)
{
	struct pgbt_target *t = r->ev.t;
	const struct pgbt_template *tpl = r->tpl;
	char types[2048];

	pgbt_buf_printf(b, "// Rendered by pgbt-gen %s from %s (%s).\n", PGBT_VERSION,
			tpl->name, tpl->origin);
	pgbt_buf_printf(b, "// binary:     %s\n", r->ev.binary ? r->ev.binary : t->path);
	if (strcmp(t->path, t->exe) != 0)
		pgbt_buf_printf(b, "//             (%s inside the process's root)\n", t->exe);
	pgbt_buf_printf(b, "// build-id:   %s\n", pgbt_elf_build_id(t->elf)[0] ? pgbt_elf_build_id(t->elf) : "none");
	pgbt_buf_printf(b, "// version:    %s\n", t->version);
	if (t->pid) {
		pgbt_buf_printf(b, "// postmaster: PID %d", (int)t->pid);
		if (t->named_pid && t->named_pid != t->pid)
			pgbt_buf_printf(b, " (parent of the named PID %d)", (int)t->named_pid);
		pgbt_buf_printf(b, ", data directory %s", t->datadir);
		if (strcmp(t->datadir, t->datadir_inside) != 0)
			pgbt_buf_printf(b, " (%s inside)", t->datadir_inside);
		if (t->datadir_version[0])
			pgbt_buf_printf(b, " (PG_VERSION %s)", t->datadir_version);
		pgbt_buf_printf(b, "\n");
	} else {
		pgbt_buf_printf(b, "// postmaster: none (rendered offline from the binary)\n");
	}
	if (t->types_opened) {
		pgbt_target_types_origin(t, types, sizeof(types));
		pgbt_buf_printf(b, "// types:      %s\n", types);
	}
	pgbt_buf_printf(b, "// USDT:       %zu probe sites in .note.stapsdt\n", t->usdt.n);
	if (t->other_pidns)
		pgbt_buf_printf(b, "// PIDs:       the server runs in its own PID namespace (its postmaster "
				"is PID %d there, %d here, %d level%s below): printed PIDs are "
				"the server's (pg_stat_activity.pid)\n", (int)t->nspid, (int)t->pid,
				t->pidns_depth, t->pidns_depth == 1 ? "" : "s");
	pgbt_buf_printf(b, "// bpftrace:   %s\n", tpl->bpftrace ? tpl->bpftrace->how :
			"unknown: rendered for v" PGBT_BPFTRACE_OLDEST " and later");
	if (r->run_pid)
		run_provenance(r, b);
	if (tpl->nparams) {
		pgbt_buf_printf(b, "// parameters:");
		for (size_t i = 0; i < tpl->nparams; i++) {
			const struct pgbt_param *p = &tpl->params[i];
			pgbt_buf_printf(b, " %s=%s%s", p->name, p->set ? p->value : p->def,
					p->set ? "" : " (default)");
			if (p->named)
				pgbt_buf_printf(b, " (PID %ld in the server's namespace)", p->named);
		}
		pgbt_buf_printf(b, "\n");
	}
	if (r->ev.notes.len)
		pgbt_buf_add(b, r->ev.notes.s, r->ev.notes.len);
	if (r->ev.resolved.n) {
		pgbt_buf_printf(b, "// resolved:\n");
		pgbt_resolved_write(&r->ev.resolved, b);
	}
}

void pgbt_template_set_bpftrace(struct pgbt_template *tpl, const struct pgbt_bpftrace *bt)
{
	tpl->bpftrace = bt;
}

void pgbt_template_set_watchpoint_test(struct pgbt_template *tpl,
				       int (*test)(struct pgbt_err *err))
{
	tpl->watchpoint_test = test;
}

void pgbt_template_set_command(struct pgbt_template *tpl, const char *command, bool as_root)
{
	tpl->command = command;
	tpl->as_root = as_root;
}

/* "//@ bpftrace -p $NAME [if COND]": the process of backend parameter NAME
 * (already our PID for it), unless it is 0 or COND is false. */
static int find_run_pid(struct render *r, pid_t *ret, struct pgbt_err *err)
{
	const struct pgbt_template *tpl = r->tpl;
	const struct pgbt_param *p = pgbt_template_param(tpl, tpl->run_param);
	bool cond = true;
	long pid;

	*ret = 0;
	if (!tpl->run_param[0] || !p)
		return 0;
	pid = strtol(p->set ? p->value : p->def, NULL, 10);
	if (pid <= 0)
		return 0;
	snprintf(r->where, sizeof(r->where), "%s: //@ bpftrace -p $%s if", tpl->name, p->name);
	if (tpl->run_cond && pgbt_eval_cond(&r->ev, tpl->run_cond, &cond, err) < 0)
		return -1;
	*ret = cond ? (pid_t)pid : 0;
	return 0;
}

/* bpftrace -p PID puts a probe's path under /proc/PID/root unless it
 * starts there already, and 0.27 then attaches each USDT probe twice, for
 * both paths (every event counted twice; measured on 0.27.1): a rendering
 * for -p names the binary under the followed process's root, the same
 * file (checked; children share the postmaster's root, also in a
 * container), which works without -p too. */
static void binary_under(struct render *r)
{
	const struct pgbt_target *t = r->ev.t;
	struct stat a, b;

	if (!r->run_pid)
		return;
	snprintf(r->binary, sizeof(r->binary), "/proc/%d/root%s", (int)r->run_pid, t->exe);
	if (stat(r->binary, &a) == 0 && stat(t->path, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		r->ev.binary = r->binary;
}

int pgbt_template_run_pid(const struct pgbt_template *tpl, struct pgbt_target *t, pid_t *ret,
			  struct pgbt_err *err)
{
	struct render r = { .tpl = tpl, .ev = { .t = t }, .text = tpl->text };
	int rc;

	scope_init(&r);
	rc = find_run_pid(&r, ret, err);
	pgbt_eval_free(&r.ev);
	return rc;
}

int pgbt_template_resolve_backends(struct pgbt_template *tpl, const struct pgbt_target *t,
				   struct pgbt_err *err)
{
	for (size_t i = 0; i < tpl->nparams; i++) {
		struct pgbt_param *p = &tpl->params[i];
		pid_t host;
		long named = strtol(p->set ? p->value : p->def, NULL, 10);

		if (p->type != PARAM_BACKEND || named == 0 || !t->other_pidns)
			continue;
		if (named == t->nspid) {    /* check_backends: "is the postmaster" */
			snprintf(p->value, sizeof(p->value), "%d", (int)t->pid);
			p->set = true;
			p->named = named;
			continue;
		}
		if (pgbt_proc_child_by_nspid(t->pid, (pid_t)named, &host, err) < 0)
			return pgbt_fail_prefix(err, "%s: %s=%ld (the server runs in its own PID "
						"namespace; give the PID pg_stat_activity.pid shows)",
						tpl->name, p->name, named);
		snprintf(p->value, sizeof(p->value), "%d", (int)host);
		p->set = true;
		p->named = named;
	}
	return 0;
}

/* A backend parameter other than 0 names a live child of the postmaster. */
static int check_backends(const struct pgbt_template *tpl, const struct pgbt_target *t,
			  struct pgbt_err *err)
{
	for (size_t i = 0; i < tpl->nparams; i++) {
		const struct pgbt_param *p = &tpl->params[i];
		const char *v = p->set ? p->value : p->def;
		pid_t pid = (pid_t)strtol(v, NULL, 10), parent = 0;
		struct pgbt_err ignored;

		if (p->type != PARAM_BACKEND || pid == 0)
			continue;
		if (!t->pid)
			return pgbt_fail(err, "%s: %s=%d names a backend, which needs a running "
					 "server; name it with -p PID or -D DATADIR instead of --bin",
					 tpl->name, p->name, (int)pid);
		if (pid == t->pid)
			return pgbt_fail(err, "%s: %s=%d is the postmaster; name one of its backends "
					 "(pg_stat_activity.pid)", tpl->name, p->name, (int)pid);
		if (!pgbt_proc_exists(pid) || pgbt_proc_ppid(pid, &parent, &ignored) < 0)
			return pgbt_fail(err, "%s: %s=%d: no such process", tpl->name, p->name,
					 (int)pid);
		if (parent != t->pid)
			return pgbt_fail(err, "%s: %s=%d is not a backend of postmaster %d (its parent "
					 "is %d); see pg_stat_activity.pid", tpl->name, p->name,
					 (int)pid, (int)t->pid, (int)parent);
	}
	return 0;
}

/* The Run line goes after a "#!" line, else first; *mark moves with the
 * text after it. */
static void insert_run_line(const struct render *r, struct pgbt_buf *body, char **mark)
{
	struct pgbt_buf b = {0};
	size_t at = 0, mark_at = *mark ? (size_t)(*mark - body->s) : 0;

	if (body->len > 2 && strncmp(body->s, "#!", 2) == 0) {
		const char *nl = memchr(body->s, '\n', body->len);
		at = nl ? (size_t)(nl + 1 - body->s) : body->len;
	}
	pgbt_buf_add(&b, body->s, at);
	run_line(r, &b);
	if (*mark && mark_at >= at)
		mark_at += b.len - at;
	pgbt_buf_add(&b, body->s + at, body->len - at);
	pgbt_buf_free(body);
	*body = b;
	*mark = *mark && b.s ? b.s + mark_at : NULL;
}

int pgbt_template_render(const struct pgbt_template *tpl, struct pgbt_target *t,
			 char **ret, struct pgbt_err *err)
{
	return pgbt_template_render_resolved(tpl, t, ret, NULL, err);
}

int pgbt_template_render_resolved(const struct pgbt_template *tpl, struct pgbt_target *t,
				  char **ret, struct pgbt_resolved *resolved,
				  struct pgbt_err *err)
{
	struct render r = { .tpl = tpl, .ev = { .t = t }, .text = tpl->text };
	struct pgbt_buf body = {0}, out = {0};
	char *mark;
	int rc;

	*ret = NULL;
	scope_init(&r);
	rc = check_backends(tpl, t, err);
	if (rc == 0)
		rc = find_run_pid(&r, &r.run_pid, err);
	if (rc == 0) {
		binary_under(&r);
		rc = render(&r, tpl->nodes, tpl->nnodes, &body, err);
	}
	if (rc == 0 && body.oom)
		rc = pgbt_fail(err, "%s: out of memory", tpl->name);
	if (rc == 0) {
		mark = body.s ? strstr(body.s, PROVENANCE_MARK "\n") : NULL;
		if (r.run_pid)
			insert_run_line(&r, &body, &mark);
		if (mark)
			pgbt_buf_add(&out, body.s, (size_t)(mark - body.s));
		provenance(&r, &out);
		if (mark)
			pgbt_buf_add(&out, mark + 2, strlen(mark + 2));
		else if (body.s)
			pgbt_buf_add(&out, body.s, body.len);
		if (out.oom)
			rc = pgbt_fail(err, "%s: out of memory", tpl->name);
		else
			*ret = out.s;
	}
	if (rc < 0)
		pgbt_buf_free(&out);
	pgbt_buf_free(&body);
	if (rc == 0 && resolved) {
		*resolved = r.ev.resolved;        /* handed over */
		r.ev.resolved = (struct pgbt_resolved){0};
	}
	pgbt_eval_free(&r.ev);
	for (size_t i = 0; i < r.nenums; i++)
		free(r.enums[i].items);
	return rc;
}
