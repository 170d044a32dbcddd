#include "template.h"

#include "buf.h"
#include "expr.h"
#include "template_tree.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIRECTIVE "//@"
#define PROVENANCE_MARK "\001"

/* ---- parsing ---------------------------------------------------------- */

static int parse_type(struct pgbt_param *p, const char *type)
{
	char *end;

	if (strcmp(type, "ident") == 0) {
		p->type = PARAM_IDENT;
		return 0;
	}
	if (strcmp(type, "backend") == 0) {
		p->type = PARAM_BACKEND;    /* a PID; checked against the server at render */
		p->min = 0;
		p->max = 4194304;           /* PID_MAX_LIMIT */
		return 0;
	}
	if (strncmp(type, "choice:", 7) == 0 && type[7]) {
		p->type = PARAM_CHOICE;
		snprintf(p->choices, sizeof(p->choices), "%s", type + 7);
		return 0;
	}
	if (strncmp(type, "int:", 4) == 0) {
		p->type = PARAM_INT;
		errno = 0;
		p->min = strtol(type + 4, &end, 10);
		if (strncmp(end, "..", 2) != 0)
			return -1;
		p->max = strtol(end + 2, &end, 10);
		return (*end || errno || p->min > p->max) ? -1 : 0;
	}
	return -1;
}

/* Checks a value against its parameter's type. These checks are what
 * keeps user input from becoming bpftrace code. */
static int check_value(const struct pgbt_template *tpl, const struct pgbt_param *p,
		       const char *v, struct pgbt_err *err)
{
	char *end;
	long n;

	switch (p->type) {
	case PARAM_INT:
	case PARAM_BACKEND:
		errno = 0;
		n = strtol(v, &end, 10);
		if (!*v || *end || errno || !(isdigit((unsigned char)v[0]) || v[0] == '-') ||
		    n < p->min || n > p->max)
			return pgbt_fail(err, "%s: %s='%s': not an integer in %ld..%ld",
					 tpl->name, p->name, v, p->min, p->max);
		return 0;
	case PARAM_CHOICE: {
		size_t vl = strlen(v);
		for (const char *c = p->choices; *c;) {
			size_t cl = strcspn(c, "|");
			if (cl == vl && strncmp(c, v, vl) == 0 && vl)
				return 0;
			c += cl + (c[cl] == '|');
		}
		return pgbt_fail(err, "%s: %s='%s': not one of %s", tpl->name, p->name, v,
				 p->choices);
	}
	case PARAM_IDENT:
		if (*v && !isdigit((unsigned char)*v) && strlen(v) < 64 &&
		    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(v))
			return 0;
		return pgbt_fail(err, "%s: %s='%s': not a name (letters, digits, '_')",
				 tpl->name, p->name, v);
	}
	return -1;
}

static int parse_param(struct pgbt_template *tpl, char *args, struct pgbt_err *err)
{
	struct pgbt_param *p;
	char name[64], type[300], def[64];
	int used = 0;

	if (tpl->nparams == PGBT_MAX_PARAMS)
		return -1;
	p = &tpl->params[tpl->nparams];
	memset(p, 0, sizeof(*p));
	if (sscanf(args, "%63s %299s %63s %n", name, type, def, &used) < 3 || !used)
		return -1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->def, sizeof(p->def), "%s", def);
	snprintf(p->desc, sizeof(p->desc), "%s", args + used);
	p->desc[strcspn(p->desc, "\n")] = '\0';
	if (parse_type(p, type) < 0 || check_value(tpl, p, p->def, err) < 0 ||
	    (p->type == PARAM_BACKEND && strcmp(p->def, "0") != 0))
		return -1;
	tpl->nparams++;
	return 0;
}

static int parse_let(struct pgbt_template *tpl, char *args)
{
	struct pgbt_let *l;
	char *eq = strchr(args, '=');

	if (!eq || tpl->nlets == PGBT_MAX_LETS)
		return -1;
	l = &tpl->lets[tpl->nlets];
	pgbt_trim(args, (size_t)(eq - args), l->name, sizeof(l->name));
	pgbt_trim(eq + 1, strlen(eq + 1), l->expr, sizeof(l->expr));
	if (!l->name[0] || !l->expr[0])
		return -1;
	tpl->nlets++;
	return 0;
}

/* " * xid-rate<TAB>summary" in the header comment gives the summary. */
static void parse_summary_line(struct pgbt_template *tpl, const char *line)
{
	size_t nl = strlen(tpl->name);

	if (tpl->summary[0] || strncmp(line, " * ", 3) != 0)
		return;
	line += 3;
	if (strncmp(line, tpl->name, nl) != 0 || !isspace((unsigned char)line[nl]))
		return;
	pgbt_trim(line + nl, strlen(line + nl), tpl->summary, sizeof(tpl->summary));
}

/* Tags are read into fixed buffers (a node's inner): a longer one would
 * be cut, and what was cut would be lost without a word. */

static int check_tag_lengths(struct pgbt_template *tpl, struct pgbt_err *err)
{
	const char *p = tpl->text, *open, *close;

	while ((open = strstr(p, "{{")) && (close = strstr(open + 2, "}}"))) {
		if ((size_t)(close - open - 2) > PGBT_MAX_TAG) {
			int line = 1;
			for (const char *q = tpl->text; q < open; q++)
				line += *q == '\n';
			int rc = pgbt_fail(err, "%s:%d: a {{ }} of %zu bytes (at most %d)",
					   tpl->origin, line, (size_t)(close - open - 2), PGBT_MAX_TAG);
			pgbt_template_free(tpl);
			return rc;
		}
		p = close + 2;
	}
	return 0;
}

int pgbt_template_parse(const char *name, const char *origin, const char *text,
			size_t len, struct pgbt_template *ret, struct pgbt_err *err)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	memset(ret, 0, sizeof(*ret));
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	snprintf(ret->origin, sizeof(ret->origin), "%s", origin);
	ret->text = malloc(len + 1);
	if (!ret->text)
		return pgbt_fail(err, "%s: out of memory", origin);
	memcpy(ret->text, text, len);
	ret->text[len] = '\0';
	ret->len = len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[1024], *args;
		struct pgbt_err perr = { "" };

		lineno++;
		memcpy(line, p, l < sizeof(line) ? l : sizeof(line) - 1);
		line[l < sizeof(line) ? l : sizeof(line) - 1] = '\0';
		p += l + 1;
		parse_summary_line(ret, line);
		if (strncmp(line, DIRECTIVE, strlen(DIRECTIVE)) != 0)
			continue;
		args = line + strlen(DIRECTIVE);
		while (*args == ' ')
			args++;
		if (strncmp(args, "param ", 6) == 0 && parse_param(ret, args + 6, &perr) == 0)
			continue;
		if (strncmp(args, "let ", 4) == 0 && parse_let(ret, args + 4) == 0)
			continue;
		pgbt_template_free(ret);
		return pgbt_fail(err, "%s:%d: bad directive%s%s", origin, lineno,
				 perr.msg[0] ? ": " : "", perr.msg);
	}
	if (!ret->summary[0]) {
		pgbt_template_free(ret);
		return pgbt_fail(err, "%s: no header line \" * %s<TAB>summary\"", origin, name);
	}
	if (check_tag_lengths(ret, err) < 0)
		return -1;
	if (pgbt_tree_parse(ret->name, ret->text, ret->len, &ret->nodes, &ret->nnodes, err) < 0) {
		pgbt_template_free(ret);
		return -1;
	}
	return 0;
}

void pgbt_template_free(struct pgbt_template *tpl)
{
	pgbt_tree_free(tpl->nodes, tpl->nnodes);
	tpl->nodes = NULL;
	tpl->nnodes = 0;
	free(tpl->text);
	tpl->text = NULL;
}

const struct pgbt_param *pgbt_template_param(const struct pgbt_template *tpl, const char *name)
{
	for (size_t i = 0; i < tpl->nparams; i++)
		if (strcmp(tpl->params[i].name, name) == 0)
			return &tpl->params[i];
	return NULL;
}

int pgbt_template_set_param(struct pgbt_template *tpl, const char *assignment,
			    struct pgbt_err *err)
{
	const char *eq = strchr(assignment, '=');
	char names[512] = "";

	for (size_t i = 0; i < tpl->nparams && eq; i++) {
		struct pgbt_param *p = &tpl->params[i];
		if (strlen(p->name) != (size_t)(eq - assignment) ||
		    strncmp(p->name, assignment, (size_t)(eq - assignment)) != 0)
			continue;
		if (check_value(tpl, p, eq + 1, err) < 0)
			return -1;
		snprintf(p->value, sizeof(p->value), "%s", eq + 1);
		p->set = true;
		return 0;
	}
	for (size_t i = 0; i < tpl->nparams; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", tpl->params[i].name);
	if (!eq)
		return pgbt_fail(err, "%s: '%s' is not NAME=VALUE (parameters: %s)", tpl->name,
				 assignment, tpl->nparams ? names : "none");
	return pgbt_fail(err, "%s: no parameter '%.*s' (it has: %s)", tpl->name,
			 (int)(eq - assignment), assignment, tpl->nparams ? names : "none");
}

int pgbt_template_add_rows(struct pgbt_template *tpl, const struct pgbt_rows *rows,
			   struct pgbt_err *err)
{
	if (tpl->ntables == PGBT_MAX_TABLES)
		return pgbt_fail(err, "%s: more than %d tables of rows", tpl->name, PGBT_MAX_TABLES);
	tpl->tables[tpl->ntables++] = rows;
	return 0;
}

/* ---- requirements ----------------------------------------------------- */

static void needs_of(const struct pgbt_template *tpl, const char *e, struct pgbt_needs *n, int depth)
{
	while (*e == ' ')
		e++;
	if (strncmp(e, "if ", 3) == 0) {
		if (strstr(e, "usdt("))
			n->usdt = true;
		return;
	}
	if (strncmp(e, "for ", 4) == 0) {
		n->types = n->types || strstr(e, " enum(") != NULL;
		return;
	}
	for (size_t i = 0; i < tpl->nlets && depth < 8; i++) {
		size_t l = strlen(tpl->lets[i].name);
		if (strncmp(e, tpl->lets[i].name, l) == 0 && (e[l] == ' ' || !e[l])) {
			needs_of(tpl, tpl->lets[i].expr, n, depth + 1);
			return;
		}
	}
	if (e[0] == '&' || e[0] == '*' || strncmp(e, "backend(", 8) == 0 ||
	    strncmp(e, "postmaster.pid", 14) == 0 || strncmp(e, "datadir", 7) == 0 ||
	    strncmp(e, "shmem.base", 10) == 0) {
		/* name an address if there is one: it says more than a PID */
		if (!n->live || (e[0] == '&' && n->live_expr[0] != '&'))
			pgbt_trim(e, strcspn(e, "}"), n->live_expr, sizeof(n->live_expr));
		n->live = true;
	}
	if (e[0] == '&' && strpbrk(e, ".-"))
		n->types = true;
	if (strncmp(e, "offsetof(", 9) == 0 || strncmp(e, "sizeof(", 7) == 0 ||
	    (isupper((unsigned char)e[0]) && !strchr(e, '.')))
		n->types = true;
}

/* The needs of every tag in nodes, in both branches of each {{if}}. */
static void needs_of_nodes(const struct pgbt_template *tpl, const struct pgbt_node *v,
			   size_t n, struct pgbt_needs *ret)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind == NODE_TEXT)
			continue;
		needs_of(tpl, v[i].inner, ret, 0);
		needs_of_nodes(tpl, v[i].body, v[i].nbody, ret);
		needs_of_nodes(tpl, v[i].els, v[i].nels, ret);
	}
}

void pgbt_template_needs(const struct pgbt_template *tpl, struct pgbt_needs *ret)
{
	memset(ret, 0, sizeof(*ret));
	needs_of_nodes(tpl, tpl->nodes, tpl->nnodes, ret);
}

/* ---- rendering -------------------------------------------------------- */

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
	const char *text;       /* start of the template, for line numbers */
	bool marked;            /* provenance mark emitted */
	struct enum_seen enums[ENUMS_SEEN_MAX];
	size_t nenums;
};

static int line_of(const struct render *r, const char *at)
{
	return pgbt_line_in(r->text, at);
}

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

/* {{for R in NAME [limit EXPR]}}: one iteration per row the generator was
 * given (none when it was given no such rows), at most EXPR of them. */
static int render_rows_for(struct render *r, const struct pgbt_node *f, struct pgbt_buf *out,
			   struct pgbt_err *err)
{
	char var[32], what[64], limit[256] = "", value[64], *endp;
	const struct pgbt_rows *rows = NULL;
	size_t n = 0, max = (size_t)-1;

	if (sscanf(f->inner, "for %31s in %63s limit %255[^\n]", var, what, limit) < 2 ||
	    r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s:%d: cannot understand {{ %s }} (want: for X in enum(TYPE) "
				 "or for X in ROWS [limit N])", r->tpl->name, line_of(r, f->open),
				 f->inner);
	if (limit[0]) {
		if (pgbt_eval(&r->ev, limit, value, sizeof(value), err) < 0)
			return pgbt_fail_prefix(err, "%s:%d", r->tpl->name, line_of(r, f->open));
		max = (size_t)strtoull(value, &endp, 10);
		if (*endp || !value[0] || value[0] == '-')
			return pgbt_fail(err, "%s:%d: limit %s = '%s': not a count", r->tpl->name,
					 line_of(r, f->open), limit, value);
	}
	for (size_t i = 0; i < r->tpl->ntables; i++)
		if (strcmp(r->tpl->tables[i]->name, what) == 0)
			rows = r->tpl->tables[i];
	if (rows) {
		n = rows->nrows < max ? rows->nrows : max;
		pgbt_buf_printf(&r->ev.prov, "//   %s: %zu of %zu rows (%s)%s\n", what, n,
				rows->nrows, rows->origin,
				n < rows->nrows ? "; the rest print as OIDs" : "");
	}
	return render_rows(r, f, var, rows, n, out, err);
}

/* {{for S in strings(ARRAY)}}: one iteration per element of a global
 * array of C strings in the running server ({{S.index}}, {{S.value}}). */
static int render_strings_for(struct render *r, const struct pgbt_node *f,
			      struct pgbt_buf *out, struct pgbt_err *err)
{
	char var[32], what[256], how[PGBT_HOW_LEN];
	struct pgbt_rows rows;
	int rc;

	if (sscanf(f->inner, "for %31s in strings(%255[^)])", var, what) != 2 ||
	    r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s:%d: cannot understand {{ %s }} (want: for X in "
				 "strings(ARRAY))", r->tpl->name, line_of(r, f->open), f->inner);
	/* 63: bpftrace's default string size, with its NUL */
	if (pgbt_target_strings(r->ev.t, what, 63, &rows, how, err) < 0)
		return pgbt_fail_prefix(err, "%s:%d", r->tpl->name, line_of(r, f->open));
	pgbt_buf_printf(&r->ev.prov, "//   strings(%s): %s\n", what, how);
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
	pgbt_buf_printf(&r->ev.prov, "//   enum(%s): %zu names (%s)\n", type, *n, how);
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
	struct pgbt_enumerator *items = NULL;
	size_t n = 0;
	int used = 0, rc = 0;

	if (strstr(f->inner, " strings("))
		return render_strings_for(r, f, out, err);
	if (!strstr(f->inner, " enum("))
		return render_rows_for(r, f, out, err);
	if (sscanf(f->inner, "for %31s in enum(%255[^)]) %n", var, what, &used) != 2 ||
	    r->ev.nloop == sizeof(r->ev.loop) / sizeof(r->ev.loop[0]))
		return pgbt_fail(err, "%s:%d: cannot understand {{ %s }} (want: for X in enum(TYPE))",
				 r->tpl->name, line_of(r, f->open), f->inner);
	if (enum_lookup(r, what, &items, &n, err) < 0)
		return pgbt_fail_prefix(err, "%s:%d", r->tpl->name, line_of(r, f->open));
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
	r->ev.scope = (struct pgbt_scope){
		.name = tpl->name,
		.lets = r->lets, .nlets = tpl->nlets,
		.params = r->params, .nparams = tpl->nparams,
		.bpftrace = tpl->bpftrace,
		.connected = tpl->ntables > 0,
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
	char value[512];
	bool cond;

	for (size_t i = 0; i < n; i++) {
		const struct pgbt_node *node = &v[i];

		if (node->kind == NODE_TEXT) {
			emit_literal(r, out, node->from, node->to);
			continue;
		}
		in_fragment(r, include_at(r->tpl, (size_t)(node->open - r->text)));
		if (node->kind == NODE_FOR) {
			if (render_for(r, node, out, err) < 0)
				return -1;
		} else if (node->kind == NODE_IF) {
			if (pgbt_eval_cond(&r->ev, node->inner + 3, &cond, err) < 0)
				return pgbt_fail_prefix(err, "line %d", line_of(r, node->open));
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

static void provenance(struct render *r, struct pgbt_buf *b)
{
	struct pgbt_target *t = r->ev.t;
	const struct pgbt_template *tpl = r->tpl;
	char types[2048];

	pgbt_buf_printf(b, "// Rendered by pgbt-gen %s from %s (%s).\n", PGBT_VERSION,
			tpl->name, tpl->origin);
	pgbt_buf_printf(b, "// binary:     %s\n", t->path);
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
	if (r->ev.prov.len) {
		pgbt_buf_printf(b, "// resolved:\n");
		pgbt_buf_add(b, r->ev.prov.s, r->ev.prov.len);
	}
}

void pgbt_template_set_bpftrace(struct pgbt_template *tpl, const struct pgbt_bpftrace *bt)
{
	tpl->bpftrace = bt;
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

int pgbt_template_render(const struct pgbt_template *tpl, struct pgbt_target *t,
			 char **ret, struct pgbt_err *err)
{
	struct render r = { .tpl = tpl, .ev = { .t = t }, .text = tpl->text };
	struct pgbt_buf body = {0}, out = {0};
	char *mark;
	int rc;

	*ret = NULL;
	scope_init(&r);
	rc = check_backends(tpl, t, err);
	if (rc == 0)
		rc = render(&r, tpl->nodes, tpl->nnodes, &body, err);
	if (rc == 0 && body.oom)
		rc = pgbt_fail(err, "%s: out of memory", tpl->name);
	if (rc == 0) {
		mark = body.s ? strstr(body.s, PROVENANCE_MARK "\n") : NULL;
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
	pgbt_eval_free(&r.ev);
	for (size_t i = 0; i < r.nenums; i++)
		free(r.enums[i].items);
	return rc;
}

/* ---- includes --------------------------------------------------------- */

#define ARG_KEY_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
#define ARG_VALUE_CHARS ARG_KEY_CHARS ".-"

const char *pgbt_include_arg(const struct pgbt_include *inc, const char *key)
{
	for (size_t i = 0; inc && i < inc->nargs; i++)
		if (strcmp(inc->keys[i], key) == 0)
			return inc->values[i];
	return NULL;
}

/* "KEY=VALUE" into inc's arguments. */
static int add_arg(struct pgbt_include *inc, const char *w, size_t n, struct pgbt_err *err)
{
	const char *eq = memchr(w, '=', n);
	size_t kl = eq ? (size_t)(eq - w) : 0, vl = eq ? n - kl - 1 : 0;

	if (!eq || !kl || kl >= sizeof(inc->keys[0]) || isdigit((unsigned char)w[0]) ||
	    strspn(w, ARG_KEY_CHARS) != kl || !vl || vl >= sizeof(inc->values[0]) ||
	    strspn(eq + 1, ARG_VALUE_CHARS) < vl)
		return pgbt_fail(err, "'%.*s' is not KEY=VALUE (KEY: letters, digits, '_'; "
				 "VALUE: also '.' and '-')", (int)n, w);
	snprintf(inc->keys[inc->nargs], sizeof(inc->keys[0]), "%.*s", (int)kl, w);
	if (pgbt_include_arg(inc, inc->keys[inc->nargs]))
		return pgbt_fail(err, "%s is passed twice", inc->keys[inc->nargs]);
	if (inc->nargs == PGBT_MAX_ARGS)
		return pgbt_fail(err, "more than %d arguments", PGBT_MAX_ARGS);
	snprintf(inc->values[inc->nargs++], sizeof(inc->values[0]), "%.*s", (int)vl, eq + 1);
	return 0;
}

/* A line "{{include NAME [KEY=VALUE...]}}" (blanks around it allowed): 1
 * with inc and tag (the trimmed line) filled in, 0 when the line is
 * something else, -1 when an argument is malformed. */
static int include_line(const char *line, size_t n, struct pgbt_include *inc, char *tag,
			size_t tag_len, struct pgbt_err *err)
{
	const char *end = line + n, *w;

	while (line < end && (*line == ' ' || *line == '\t'))
		line++;
	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end - line < 13 || strncmp(line, "{{include ", 10) != 0 || strncmp(end - 2, "}}", 2) != 0)
		return 0;
	snprintf(tag, tag_len, "%.*s", (int)(end - line), line);
	memset(inc, 0, sizeof(*inc));
	end -= 2;
	for (w = line + 10; w < end && *w == ' '; w++)
		;
	for (size_t k = 0; w < end && *w != ' ' && *w != '\t'; w++)
		if (k + 1 < sizeof(inc->name))
			inc->name[k++] = *w;
	while (w < end) {
		size_t wl;

		while (w < end && (*w == ' ' || *w == '\t'))
			w++;
		for (wl = 0; w + wl < end && w[wl] != ' ' && w[wl] != '\t'; wl++)
			;
		if (wl && add_arg(inc, w, wl, err) < 0)
			return -1;
		w += wl;
	}
	return 1;
}

#define ARG_DIRECTIVE DIRECTIVE " arg "

/* " a b c" (inc's argument names, or " none") into list, for messages. */
static void list_keys(const struct pgbt_include *inc, char *list, size_t size)
{
	snprintf(list, size, "%s", inc->nargs ? "" : " none");
	for (size_t i = 0; i < inc->nargs; i++)
		snprintf(list + strlen(list), size - strlen(list), " %s", inc->keys[i]);
}

/* Appends fragment part to out without its "//@ arg NAME" lines, and
 * checks that inc passes exactly the arguments they declare. */
static int add_fragment(struct pgbt_buf *out, const char *part, size_t len,
			const struct pgbt_include *inc, struct pgbt_err *err)
{
	const size_t dl = strlen(ARG_DIRECTIVE);
	const char *p = part, *end = part + len;
	struct pgbt_include declared = { .nargs = 0 };    /* names only */
	char list[PGBT_MAX_ARGS * 34 + 8];

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p), line_len = nl ? n - 1 : n, k, blank;

		if (n < dl || strncmp(p, ARG_DIRECTIVE, dl) != 0) {
			pgbt_buf_add(out, p, n);
			p += n;
			continue;
		}
		k = strspn(p + dl, ARG_KEY_CHARS);
		for (blank = 0; dl + k + blank < line_len && strchr(" \t\r", p[dl + k + blank]); blank++)
			;
		if (!k || k >= sizeof(declared.keys[0]) || isdigit((unsigned char)p[dl]) ||
		    dl + k + blank != line_len)
			return pgbt_fail(err, "fragment %s: '%.*s' is not \"//@ arg NAME\"", inc->name,
					 (int)line_len, p);
		if (declared.nargs == PGBT_MAX_ARGS)
			return pgbt_fail(err, "fragment %s declares more than %d arguments", inc->name,
					 PGBT_MAX_ARGS);
		snprintf(declared.keys[declared.nargs++], sizeof(declared.keys[0]), "%.*s", (int)k, p + dl);
		p += n;
	}
	if (len && part[len - 1] != '\n')
		pgbt_buf_add(out, "\n", 1);
	list_keys(&declared, list, sizeof(list));
	for (size_t i = 0; i < inc->nargs; i++)
		if (!pgbt_include_arg(&declared, inc->keys[i]))
			return pgbt_fail(err, "fragment %s has no argument %s (it declares:%s)",
					 inc->name, inc->keys[i], list);
	for (size_t i = 0; i < declared.nargs; i++)
		if (!pgbt_include_arg(inc, declared.keys[i]))
			return pgbt_fail(err, "fragment %s needs %s=VALUE (it declares:%s)",
					 inc->name, declared.keys[i], list);
	return 0;
}

/* Replaces each include line by its fragment, noting where it went. */
static int expand_includes(const char *script, const char *text, size_t len,
			   pgbt_fragment_reader *read, void *ctx, struct pgbt_buf *out,
			   struct pgbt_include *incs, size_t *ninc, struct pgbt_err *err)
{
	const char *p = text, *end = text + len;
	int line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p), part_len;
		struct pgbt_include inc;
		struct pgbt_err why = { "" };
		char tag[256], *part;
		int rc;

		line++;
		p += n;
		rc = include_line(p - n, nl ? n - 1 : n, &inc, tag, sizeof(tag), &why);
		if (rc == 0) {
			pgbt_buf_add(out, p - n, n);
			continue;
		}
		if (rc == 1 && *ninc == PGBT_MAX_INCLUDES)
			rc = pgbt_fail(&why, "more than %d includes", PGBT_MAX_INCLUDES);
		if (rc < 0 || read(ctx, inc.name, &part, &part_len, &why) < 0)
			return pgbt_fail(err, "%s: line %d: %s: %s", script, line, tag, why.msg);
		inc.from = out->len;
		rc = add_fragment(out, part, part_len, &inc, &why);
		free(part);
		if (rc < 0)
			return pgbt_fail(err, "%s: line %d: %s: %s", script, line, tag, why.msg);
		inc.to = out->len;
		incs[(*ninc)++] = inc;
	}
	return out->oom ? pgbt_fail(err, "out of memory") : 0;
}

/* Every $NAME read in the tags of a fragment is an argument it declares
 * (its include passes exactly those: add_fragment) or a parameter,
 * whatever {{if}} it sits in. The tags are those of nodes (in the order of
 * the text) that stand in the fragment's span. */
static int check_arguments(const struct pgbt_template *tpl, const struct pgbt_include *inc,
			   const struct pgbt_node *v, size_t n, struct pgbt_err *err)
{
	for (size_t i = 0; i < n; i++) {
		size_t at = (size_t)(v[i].open - tpl->text);

		if (v[i].kind == NODE_TEXT)
			continue;
		for (const char *d = strchr(v[i].inner, '$'); at >= inc->from && at < inc->to && d;
		     d = strchr(d + 1, '$')) {
			size_t k = strspn(d + 1, ARG_KEY_CHARS);
			char key[64], list[PGBT_MAX_ARGS * 34 + 8];

			snprintf(key, sizeof(key), "%.*s", (int)k, d + 1);
			if (!k || pgbt_include_arg(inc, key) || pgbt_template_param(tpl, key))
				continue;
			list_keys(inc, list, sizeof(list));
			return pgbt_fail(err, "%s:%d: fragment %s reads $%s, which is neither an argument "
					 "it declares (it declares:%s) nor a parameter", tpl->name,
					 pgbt_line_in(tpl->text, v[i].open), inc->name, key, list);
		}
		if (check_arguments(tpl, inc, v[i].body, v[i].nbody, err) < 0 ||
		    check_arguments(tpl, inc, v[i].els, v[i].nels, err) < 0)
			return -1;
	}
	return 0;
}

int pgbt_template_load(const char *name, const char *origin, const char *text,
		       size_t len, pgbt_fragment_reader *read, void *ctx,
		       struct pgbt_template *ret, struct pgbt_err *err)
{
	struct pgbt_include incs[PGBT_MAX_INCLUDES];
	struct pgbt_buf full = { 0 };
	size_t ninc = 0;
	int rc;

	rc = expand_includes(name, text, len, read, ctx, &full, incs, &ninc, err);
	if (rc == 0)
		rc = pgbt_template_parse(name, origin, full.s ? full.s : "", full.len, ret, err);
	pgbt_buf_free(&full);
	if (rc < 0)
		return -1;
	memcpy(ret->includes, incs, ninc * sizeof(incs[0]));
	ret->nincludes = ninc;
	for (size_t i = 0; i < ninc; i++) {
		if (check_arguments(ret, &ret->includes[i], ret->nodes, ret->nnodes, err) < 0) {
			pgbt_template_free(ret);
			return -1;
		}
	}
	return 0;
}
