/* Fragments: each "{{include NAME KEY=VALUE...}}" line replaced by the
 * fragment's text, its arguments checked against what it declares. */
#include "template.h"

#include "lib/common/buf.h"
#include "template_tree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	for (size_t k = 0; w < end && *w != ' ' && *w != '\t'; w++) {
		if (k + 1 == sizeof(inc->name))
			return pgbt_fail(err, "a fragment name longer than %zu bytes",
					 sizeof(inc->name) - 1);
		inc->name[k++] = *w;
	}
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
 * checks that inc passes exactly the arguments they declare (noting
 * their lines in inc). */
static int add_fragment(struct pgbt_buf *out, const char *part, size_t len,
			struct pgbt_include *inc, struct pgbt_err *err)
{
	const size_t dl = strlen(ARG_DIRECTIVE);
	const char *p = part, *end = part + len;
	struct pgbt_include declared = { .nargs = 0 };    /* names only */
	char list[PGBT_MAX_ARGS * 34 + 8];
	int line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p), line_len = nl ? n - 1 : n, k, blank;

		line++;

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
		inc->arg_lines[inc->narg_lines++] = line;
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
		struct pgbt_err why = { .msg = "" };
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
			return pgbt_fail(err, "%s:%d: %s: %s", script, line, tag, why.msg);
		inc.from = out->len;
		inc.line = line;
		rc = add_fragment(out, part, part_len, &inc, &why);
		free(part);
		if (rc < 0)
			return pgbt_fail(err, "%s:%d: %s: %s", script, line, tag, why.msg);
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
			char key[64], list[PGBT_MAX_ARGS * 34 + 8], where[160];

			snprintf(key, sizeof(key), "%.*s", (int)k, d + 1);
			if (!k || (k < sizeof(key) &&
				   (pgbt_include_arg(inc, key) || pgbt_template_param(tpl, key))))
				continue;
			list_keys(inc, list, sizeof(list));
			pgbt_template_where(tpl, v[i].line, where, sizeof(where));
			return pgbt_fail(err, "%s: fragment %s reads $%s, which is neither an argument "
					 "it declares (it declares:%s) nor a parameter", where,
					 inc->name, key, list);
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
	for (size_t i = 0; rc == 0 && i < ninc; i++) {
		incs[i].first_line = pgbt_line_in(full.s, full.s + incs[i].from);
		incs[i].nlines = pgbt_line_in(full.s, full.s + incs[i].to) - incs[i].first_line;
	}
	if (rc == 0)
		rc = pgbt_template_parse_expanded(name, origin, full.s ? full.s : "", full.len,
						  incs, ninc, ret, err);
	pgbt_buf_free(&full);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < ninc; i++) {
		if (check_arguments(ret, &ret->includes[i], ret->nodes, ret->nnodes, err) < 0) {
			pgbt_template_free(ret);
			return -1;
		}
	}
	return 0;
}
