#include "expr.h"

#include "lib/found/cpus.h"
#include "lib/found/hwbp.h"
#include "lib/found/machine.h"
#include "lib/found/proc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ALTS 4

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool is_ident(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!is_ident_char(*s))
			return false;
	return true;
}

/* Splits "(A|B)" or "A" into alternatives; returns their count, 0 if bad.
 * Names must be identifiers; member paths ("a.b[2]") are checked later,
 * by the lookup. */
static int split_alts_of(const char *s, bool paths, char alts[MAX_ALTS][128])
{
	size_t len = strlen(s);
	bool parens = s[0] == '(' && len > 2 && s[len - 1] == ')';
	char *tmp = parens ? pgbt_trim_dup(s + 1, len - 2) : strdup(s), *save = NULL;
	int n = 0;

	for (char *a = tmp ? strtok_r(tmp, "|", &save) : NULL; a; a = strtok_r(NULL, "|", &save)) {
		/* "struct X" and "union X" name X by its tag */
		while (*a == ' ')
			a++;
		if (strncmp(a, "struct ", 7) == 0 || strncmp(a, "union ", 6) == 0)
			a = strchr(a, ' ') + 1;
		if (n == MAX_ALTS || !pgbt_trim(a, strlen(a), alts[n], sizeof(alts[n])) ||
		    (paths ? !alts[n][0] : !is_ident(alts[n]))) {
			n = 0;
			break;
		}
		n++;
	}
	free(tmp);
	return n;
}

static int split_alts(const char *s, char alts[MAX_ALTS][128])
{
	return split_alts_of(s, false, alts);
}

/* The first member of "(a|b)" (or "a") that TYPE has, for a member renamed
 * between majors (nextFullXid in 13, nextXid from 14); its name in
 * CHOSEN. */
static int pick_member(struct pgbt_eval *ev, const char *type, const char *spec,
		       uint64_t *off, uint64_t *size, char *how, char *chosen, size_t len,
		       struct pgbt_err *err)
{
	char alts[MAX_ALTS][128];
	int n = split_alts_of(spec, true, alts);

	if (n == 0)
		return pgbt_fail(err, "%s: bad member name '%s'", ev->scope.where, spec);
	for (int i = 0; i < n; i++) {
		struct pgbt_err e;

		if (pgbt_target_member(ev->t, type, alts[i], off, size, how, &e) == 0) {
			snprintf(chosen, len, "%s", alts[i]);
			return 0;
		}
		if (err)
			*err = e;
		if (e.code != PGBT_ENOTFOUND)
			return -1;
	}
	return -1;
}

/* Whether a note was written before (and, if not, that it is now). */
static bool seen(struct pgbt_eval *ev, const char *expr)
{
	for (size_t i = 0; i < ev->nseen; i++)
		if (strcmp(ev->seen[i], expr) == 0)
			return true;
	if (ev->nseen < PGBT_MAX_SEEN)
		ev->seen[ev->nseen++] = strdup(expr);
	return false;
}

static const struct pgbt_var *var_in(const struct pgbt_var *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

/* An argument of the fragment being rendered, else a parameter. */
static const char *param_value(const struct pgbt_eval *ev, const char *name)
{
	const struct pgbt_var *arg = var_in(ev->scope.args, ev->scope.nargs, name);
	const struct pgbt_var *p = var_in(ev->scope.params, ev->scope.nparams, name);

	return arg ? arg->value : p ? p->value : NULL;
}

static int need_live(struct pgbt_eval *ev, const char *expr, struct pgbt_err *err)
{
	if (ev->t->pid)
		return 0;
	return pgbt_fail(err, "%s: {{ %s }} needs a running server; name one with -p PID "
			 "or -D DATADIR instead of --bin", ev->scope.name, expr);
}

/* "(TransamVariables|ShmemVariableCache)" -> the first the running server
 * has, its address in the server and how that was found. */
static int pick_symbol(struct pgbt_eval *ev, const char *spec, char *ret, size_t len,
		       uint64_t *addr, char *how, struct pgbt_err *err)
{
	char alts[MAX_ALTS][128], list[600] = "";
	int n = split_alts(spec, alts);

	if (n == 0)
		return pgbt_fail(err, "%s: bad symbol name '%s'", ev->scope.where, spec);
	for (int i = 0; i < n; i++) {
		struct pgbt_err e;

		if (pgbt_target_symbol_addr(ev->t, alts[i], addr, how, &e) == 0) {
			snprintf(ret, len, "%s", alts[i]);
			return 0;
		}
		/* not absence (the binary failed), or why a lone name was not
		 * found (a static global looked for in code) */
		if (e.code != PGBT_ENOTFOUND || n == 1) {
			if (err)
				*err = e;
			return -1;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", alts[i]);
	}
	return pgbt_fail(err, "%s: no symbol %s in .symtab or .dynsym", ev->t->path, list);
}

/* The process whose memory an expression reads: the backend inside
 * backend($param, ...), else the postmaster. */
static pid_t reading_pid(const struct pgbt_eval *ev)
{
	return ev->in_pid ? ev->in_pid : ev->t->pid;
}

/* "*NAME": the pointer stored in the global NAME (or "(A|B)"), checked to
 * point into the server's shared memory. */
static int eval_deref(struct pgbt_eval *ev, const char *expr, uint64_t *ret,
		      struct pgbt_buf *how, struct pgbt_err *err)
{
	char spec[256], name[128], h[PGBT_HOW_LEN];
	uint64_t addr;

	if (need_live(ev, expr, err) < 0)
		return -1;
	if (!pgbt_trim(expr + 1, strlen(expr + 1), spec, sizeof(spec)))
		return pgbt_fail(err, "%s: {{ %s }}: a name too long", ev->scope.where, expr);
	if (pick_symbol(ev, spec, name, sizeof(name), &addr, h, err) < 0)
		return -1;
	pgbt_buf_printf(how, "//     %s at 0x%" PRIx64 ": %s\n", name, addr, h);
	if (pgbt_target_read_shared_ptr_in(ev->t, reading_pid(ev), name, addr, 0, 1, ret, h,
					   err) < 0)
		return -1;
	pgbt_buf_printf(how, "//     %s = 0x%" PRIx64 ": %s\n", name, *ret, h);
	return 0;
}

/* The address part of "&NAME", "&NAME.member" and "&NAME->member". */
static int eval_address(struct pgbt_eval *ev, const char *expr, uint64_t *ret,
			struct pgbt_buf *how, struct pgbt_err *err)
{
	char spec[256], name[128], member[256] = "", type[128], h[PGBT_HOW_LEN], h2[PGBT_HOW_LEN];
	const char *rest, *end;
	bool arrow;
	uint64_t addr, off = 0, size = 0, ptr;
	int ptrs = 0;

	if (need_live(ev, expr, err) < 0)
		return -1;
	/* "&" NAME-or-(A|B), then nothing, "->member" or ".member" */
	rest = expr + 1;
	if (*rest == '(')
		end = strchr(rest, ')') ? strchr(rest, ')') + 1 : rest + strlen(rest);
	else
		for (end = rest; is_ident_char(*end); end++)
			;
	arrow = strncmp(end, "->", 2) == 0;
	if (!pgbt_trim(rest, (size_t)(end - rest), spec, sizeof(spec)) ||
	    ((arrow || *end == '.') &&
	     !pgbt_trim(end + (arrow ? 2 : 1), strlen(end + (arrow ? 2 : 1)), member, sizeof(member))))
		return pgbt_fail(err, "%s: {{ %s }}: a name too long", ev->scope.where, expr);
	if (*end && !arrow && *end != '.')
		return pgbt_fail(err, "%s: cannot understand {{ %s }}", ev->scope.where, expr);

	if (pick_symbol(ev, spec, name, sizeof(name), &addr, h, err) < 0)
		return -1;
	pgbt_buf_printf(how, "//     %s at 0x%" PRIx64 ": %s\n", name, addr, h);
	if (!member[0]) {
		*ret = addr;
		return 0;
	}
	if (pgbt_target_var_type(ev->t, name, type, sizeof(type), &ptrs, h, err) < 0)
		return -1;
	if (ptrs != (arrow ? 1 : 0))
		return pgbt_fail(err, "%s: {{ %s }}: %s is %s with %d pointer level(s); use %s",
				 ev->scope.where, expr, name, type, ptrs, ptrs ? "->" : ".");
	if (pick_member(ev, type, member, &off, &size, h2, member, sizeof(member), err) < 0)
		return -1;
	if (arrow) {
		char what[160];
		snprintf(what, sizeof(what), "%s", name);
		if (pgbt_target_read_shared_ptr_in(ev->t, reading_pid(ev), what, addr, off, size,
						   &ptr, h, err) < 0)
			return -1;
		pgbt_buf_printf(how, "//     %s (%s *) = 0x%" PRIx64 ": %s\n", name, type, ptr, h);
		addr = ptr;
	}
	pgbt_buf_printf(how, "//     %s.%s at offset %" PRIu64 ", size %" PRIu64 " (%s)\n",
			type, member, off, size, h2);
	*ret = addr + off;
	return 0;
}

/* offsetof(T, m) and sizeof(T), with T and m possibly "(A|B)". */
static int eval_type_fn(struct pgbt_eval *ev, bool is_offsetof, const char *args,
			uint64_t *ret, char *how, struct pgbt_err *err)
{
	char alts[MAX_ALTS][128], typespec[256], member[256] = "";
	const char *comma = strchr(args, ',');
	uint64_t size;
	int n;

	if (is_offsetof && !comma)
		return pgbt_fail(err, "%s: offsetof needs (TYPE, MEMBER)", ev->scope.where);
	if (!pgbt_trim(args, is_offsetof ? (size_t)(comma - args) : strlen(args), typespec,
		       sizeof(typespec)) ||
	    (is_offsetof && !pgbt_trim(comma + 1, strlen(comma + 1), member, sizeof(member))))
		return pgbt_fail(err, "%s: %s(%s): a name too long", ev->scope.where,
				 is_offsetof ? "offsetof" : "sizeof", args);
	n = split_alts(typespec, alts);
	if (n == 0)
		return pgbt_fail(err, "%s: bad type name '%s'", ev->scope.where, typespec);
	/* the first alternative the server has; another failure than "no
	   such name" ends the search */
	for (int i = 0; i < n; i++) {
		struct pgbt_err e;
		char chosen[128];
		int rc = is_offsetof
			? pick_member(ev, alts[i], member, ret, &size, how, chosen, sizeof(chosen), &e)
			: pgbt_target_sizeof(ev->t, alts[i], ret, how, &e);
		if (rc == 0) {
			if (n > 1)
				snprintf(how + strlen(how), PGBT_HOW_LEN - strlen(how), ", type %s", alts[i]);
			return 0;
		}
		if (err)
			*err = e;
		if (e.code != PGBT_ENOTFOUND)
			return -1;
	}
	return -1;
}

static void format_number(uint64_t v, bool hex, char *out, size_t outlen)
{
	snprintf(out, outlen, hex ? "0x%" PRIx64 : "%" PRIu64, v);
}

/* {{ report }}: the line pgbt-gen report starts from (report/input.c),
 * safe inside a bpftrace printf format: "pgbt SCRIPT NAME=VALUE...:
 * postmaster PID, port PORT, data directory DIR". Values are checked
 * against their types (no '%', no quote); the directory is escaped. */
static int eval_report_line(struct pgbt_eval *ev, char *out, size_t outlen,
			    struct pgbt_err *err)
{
	char dir[PATH_MAX * 2], *o = out;
	size_t n;
	int port;

	if (need_live(ev, "report", err) < 0 ||
	    pgbt_datadir_port(ev->t->datadir, &port, err) < 0)
		return -1;
	n = (size_t)snprintf(o, outlen, "pgbt %s", ev->scope.name);
	for (size_t i = 0; i < ev->scope.nparams && n < outlen; i++)
		n += (size_t)snprintf(o + n, outlen - n, " %s=%s", ev->scope.params[i].name,
				      ev->scope.params[i].value);
	pgbt_rows_escape(ev->t->datadir_inside[0] ? ev->t->datadir_inside : ev->t->datadir,
			 PATH_MAX, dir, sizeof(dir));
	if (n < outlen)
		n += (size_t)snprintf(o + n, outlen - n, ": postmaster %d, port %d, data directory ",
				      (int)(ev->t->other_pidns ? ev->t->nspid : ev->t->pid), port);
	for (const char *d = dir; *d && n + 2 < outlen; d++) {
		if (*d == '%')
			o[n++] = '%';
		o[n++] = *d;
	}
	if (n + 1 >= outlen)
		return pgbt_fail(err, "%s: {{ report }}: longer than %zu bytes", ev->scope.where,
				 outlen - 1);
	o[n] = '\0';
	return 0;
}

static int eval_bpftrace_cond(struct pgbt_eval *ev, const char *cond, bool *ret,
			      struct pgbt_err *err);

static int eval_builtin(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
			struct pgbt_err *err)
{
	char *how = NULL;     /* on the heap: pgbt_eval recurses through here */

	if (strcmp(expr, "report") == 0)
		return eval_report_line(ev, out, outlen, err);
	if (strcmp(expr, "postmaster.pid") == 0 || strcmp(expr, "datadir") == 0) {
		if (need_live(ev, expr, err) < 0)
			return -1;
		if (expr[0] == 'p')
			snprintf(out, outlen, "%d", (int)ev->t->pid);
		else
			snprintf(out, outlen, "%s", ev->t->datadir);
		return 0;
	}
	if (strcmp(expr, "binary") == 0) {
		snprintf(out, outlen, "%s", ev->binary ? ev->binary : ev->t->path);
		return 0;
	}
	if (strcmp(expr, "major") == 0) {
		snprintf(out, outlen, "%d", ev->t->major);
		return 0;
	}
	if (strcmp(expr, "machine") == 0) {
		snprintf(out, outlen, "%s", pgbt_machine_name(ev->t->machine));
		return 0;
	}
	if (strcmp(expr, "caller") == 0 || strcmp(expr, "ip") == 0)
		return pgbt_machine_reg(ev->t->machine, expr, out, outlen, err) < 0
			? pgbt_fail_prefix(err, "%s", ev->scope.where) : 0;
	if (strcmp(expr, "shmem.base") == 0) {
		/* The main segment is the postmaster's largest shared mapping
		 * (besides it: the DSM control segment, a SysV stub). */
		const struct pgbt_map *main = NULL;
		if (need_live(ev, expr, err) < 0)
			return -1;
		for (size_t i = 0; i < ev->t->maps.n; i++) {
			const struct pgbt_map *m = &ev->t->maps.maps[i];
			if (m->perms[3] == 's' && (!main || m->end - m->start > main->end - main->start))
				main = m;
		}
		if (!main)
			return pgbt_fail(err, "%s: {{ %s }}: postmaster %d has no shared mapping",
					 ev->scope.where, expr, (int)ev->t->pid);
		format_number(main->start, true, out, outlen);
		if (asprintf(&how, "the postmaster's largest shared mapping, %" PRIu64 " kB of %s",
			     (main->end - main->start) / 1024,
			     main->path[0] ? main->path : "anonymous memory") < 0)
			return pgbt_fail(err, "out of memory");
		pgbt_resolved_add(&ev->resolved, PGBT_RESOLVED_DERIVED, expr, out, how, 0, NULL);
		free(how);
		return 0;
	}
	if (strcmp(expr, "cpus") == 0) {
		/* how many CPU ids bpftrace's `cpu` can take here */
		char list[256];
		unsigned n;

		if (pgbt_cpus_possible(PGBT_CPUS_POSSIBLE, &n, list, sizeof(list), err) < 0)
			return pgbt_fail_prefix(err, "%s: {{ %s }}", ev->scope.where, expr);
		snprintf(out, outlen, "%u", n);
		if (asprintf(&how, "CPU ids %s possible: %s", list, PGBT_CPUS_POSSIBLE) < 0)
			return pgbt_fail(err, "out of memory");
		pgbt_resolved_add(&ev->resolved, PGBT_RESOLVED_DERIVED, expr, out, how, 0, NULL);
		free(how);
		return 0;
	}
	if (strcmp(expr, "pg_pid") == 0) {
		/* The PID in the server's namespace: numbers[level] of the
		 * task's struct pid, read by address since bpftrace 0.17
		 * rejects an index into the flexible array (it starts at
		 * sizeof(struct pid): both are 8-byte aligned). The level is
		 * the namespace's depth below ours, as bpftrace runs where
		 * pgbt-gen does; a constant, since reading it too costs stack
		 * that the largest programs do not have. Pointer arithmetic on
		 * a byte pointer, not on a number: bpftrace 0.26 and later
		 * warn when a constant meets kernel memory in a user probe;
		 * kptr() still, since 0.27 takes the sum's pointer for user
		 * memory in a user probe and reads 0. */
		if (!ev->t->other_pidns)
			snprintf(out, outlen, "pid");
		else
			snprintf(out, outlen, "(uint64)*(uint32 *)kptr((uint8 *)curtask->thread_pid + "
				 "sizeof(struct pid) + %d * sizeof(struct upid))", ev->t->pidns_depth);
		return 0;
	}
	if (strcmp(expr, "discard") == 0) {
		/* Before a statement whose value is left unused (delete()'s):
		 * bpftrace 0.25 and later warn of one unless it is discarded
		 * with "_ = ", which earlier ones cannot parse. */
		bool newer;
		if (eval_bpftrace_cond(ev, "bpftrace >= 0.25", &newer, err) != 0)
			return -1;
		snprintf(out, outlen, "%s", newer ? "_ = " : "");
		return 0;
	}
	return 1;
}

/* "bpftrace >= 0.21": the version of the bpftrace rendered for (the
 * oldest supported when none was given). Returns 1 when cond is not one. */
static int eval_bpftrace_cond(struct pgbt_eval *ev, const char *cond, bool *ret,
			      struct pgbt_err *err)
{
	static const char *ops[] = { ">=", "<=", "==", "!=", ">", "<" };
	struct pgbt_bpftrace oldest;
	const struct pgbt_bpftrace *bt = ev->scope.bpftrace;
	char want[64];
	int v[3], c;

	if (strncmp(cond, "bpftrace", 8) != 0 || isalnum((unsigned char)cond[8]) || cond[8] == '_')
		return 1;
	cond += 8;
	while (*cond == ' ')
		cond++;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i]);
		if (strncmp(cond, ops[i], n) != 0)
			continue;
		if (!pgbt_trim(cond + n, strlen(cond + n), want, sizeof(want)) ||
		    pgbt_bpftrace_parse_version(want, v) < 0)
			break;
		if (!bt) {
			pgbt_bpftrace_parse_version(PGBT_BPFTRACE_OLDEST, oldest.version);
			bt = &oldest;
		}
		c = pgbt_bpftrace_cmp(bt, v);
		*ret = i == 0 ? c >= 0 : i == 1 ? c <= 0 : i == 2 ? c == 0 :
		       i == 3 ? c != 0 : i == 4 ? c > 0 : c < 0;
		return 0;
	}
	return pgbt_fail(err, "%s: cannot understand the condition 'bpftrace%s' (want "
			 "bpftrace OP X.Y)", ev->scope.where, cond);
}

static int eval_loop_var(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen)
{
	for (size_t i = ev->nloop; i-- > 0;) {
		size_t nl = strlen(ev->loop[i].name);
		if (strncmp(expr, ev->loop[i].name, nl) != 0 || expr[nl] != '.')
			continue;
		if (ev->loop[i].rows) {
			const char *cell = pgbt_rows_cell(ev->loop[i].rows, ev->loop[i].row, expr + nl + 1);
			if (!cell)
				return 1;
			snprintf(out, outlen, "%s", cell);
		} else if (strcmp(expr + nl + 1, "name") == 0)
			snprintf(out, outlen, "%s", ev->loop[i].item->name);
		else if (strcmp(expr + nl + 1, "value") == 0)
			snprintf(out, outlen, "%" PRId64, ev->loop[i].item->value);
		else if (strcmp(expr + nl + 1, "label") == 0) {
			/* no label (a newer minor's addition): the enumerator's name */
			if (pgbt_target_label(ev->t, ev->loop[i].item->name, out, outlen) < 0)
				snprintf(out, outlen, "%s", ev->loop[i].item->name);
		}
		else
			return 1;
		return 0;
	}
	return 1;
}

/* The first top-level '+' of expr, or NULL. */
static const char *top_plus(const char *expr)
{
	int depth = 0;

	for (const char *p = expr; *p; p++) {
		depth += (*p == '(') - (*p == ')');
		if (*p == '+' && depth == 0)
			return p;
	}
	return NULL;
}

/* "A + B" (at the top level, not inside parentheses): both sides are
 * numbers. Returns 1 when expr is no sum. */
static int eval_sum(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
		    struct pgbt_err *err)
{
	char lv[128], rv[128], *end;
	const char *plus = top_plus(expr);
	uint64_t a = 0, b;
	int rc;

	/* the left side in place: "A + B" as "A" */
	char *lhs = strndup(expr, (size_t)(plus - expr));
	if (!lhs)
		return pgbt_fail(err, "out of memory");
	rc = pgbt_eval(ev, lhs, lv, sizeof(lv), err);
	if (rc == 0) {
		a = strtoull(lv, &end, 0);
		if (!isdigit((unsigned char)lv[0]) || *end)
			rc = pgbt_fail(err, "%s: {{ %s }}: '%s' is %s, not a number",
				       ev->scope.where, expr, lhs, lv);
	}
	free(lhs);
	if (rc < 0 || pgbt_eval(ev, plus + 1, rv, sizeof(rv), err) < 0)
		return -1;
	b = strtoull(rv, &end, 0);
	if (!isdigit((unsigned char)rv[0]) || *end)
		return pgbt_fail(err, "%s: {{ %s }}: '%s' is %s, not a number", ev->scope.where,
				 expr, plus + 1, rv);
	format_number(a + b, strncmp(lv, "0x", 2) == 0 || strncmp(rv, "0x", 2) == 0,
		      out, outlen);
	pgbt_resolved_add(&ev->resolved, PGBT_RESOLVED_DERIVED, expr, out, "", 0, NULL);
	return 0;
}

/* "backend($param, EXPR)": EXPR with its reads of process memory done in
 * the backend that the param (of type backend, checked at render to be a
 * live child of the postmaster) names. */
static int eval_in_backend(struct pgbt_eval *ev, const char *expr, const char *args,
			   char *out, size_t outlen, struct pgbt_err *err)
{
	const char *comma = strchr(args, ',');
	const struct pgbt_var *p = NULL;
	char name[64];
	pid_t saved = ev->in_pid;
	long pid;
	int rc;

	if (!comma)
		return pgbt_fail(err, "%s: {{ %s }}: want backend($PARAM, EXPR)", ev->scope.where, expr);
	if (pgbt_trim(args, (size_t)(comma - args), name, sizeof(name)) && name[0] == '$')
		p = var_in(ev->scope.params, ev->scope.nparams, name + 1);
	if (!p || !p->backend)
		return pgbt_fail(err, "%s: {{ %s }}: '%s' is not a parameter of type backend",
				 ev->scope.where, expr, name);
	if (need_live(ev, expr, err) < 0)
		return -1;
	pid = strtol(p->value, NULL, 10);
	if (pid <= 0)
		return pgbt_fail(err, "%s: this needs %s=PID, one backend of the server "
				 "(pg_stat_activity.pid)", ev->scope.name, p->name);
	ev->in_pid = (pid_t)pid;
	rc = pgbt_eval(ev, comma + 1, out, outlen, err);
	ev->in_pid = saved;
	if (rc == 0)
		pgbt_resolved_add(&ev->resolved, PGBT_RESOLVED_IN_BACKEND, expr, out, "", (pid_t)pid, NULL);
	return rc;
}

/* What an expression is, in the order pgbt_eval tries the forms: its
 * dispatch and pgbt_expr_needs both read expressions through this. */
enum expr_kind {
	K_LET, K_PARAM, K_LIVE_BUILTIN, K_BUILTIN, K_LOOP_VAR, K_ERROR, K_NOTE, K_SUM, K_BACKEND,
	K_NUMBER, K_ADDRESS, K_DEREF, K_TYPE_FN, K_ENUMERATOR, K_UNKNOWN
};

static bool is_call(const char *expr, const char *fn)
{
	size_t fl = strlen(fn), el = strlen(expr);

	return strncmp(expr, fn, fl) == 0 && expr[fl] == '(' && expr[el - 1] == ')';
}

static const struct pgbt_var *let_of(const struct pgbt_scope *s, const char *expr)
{
	return var_in(s->lets, s->nlets, expr);
}

static enum expr_kind classify(const struct pgbt_scope *s, const char *expr)
{
	const char *dot = strchr(expr, '.');
	char head[128];

	if (let_of(s, expr))
		return K_LET;
	if (expr[0] == '$' && !top_plus(expr))    /* "$hz + $hz": a sum */
		return K_PARAM;
	if (strcmp(expr, "postmaster.pid") == 0 || strcmp(expr, "datadir") == 0 ||
	    strcmp(expr, "shmem.base") == 0 || strcmp(expr, "report") == 0)
		return K_LIVE_BUILTIN;
	if (strcmp(expr, "binary") == 0 || strcmp(expr, "major") == 0 ||
	    strcmp(expr, "pg_pid") == 0 || strcmp(expr, "machine") == 0 ||
	    strcmp(expr, "caller") == 0 || strcmp(expr, "ip") == 0 ||
	    strcmp(expr, "cpus") == 0 || strcmp(expr, "discard") == 0)
		return K_BUILTIN;
	/* "E.value", "R.name": a loop's variable and a field */
	if (dot && (size_t)(dot - expr) < sizeof(head)) {
		snprintf(head, sizeof(head), "%.*s", (int)(dot - expr), expr);
		if (is_ident(head) && is_ident(dot + 1))
			return K_LOOP_VAR;
	}
	if (is_call(expr, "error"))
		return K_ERROR;
	if (is_call(expr, "note"))
		return K_NOTE;
	if (top_plus(expr))
		return K_SUM;
	if (is_call(expr, "backend"))
		return K_BACKEND;
	if (isdigit((unsigned char)expr[0]))
		return K_NUMBER;
	if (expr[0] == '&')
		return K_ADDRESS;
	if (expr[0] == '*')
		return K_DEREF;
	if (is_call(expr, "offsetof") || is_call(expr, "sizeof"))
		return K_TYPE_FN;
	if (is_ident(expr))
		return K_ENUMERATOR;
	return K_UNKNOWN;
}

static void note_live(struct pgbt_needs *n, const char *expr)
{
	/* name an address if there is one: it says more than a PID */
	if (!n->live || (expr[0] == '&' && n->live_expr[0] != '&'))
		snprintf(n->live_expr, sizeof(n->live_expr), "%s", expr);
	n->live = true;
}

static void expr_needs(const struct pgbt_scope *s, const char *expr_in, struct pgbt_needs *n,
		       int depth)
{
	char *expr = pgbt_trim_dup(expr_in, strlen(expr_in)), *part;
	const char *plus, *comma;

	if (!expr)
		return;
	switch (classify(s, expr)) {
	case K_LET:
		if (depth < 8)
			expr_needs(s, let_of(s, expr)->value, n, depth + 1);
		break;
	case K_LIVE_BUILTIN:
	case K_DEREF:
		note_live(n, expr);
		break;
	case K_ADDRESS:
		note_live(n, expr);
		n->types = n->types || strpbrk(expr, ".-") != NULL;
		break;
	case K_SUM:
		plus = top_plus(expr);
		part = strndup(expr, (size_t)(plus - expr));
		if (part)
			expr_needs(s, part, n, depth);
		free(part);
		expr_needs(s, plus + 1, n, depth);
		break;
	case K_BACKEND:
		/* "backend($p, EXPR)": EXPR's, read as eval_in_backend reads it */
		note_live(n, expr);
		part = pgbt_call_args(expr, "backend");
		comma = part ? strchr(part, ',') : NULL;
		if (comma)
			expr_needs(s, comma + 1, n, depth);
		free(part);
		break;
	case K_TYPE_FN:
	case K_ENUMERATOR:
		n->types = true;
		break;
	default:
		break;
	}
	free(expr);
}

void pgbt_expr_needs(const struct pgbt_scope *s, const char *expr, struct pgbt_needs *n)
{
	expr_needs(s, expr, n, 0);
}

void pgbt_cond_needs(const char *cond, struct pgbt_needs *n)
{
	/* only usdt(): every other condition reads the binary or the command line */
	n->usdt = n->usdt || strstr(cond, "usdt(") != NULL;
}

void pgbt_for_needs(const char *source, struct pgbt_needs *n)
{
	while (*source == ' ')
		source++;
	if (strncmp(source, "enum(", 5) == 0)
		n->types = true;
	else if (strncmp(source, "strings(", 8) == 0)
		note_live(n, source);
}

/* "error(MESSAGE)": the template's own message, for users. */
static int eval_error(struct pgbt_eval *ev, const char *expr, struct pgbt_err *err)
{
	char *msg = pgbt_call_args(expr, "error");

	if (!msg)
		return pgbt_fail(err, "out of memory");
	pgbt_fail(err, "%s: %s", ev->scope.name, msg);
	free(msg);
	return -1;
}

/* "note(KEY: TEXT)": a line of the provenance block, from a branch the
 * rendering took (which mechanism a script uses, and why); renders as
 * nothing. "KEY:" is aligned as the block's own keys are. */
static int eval_note(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
		     struct pgbt_err *err)
{
	char *text = pgbt_call_args(expr, "note");
	size_t key = text ? strcspn(text, ": ") : 0;

	if (!text)
		return pgbt_fail(err, "out of memory");
	if (!text[0] || text[key] != ':' || key == 0 || key > 10) {
		free(text);
		return pgbt_fail(err, "%s: {{ %s }}: want note(KEY: TEXT), KEY a word of at most "
				 "10 letters", ev->scope.where, expr);
	}
	if (!seen(ev, expr))
		pgbt_buf_printf(&ev->notes, "// %.*s:%*s%s\n", (int)key, text, (int)(11 - key), "",
				text + key + 1 + strspn(text + key + 1, " "));
	free(text);
	if (outlen)
		out[0] = '\0';
	return 0;
}

/* "backend(ARGS)": eval_in_backend with ARGS. */
static int eval_backend(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
			struct pgbt_err *err)
{
	char *args = pgbt_call_args(expr, "backend");
	int rc;

	if (!args)
		return pgbt_fail(err, "out of memory");
	rc = eval_in_backend(ev, expr, args, out, outlen, err);
	free(args);
	return rc;
}

/* "offsetof(T, F)" or "sizeof(T)", with where the number came from. */
static int eval_type_call(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
			  struct pgbt_err *err)
{
	bool offset = expr[0] == 'o';
	char *args = pgbt_call_args(expr, offset ? "offsetof" : "sizeof"), how[PGBT_HOW_LEN] = "";
	uint64_t v;
	int rc;

	if (!args)
		return pgbt_fail(err, "out of memory");
	rc = eval_type_fn(ev, offset, args, &v, how, err);
	if (rc == 0) {
		format_number(v, false, out, outlen);
		pgbt_resolved_add(&ev->resolved, offset ? PGBT_RESOLVED_OFFSET : PGBT_RESOLVED_SIZE, expr, out,
			       how, 0, NULL);
	}
	free(args);
	return rc;
}

static int eval_trimmed(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
			struct pgbt_err *err);

/* A fact asked before in this rendering (read in pid): its value, without
 * asking the target again. */
static bool asked_before(struct pgbt_eval *ev, const char *expr, pid_t pid, char *out,
			 size_t outlen)
{
	const char *v = pgbt_resolved_value(&ev->resolved, expr, pid);

	if (!v)
		return false;
	snprintf(out, outlen, "%s", v);
	return true;
}

int pgbt_eval(struct pgbt_eval *ev, const char *expr_in, char *out, size_t outlen,
	      struct pgbt_err *err)
{
	char *expr = pgbt_trim_dup(expr_in, strlen(expr_in));
	int rc;

	if (!expr)
		return pgbt_fail(err, "out of memory");
	rc = eval_trimmed(ev, expr, out, outlen, err);
	free(expr);
	return rc;
}

static int eval_trimmed(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
			struct pgbt_err *err)
{
	char how[PGBT_HOW_LEN] = "";
	struct pgbt_buf detail = {0};
	uint64_t v;
	int64_t sv;
	int rc;

	if (!expr[0])
		return pgbt_fail(err, "%s: empty {{ }}", ev->scope.where);

	switch (classify(&ev->scope, expr)) {
	case K_LET:
		if (ev->depth > 8)
			return pgbt_fail(err, "%s: 'let %s' refers to itself", ev->scope.where, expr);
		ev->depth++;
		rc = pgbt_eval(ev, let_of(&ev->scope, expr)->value, out, outlen, err);
		ev->depth--;
		return rc;
	case K_PARAM: {
		const char *val = param_value(ev, expr + 1);
		if (!val && ev->scope.fragment)
			return pgbt_fail(err, "%s: fragment %s: {{ %s }}: no such argument or "
					 "parameter", ev->scope.where, ev->scope.fragment, expr);
		if (!val)
			return pgbt_fail(err, "%s: {{ %s }}: no such parameter", ev->scope.where, expr);
		snprintf(out, outlen, "%s", val);
		return 0;
	}
	case K_LIVE_BUILTIN:
	case K_BUILTIN:
		return eval_builtin(ev, expr, out, outlen, err);
	case K_LOOP_VAR:
		if (eval_loop_var(ev, expr, out, outlen) == 0)
			return 0;
		break;
	case K_ERROR:
		return eval_error(ev, expr, err);
	case K_NOTE:
		return eval_note(ev, expr, out, outlen, err);
	case K_SUM:
		return eval_sum(ev, expr, out, outlen, err);
	case K_BACKEND:
		return eval_backend(ev, expr, out, outlen, err);
	case K_NUMBER: {                          /* a number stands for itself */
		char *end;
		errno = 0;
		strtoull(expr, &end, 0);
		if (*end || errno)
			return pgbt_fail(err, "%s: {{ %s }}: not a number", ev->scope.where, expr);
		snprintf(out, outlen, "%s", expr);
		return 0;
	}
	case K_ADDRESS:
	case K_DEREF:
		/* inside backend(): that process's value, not the postmaster's */
		if (asked_before(ev, expr, ev->in_pid, out, outlen))
			return 0;
		rc = expr[0] == '&' ? eval_address(ev, expr, &v, &detail, err)
				    : eval_deref(ev, expr, &v, &detail, err);
		if (rc == 0) {
			format_number(v, true, out, outlen);
			pgbt_resolved_add(&ev->resolved, expr[0] == '&' ? PGBT_RESOLVED_ADDRESS : PGBT_RESOLVED_POINTER,
				       expr, out, "", ev->in_pid, detail.s);
		}
		pgbt_buf_free(&detail);
		return rc;
	case K_TYPE_FN:
		if (asked_before(ev, expr, 0, out, outlen))
			return 0;
		return eval_type_call(ev, expr, out, outlen, err);
	case K_ENUMERATOR:
		if (asked_before(ev, expr, 0, out, outlen))
			return 0;
		if (pgbt_target_enumerator(ev->t, expr, &sv, how, err) < 0)
			return pgbt_fail_prefix(err, "%s: {{ %s }}", ev->scope.where, expr);
		snprintf(out, outlen, sv < 0 ? "%" PRId64 : "0x%" PRIx64, sv);
		pgbt_resolved_add(&ev->resolved, PGBT_RESOLVED_ENUMERATOR, expr, out, how, 0, NULL);
		return 0;
	case K_UNKNOWN:
		break;
	}
	return pgbt_fail(err, "%s: cannot understand {{ %s }}", ev->scope.where, expr);
}

/* "major >= 17", "$mode == summary" */
static int eval_compare(struct pgbt_eval *ev, const char *cond, bool *ret, struct pgbt_err *err)
{
	static const char *ops[] = { "==", "!=", "<=", ">=", "<", ">" };
	char lv[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const char *p = strstr(cond, ops[i]), *rhs;
		char *end, *lhs;
		long a, b;
		int c, rc;

		if (!p)
			continue;
		rhs = p + strlen(ops[i]);
		while (isspace((unsigned char)*rhs))   /* cond is trimmed: none at its end */
			rhs++;
		lhs = strndup(cond, (size_t)(p - cond));
		if (!lhs)
			return pgbt_fail(err, "out of memory");
		rc = pgbt_eval(ev, lhs, lv, sizeof(lv), err);
		free(lhs);
		if (rc < 0)
			return -1;
		errno = 0;
		a = strtol(lv, &end, 0);
		if (*end || !*lv || (b = strtol(rhs, &end, 0), *end) || errno) {
			c = strcmp(lv, rhs);     /* not numbers: compare as text */
		} else {
			c = (a > b) - (a < b);
		}
		switch (i) {
		case 0: *ret = c == 0; break;
		case 1: *ret = c != 0; break;
		case 2: *ret = c <= 0; break;
		case 3: *ret = c >= 0; break;
		case 4: *ret = c < 0; break;
		default: *ret = c > 0; break;
		}
		return 0;
	}
	return pgbt_fail(err, "%s: cannot understand the condition '%s'", ev->scope.where, cond);
}

static int eval_cond_in(struct pgbt_eval *ev, char *cond, bool *ret, struct pgbt_err *err);

int pgbt_eval_cond(struct pgbt_eval *ev, const char *cond_in, bool *ret, struct pgbt_err *err)
{
	char *cond = pgbt_trim_dup(cond_in, strlen(cond_in));
	int rc;

	if (!cond)
		return pgbt_fail(err, "out of memory");
	rc = eval_cond_in(ev, cond, ret, err);
	free(cond);
	return rc;
}

/* Whether this machine's kernel has tracepoint CATEGORY:NAME (its
 * directory under tracefs, mounted on its own or under debugfs); false
 * where neither can say. */
static bool kernel_has_tracepoint(const char *category, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };
	char path[PATH_MAX];

	if (!*category || !*name || strchr(category, '/') || strchr(name, '/'))
		return false;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", roots[i], category, name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

static bool has_usdt(struct pgbt_eval *ev, const char *provider, const char *name)
{
	return pgbt_usdt_find(&ev->t->usdt, provider, name) != NULL;
}

static bool has_tracepoint(struct pgbt_eval *ev, const char *category, const char *name)
{
	(void)ev;
	return kernel_has_tracepoint(category, name);
}

/* {{if watchpoints}}: whether this machine's hardware watchpoints fire,
 * tested once per rendering, when a template first asks, and said in the
 * provenance block. A machine that cannot be tested counts as one where
 * they do not fire: a script must never count zeros unawares. So does a
 * server of a machine whose watchpoints pgbt's scripts cannot use
 * (lib/found/machine.c: they are refused there). */
static bool watchpoints_fire(struct pgbt_eval *ev)
{
	struct pgbt_err why = { .msg = "" };
	int fire;

	if (ev->watchpoints)
		return ev->watchpoints - 2 == 1;
	if (pgbt_machine_check_watchpoints(ev->t->machine, ev->scope.name, "watchpoint:", &why) < 0)
		fire = 0;
	else
		fire = (ev->scope.watchpoint_test ? ev->scope.watchpoint_test
						  : pgbt_hw_watchpoints_fire)(&why);
	ev->watchpoints = fire + 2;
	if (fire == 1)
		pgbt_resolved_add_line(&ev->resolved, PGBT_RESOLVED_MACHINE, "watchpoints",
				    "//   watchpoints = yes (a test watchpoint on a variable "
				    "of pgbt-gen's own fired)\n");
	else
		pgbt_resolved_add_line(&ev->resolved, PGBT_RESOLVED_MACHINE, "watchpoints",
				    "//   watchpoints = no: %s\n", why.msg);
	return fire == 1;
}

/* The conditions FN(A:B): whether the binary or the kernel has it. */
struct pair_cond {
	const char *fn, *form;
	bool (*has)(struct pgbt_eval *ev, const char *a, const char *b);
};
static const struct pair_cond pair_conds[] = {
	{ "usdt", "PROVIDER:NAME", has_usdt },
	{ "tracepoint", "CATEGORY:NAME", has_tracepoint },
};

/* cond: trimmed, and the function's to cut up. */
static int eval_cond_in(struct pgbt_eval *ev, char *cond, bool *ret, struct pgbt_err *err)
{
	struct pgbt_sym sym;
	struct pgbt_err ignored;
	char *args;

	/* "A || B" binds looser than "A && B"; both evaluate every operand. */
	for (int pass = 0; pass < 2; pass++) {
		const char *op = pass == 0 ? "||" : "&&";
		char *p = strstr(cond, op);
		bool a, b;

		if (!p)
			continue;
		*p = '\0';
		if (pgbt_eval_cond(ev, cond, &a, err) < 0 ||
		    pgbt_eval_cond(ev, p + 2, &b, err) < 0)
			return -1;
		*ret = pass == 0 ? (a || b) : (a && b);
		return 0;
	}
	if (cond[0] == '!') {
		if (pgbt_eval_cond(ev, cond + 1, ret, err) < 0)
			return -1;
		*ret = !*ret;
		return 0;
	}
	if (strcmp(cond, "connected") == 0) {
		*ret = ev->scope.connected;
		return 0;
	}
	if (strcmp(cond, "live") == 0) {
		*ret = ev->t->pid != 0;
		return 0;
	}
	if (strcmp(cond, "pidns") == 0) {
		*ret = ev->t->other_pidns;
		return 0;
	}
	if (strcmp(cond, "watchpoints") == 0) {
		*ret = watchpoints_fire(ev);
		return 0;
	}
	{
		int rc = eval_bpftrace_cond(ev, cond, ret, err);
		if (rc <= 0)
			return rc;
	}
	for (size_t i = 0; i < sizeof(pair_conds) / sizeof(pair_conds[0]); i++) {
		const struct pair_cond *pc = &pair_conds[i];
		char *colon;

		if (!(args = pgbt_call_args(cond, pc->fn)))
			continue;
		if ((colon = strchr(args, ':'))) {
			*colon = '\0';
			*ret = pc->has(ev, args, colon + 1);
		}
		free(args);
		return colon ? 0 : pgbt_fail(err, "%s: %s() needs %s", ev->scope.where, pc->fn, pc->form);
	}
	if ((args = pgbt_call_args(cond, "symbol"))) {
		*ret = pgbt_elf_symbol(ev->t->elf, args, &sym, &ignored) == 0;
		free(args);
		return 0;
	}
	return eval_compare(ev, cond, ret, err);
}

void pgbt_eval_free(struct pgbt_eval *ev)
{
	for (size_t i = 0; i < ev->nseen; i++)
		free(ev->seen[i]);
	ev->nseen = 0;
	pgbt_resolved_free(&ev->resolved);
	pgbt_buf_free(&ev->notes);
}
