#include "gdb_types.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ptype of a big struct (PGPROC) runs to kilobytes. */
#define PTYPE_MAX (1 << 16)

struct pgbt_gdb *pgbt_gdb_types_open(const char *path, struct pgbt_err *err)
{
	struct pgbt_gdb *g = pgbt_gdb_start(path, 0, err);
	char out[512];
	struct pgbt_err e;

	if (!g)
		return NULL;
	/* Without debug info gdb knows main from the symbol table only. */
	if (pgbt_gdb_ask(g, "whatis main", out, sizeof(out), &e) < 0 ||
	    strstr(out, "no debug info")) {
		pgbt_fail(err, "%s: %s finds no debug info for it (whatis main: %s)", path,
			  pgbt_gdb_version(g), strstr(out, "no debug info") ? out + 7 : e.msg);
		pgbt_gdb_close(g);
		return NULL;
	}
	return g;
}

/* Only names and member paths reach gdb, never other commands. */
static bool safe(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !strchr(extra, *s))
			return false;
	return true;
}

static bool is_ident(const char *s)
{
	return safe(s, "") && !isdigit((unsigned char)s[0]);
}

/* Spelling i of type for gdb: bare, then as a struct, union, enum tag
 * (up to n of them; a name with a space, like "long int", only bare). */
static bool spelling(const char *type, int i, int n, char *ret, size_t len)
{
	static const char *const tags[] = { "", "struct ", "union ", "enum " };

	if (i >= n || (i > 0 && strchr(type, ' ')))
		return false;
	snprintf(ret, len, "%s%s", tags[i], type);
	return true;
}

/* Keeps in *best the refusal that says most: one that is not only "no
 * such name". */
static void keep_best(struct pgbt_err *best, const struct pgbt_err *e)
{
	if (!best->msg[0] || (best->code == PGBT_ENOTFOUND && e->code != PGBT_ENOTFOUND))
		*best = *e;
}

/* "gdb cannot answer WHAT: <best refusal>", with the refusal's code. */
static int cannot_answer(struct pgbt_err *err, const char *what, const struct pgbt_err *best)
{
	return pgbt_fail_code(err, best->code, "gdb cannot answer %s: %s", what, best->msg);
}

int pgbt_gdb_member(struct pgbt_gdb *g, const char *type, const char *member,
		    uint64_t *ret_offset, uint64_t *ret_size, struct pgbt_err *err)
{
	struct pgbt_err best = { .msg = "" }, e;
	char t[160], expr[512];
	long long off, size;

	if (!safe(type, " ") || !safe(member, ".[]"))
		return pgbt_fail(err, "gdb: bad type or member path '%s', '%s'", type, member);
	for (int i = 0; spelling(type, i, 3, t, sizeof(t)); i++) {
		snprintf(expr, sizeof(expr), "(long)&((%s *)0)->%s", t, member);
		if (pgbt_gdb_number(g, "/d", expr, &off, &e) < 0) {
			keep_best(&best, &e);
			continue;
		}
		snprintf(expr, sizeof(expr), "sizeof(((%s *)0)->%s)", t, member);
		if (pgbt_gdb_number(g, "/d", expr, &size, &e) < 0) {
			keep_best(&best, &e);
			continue;
		}
		*ret_offset = (uint64_t)off;
		*ret_size = (uint64_t)size;
		return 0;
	}
	snprintf(expr, sizeof(expr), "offsetof(%s, %s)", type, member);
	return cannot_answer(err, expr, &best);
}

int pgbt_gdb_sizeof(struct pgbt_gdb *g, const char *type, uint64_t *ret_size,
		    struct pgbt_err *err)
{
	struct pgbt_err best = { .msg = "" }, e;
	char t[160], expr[200];
	long long size;

	if (!safe(type, " "))
		return pgbt_fail(err, "gdb: bad type name '%s'", type);
	for (int i = 0; spelling(type, i, 4, t, sizeof(t)); i++) {
		snprintf(expr, sizeof(expr), "sizeof(%s)", t);
		if (pgbt_gdb_number(g, "/d", expr, &size, &e) == 0) {
			*ret_size = (uint64_t)size;
			return 0;
		}
		keep_best(&best, &e);
	}
	snprintf(expr, sizeof(expr), "sizeof(%s)", type);
	return cannot_answer(err, expr, &best);
}

/* "type = const struct X" -> "struct X": what whatis says, without
 * "type = " and qualifiers. */
static void bare_type(const char *whatis, char *ret, size_t len)
{
	const char *s = strncmp(whatis, "type = ", 7) == 0 ? whatis + 7 : whatis;
	size_t n;

	for (;;) {
		if (strncmp(s, "const ", 6) == 0)
			s += 6;
		else if (strncmp(s, "volatile ", 9) == 0)
			s += 9;
		else
			break;
	}
	snprintf(ret, len, "%s", s);
	for (;;) {
		n = strlen(ret);
		if (n > 6 && strcmp(ret + n - 6, " const") == 0)
			ret[n - 6] = '\0';
		else if (n > 9 && strcmp(ret + n - 9, " volatile") == 0)
			ret[n - 9] = '\0';
		else
			break;
	}
}

int pgbt_gdb_var_type(struct pgbt_gdb *g, const char *var, char *ret_type, size_t len,
		      int *ret_pointers, struct pgbt_err *err)
{
	char *ptype = malloc(PTYPE_MAX), cmd[320], out[512], name[256];
	const char *tail;
	struct pgbt_err e;
	int ptrs = 0;

	if (!ptype)
		return pgbt_fail(err, "out of memory");
	if (!is_ident(var)) {
		free(ptype);
		return pgbt_fail(err, "gdb: bad variable name '%s'", var);
	}
	snprintf(cmd, sizeof(cmd), "ptype %s", var);
	if (pgbt_gdb_ask(g, cmd, ptype, PTYPE_MAX, &e) < 0) {
		free(ptype);
		return pgbt_fail(err, "gdb cannot answer the type of %s: %s", var, e.msg);
	}
	/* after the body of a struct, union or enum: the pointers */
	tail = strrchr(ptype, '}') ? strrchr(ptype, '}') : ptype;
	for (const char *p = tail; *p; p++)
		ptrs += *p == '*';
	if (strpbrk(tail, "[(")) {
		snprintf(out, sizeof(out), "%.200s", tail);
		free(ptype);
		return pgbt_fail(err, "gdb: variable '%s' is not a pointer or an object with a "
				 "named type (ptype: ...%s)", var, out);
	}
	free(ptype);
	/* the type it points to, as declared: *...*var */
	snprintf(cmd, sizeof(cmd), "whatis %.*s%s", ptrs, "********************************", var);
	if (ptrs > 32 || pgbt_gdb_ask(g, cmd, out, sizeof(out), &e) < 0)
		return pgbt_fail(err, "gdb cannot answer the type of %s: %s", var,
				 ptrs > 32 ? "too many pointers" : e.msg);
	bare_type(out, name, sizeof(name));
	if (strncmp(name, "struct ", 7) == 0 || strncmp(name, "union ", 6) == 0 ||
	    strncmp(name, "enum ", 5) == 0) {
		memmove(name, strchr(name, ' ') + 1, strlen(strchr(name, ' ')));
	} else {
		/* A typedef of a typedef: like DWARF's answer, the one nearest
		 * the struct (whatis of a typedef name goes down one level). */
		for (int i = 0; i < 16 && is_ident(name); i++) {
			char next[256];
			snprintf(cmd, sizeof(cmd), "whatis %s", name);
			if (pgbt_gdb_ask(g, cmd, out, sizeof(out), &e) < 0)
				break;
			bare_type(out, next, sizeof(next));
			if (!is_ident(next) || strcmp(next, name) == 0)
				break;
			snprintf(name, sizeof(name), "%s", next);
		}
	}
	if ((size_t)snprintf(ret_type, len, "%s", name) >= len)
		return pgbt_fail(err, "variable '%s': type name '%s' too long", var, name);
	*ret_pointers = ptrs;
	return 0;
}

/* ptype's "type = enum [TAG ]{A, B = 5, C}" as enumerators: gdb writes a
 * value only where it is not the one before plus one (from 0). Returns
 * -1 when it is not an enumeration. */
static int parse_enum(const char *ptype, struct pgbt_enumerator **ret, size_t *ret_n)
{
	const char *p = strchr(ptype, '{');
	struct pgbt_enumerator *e = NULL;
	size_t n = 0;
	int64_t next = 0;

	if (strncmp(ptype, "type = enum ", 12) != 0 || !p)
		return -1;
	for (p++; *p && *p != '}';) {
		struct pgbt_enumerator *more = realloc(e, (n + 1) * sizeof(*e));
		size_t w;
		if (!more) {
			free(e);
			return -1;
		}
		e = more;
		while (*p == ' ')
			p++;
		w = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		snprintf(e[n].name, sizeof(e[n].name), "%.*s", (int)w, p);
		p += w;
		if (strncmp(p, " = ", 3) == 0) {
			char *end;
			next = strtoll(p + 3, &end, 10);
			p = end;
		}
		e[n++].value = next++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			break;
	}
	if (*p != '}') {
		free(e);
		return -1;
	}
	*ret = e;
	*ret_n = n;
	return 0;
}

int pgbt_gdb_enum(struct pgbt_gdb *g, const char *enum_name, struct pgbt_enumerator **ret,
		  size_t *ret_n, struct pgbt_err *err)
{
	struct pgbt_err best = { .msg = "" }, e;
	char *ptype = malloc(PTYPE_MAX), t[160], cmd[200];

	if (!ptype)
		return pgbt_fail(err, "out of memory");
	for (int i = 0; is_ident(enum_name) && spelling(enum_name, i, 4, t, sizeof(t)); i++) {
		if (i == 1 || i == 2)
			continue;   /* not struct or union tags */
		snprintf(cmd, sizeof(cmd), "ptype %s", t);
		if (pgbt_gdb_ask(g, cmd, ptype, PTYPE_MAX, &e) < 0) {
			keep_best(&best, &e);
			continue;
		}
		if (parse_enum(ptype, ret, ret_n) == 0) {
			free(ptype);
			return 0;
		}
		pgbt_fail(&e, "not an enumeration (%.100s)", ptype);
		keep_best(&best, &e);
	}
	free(ptype);
	return pgbt_fail(err, "gdb cannot answer enum(%s): %s", enum_name,
			 best.msg[0] ? best.msg : "bad name");
}

int pgbt_gdb_enumerator(struct pgbt_gdb *g, const char *name, int64_t *ret_value,
			struct pgbt_err *err)
{
	char *ptype = malloc(PTYPE_MAX), cmd[200];
	struct pgbt_enumerator *list = NULL;
	struct pgbt_err e;
	size_t n = 0;
	int rc = -1;

	if (!ptype)
		return pgbt_fail(err, "out of memory");
	if (!is_ident(name)) {
		free(ptype);
		return pgbt_fail(err, "gdb: bad enumerator name '%s'", name);
	}
	/* ptype of an enumerator is its enumeration: the value from there,
	 * and a variable of an enum type (not in the list) is refused */
	snprintf(cmd, sizeof(cmd), "ptype %s", name);
	if (pgbt_gdb_ask(g, cmd, ptype, PTYPE_MAX, &e) < 0) {
		pgbt_fail(err, "gdb cannot answer %s: %s", name, e.msg);
		goto out;
	}
	if (parse_enum(ptype, &list, &n) == 0)
		for (size_t i = 0; i < n && rc < 0; i++)
			if (strcmp(list[i].name, name) == 0) {
				*ret_value = list[i].value;
				rc = 0;
			}
	if (rc < 0)
		pgbt_fail(err, "gdb cannot answer %s: not an enumerator (ptype: %.100s)", name, ptype);
out:
	free(list);
	free(ptype);
	return rc;
}
