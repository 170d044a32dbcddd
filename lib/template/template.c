/* Templates: a script's text with its header and "//@" directives read
 * (parameters, lets), its parameters set from the command line, and its
 * needs found. Rendering is lib/template/template_render.c, fragments
 * lib/template/template_include.c, the tags' tree lib/template/template_tree.c. */
#include "template.h"

#include "lib/common/buf.h"
#include "template_tree.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (strncmp(type, "choice:", 7) == 0 && type[7] && strlen(type + 7) < sizeof(p->choices)) {
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

/* The next blank-separated word of *s, ended in place (NULL: none). */
static char *next_word(char **s)
{
	char *w;

	*s += strspn(*s, " \t");
	if (!**s)
		return NULL;
	w = *s;
	*s += strcspn(*s, " \t");
	if (**s)
		*(*s)++ = '\0';
	return w;
}

/* "NAME TYPE DEFAULT DESCRIPTION", each part whole or refused. */
static int parse_param(struct pgbt_template *tpl, char *args, struct pgbt_err *err)
{
	struct pgbt_param *p;
	char *name = next_word(&args), *type = next_word(&args), *def = next_word(&args);

	if (tpl->nparams == PGBT_MAX_PARAMS || !def)
		return -1;
	p = &tpl->params[tpl->nparams];
	memset(p, 0, sizeof(*p));
	args += strspn(args, " \t");
	if (!pgbt_trim(name, strlen(name), p->name, sizeof(p->name)) ||
	    !pgbt_trim(def, strlen(def), p->def, sizeof(p->def)) ||
	    !pgbt_trim(args, strlen(args), p->desc, sizeof(p->desc)))
		return pgbt_fail(err, "parameter %.32s: a name, default or description too "
				 "long (at most %zu, %zu and %zu bytes)", name, sizeof(p->name) - 1,
				 sizeof(p->def) - 1, sizeof(p->desc) - 1);
	if (parse_type(p, type) < 0 || check_value(tpl, p, p->def, err) < 0 ||
	    (p->type == PARAM_BACKEND && strcmp(p->def, "0") != 0))
		return -1;
	tpl->nparams++;
	return 0;
}

/* "report ...": kept as written, for pgbt-gen report (report/spec.c). */
static int keep_report_line(struct pgbt_template *tpl, const char *args, int lineno)
{
	char **lines = realloc(tpl->report, (tpl->nreport + 1) * sizeof(*lines));
	int *nums;

	if (!lines)
		return -1;
	tpl->report = lines;
	nums = realloc(tpl->report_lines, (tpl->nreport + 1) * sizeof(*nums));
	if (!nums)
		return -1;
	tpl->report_lines = nums;
	if (!(lines[tpl->nreport] = pgbt_trim_dup(args, strlen(args))))
		return -1;
	nums[tpl->nreport++] = lineno;
	return 0;
}

static int parse_let(struct pgbt_template *tpl, char *args)
{
	struct pgbt_let *l;
	char *eq = strchr(args, '=');

	if (!eq || tpl->nlets == PGBT_MAX_LETS)
		return -1;
	l = &tpl->lets[tpl->nlets];
	if (!pgbt_trim(args, (size_t)(eq - args), l->name, sizeof(l->name)) || !l->name[0])
		return -1;
	l->expr = pgbt_trim_dup(eq + 1, strlen(eq + 1));
	tpl->nlets++;           /* so that pgbt_template_free frees expr */
	return l->expr && l->expr[0] ? 0 : -1;
}

/* "-p $NAME [if COND]" of "//@ bpftrace": the backend parameter whose
 * process bpftrace -p should attach to (checked once every parameter is
 * read), and when. */
static int parse_run(struct pgbt_template *tpl, const char *args)
{
	size_t n;

	if (tpl->run_param[0] || strncmp(args, "-p $", 4) != 0)
		return -1;
	args += 4;
	n = strspn(args, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (!n || n >= sizeof(tpl->run_param))
		return -1;
	snprintf(tpl->run_param, sizeof(tpl->run_param), "%.*s", (int)n, args);
	args += n;
	args += strspn(args, " \t");
	if (!*args)
		return 0;
	if (strncmp(args, "if ", 3) != 0)
		return -1;
	tpl->run_cond = pgbt_trim_dup(args + 3, strlen(args + 3));
	return tpl->run_cond && tpl->run_cond[0] ? 0 : -1;
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


/* pgbt_template_where for the tree's messages. */
static void where_in(const void *tpl, int line, char *ret, size_t len)
{
	pgbt_template_where(tpl, line, ret, len);
}

int pgbt_template_parse(const char *name, const char *origin, const char *text,
			size_t len, struct pgbt_template *ret, struct pgbt_err *err)
{
	return pgbt_template_parse_expanded(name, origin, text, len, NULL, 0, ret, err);
}

int pgbt_template_parse_expanded(const char *name, const char *origin, const char *text,
				 size_t len, const struct pgbt_include *incs, size_t ninc,
				 struct pgbt_template *ret, struct pgbt_err *err)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	memset(ret, 0, sizeof(*ret));
	if (ninc)
		memcpy(ret->includes, incs, ninc * sizeof(incs[0]));
	ret->nincludes = ninc;
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
		char *line = strndup(p, l), *args;
		struct pgbt_err perr = { .msg = "" };
		bool directive, ok;

		lineno++;
		p += l + 1;
		if (!line) {
			pgbt_template_free(ret);
			return pgbt_fail(err, "%s: out of memory", origin);
		}
		parse_summary_line(ret, line);
		directive = strncmp(line, DIRECTIVE, strlen(DIRECTIVE)) == 0;
		args = directive ? line + strlen(DIRECTIVE) : line;
		while (*args == ' ')
			args++;
		ok = !directive ||
		     (strncmp(args, "param ", 6) == 0 && parse_param(ret, args + 6, &perr) == 0) ||
		     (strncmp(args, "let ", 4) == 0 && parse_let(ret, args + 4) == 0) ||
		     (strncmp(args, "report ", 7) == 0 && keep_report_line(ret, args + 7, lineno) == 0) ||
		     (strncmp(args, "bpftrace ", 9) == 0 && parse_run(ret, args + 9) == 0);
		free(line);
		if (ok)
			continue;
		pgbt_template_free(ret);
		return pgbt_fail(err, "%s:%d: bad directive%s%s", origin, lineno,
				 perr.msg[0] ? ": " : "", perr.msg);
	}
	if (ret->run_param[0] && (!pgbt_template_param(ret, ret->run_param) ||
				  pgbt_template_param(ret, ret->run_param)->type != PARAM_BACKEND)) {
		pgbt_fail(err, "%s: //@ bpftrace -p $%s: no backend parameter %s", origin,
			  ret->run_param, ret->run_param);
		pgbt_template_free(ret);
		return -1;
	}
	if (!ret->summary[0]) {
		pgbt_template_free(ret);
		return pgbt_fail(err, "%s: no header line \" * %s<TAB>summary\"", origin, name);
	}
	if (pgbt_tree_parse(ret->text, ret->len, where_in, ret, &ret->nodes, &ret->nnodes, err) < 0) {
		pgbt_template_free(ret);
		return -1;
	}
	return 0;
}

void pgbt_template_where(const struct pgbt_template *tpl, int line, char *ret, size_t len)
{
	int script_line = line;

	for (size_t i = 0; i < tpl->nincludes; i++) {
		const struct pgbt_include *inc = &tpl->includes[i];

		if (line >= inc->first_line && line < inc->first_line + inc->nlines) {
			int l = line - inc->first_line + 1;
			for (size_t k = 0; k < inc->narg_lines; k++)
				l += inc->arg_lines[k] <= l;
			snprintf(ret, len, "%s, include/%s:%d", tpl->name, inc->name, l);
			return;
		}
		if (line >= inc->first_line + inc->nlines)
			script_line -= inc->nlines - 1;
	}
	snprintf(ret, len, "%s:%d", tpl->name, script_line);
}

void pgbt_template_free(struct pgbt_template *tpl)
{
	pgbt_tree_free(tpl->nodes, tpl->nnodes);
	tpl->nodes = NULL;
	tpl->nnodes = 0;
	free(tpl->text);
	tpl->text = NULL;
	for (size_t i = 0; i < tpl->nlets; i++)
		free(tpl->lets[i].expr);
	tpl->nlets = 0;
	for (size_t i = 0; i < tpl->nreport; i++)
		free(tpl->report[i]);
	free(tpl->report);
	free(tpl->report_lines);
	tpl->report = NULL;
	tpl->report_lines = NULL;
	tpl->nreport = 0;
	free(tpl->run_cond);
	tpl->run_cond = NULL;
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

/* The needs of every tag in nodes, in both branches of each {{if}}. */
static void needs_of_nodes(const struct pgbt_scope *scope, const struct pgbt_node *v,
			   size_t n, struct pgbt_needs *ret)
{
	for (size_t i = 0; i < n; i++) {
		const char *in;

		switch (v[i].kind) {
		case NODE_TEXT:
			continue;
		case NODE_VALUE:
			if (strncmp(v[i].inner, "include ", 8) != 0)
				pgbt_expr_needs(scope, v[i].inner, ret);
			break;
		case NODE_IF:
			pgbt_cond_needs(v[i].inner + 2, ret);
			break;
		case NODE_FOR:
			in = strstr(v[i].inner, " in ");
			if (in)
				pgbt_for_needs(in + 4, ret);
			break;
		}
		needs_of_nodes(scope, v[i].body, v[i].nbody, ret);
		needs_of_nodes(scope, v[i].els, v[i].nels, ret);
	}
}

void pgbt_template_needs(const struct pgbt_template *tpl, struct pgbt_needs *ret)
{
	struct pgbt_var lets[PGBT_MAX_LETS];
	struct pgbt_scope scope = { .name = tpl->name, .where = tpl->name,
				    .lets = lets, .nlets = tpl->nlets };

	for (size_t i = 0; i < tpl->nlets; i++)
		lets[i] = (struct pgbt_var){ tpl->lets[i].name, tpl->lets[i].expr, false };
	memset(ret, 0, sizeof(*ret));
	needs_of_nodes(&scope, tpl->nodes, tpl->nnodes, ret);
}
