#include "template_tree.h"

#include "lib/common/buf.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int pgbt_line_in(const char *text, const char *at)
{
	int line = 1;
	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

struct tag {
	const char *open, *close;   /* "{{" and just after "}}" */
	const char *from, *to;      /* the span to drop: the whole line when
				       the tag stands alone on it */
	const char *in;             /* what the braces hold, trimmed: in_len bytes */
	size_t in_len;
};

/* The next {{ }} in [p, e). text is the template's start, to look behind p. */
static bool next_tag(const char *text, const char *p, const char *e, struct tag *t)
{
	const char *q = p < e ? memmem(p, (size_t)(e - p), "{{", 2) : NULL;
	const char *c = q ? memmem(q + 2, (size_t)(e - q - 2), "}}", 2) : NULL;
	const char *ls, *le;

	if (!c)
		return false;
	t->open = t->from = q;
	t->close = t->to = c + 2;
	t->in_len = (size_t)(c - q - 2);
	t->in = pgbt_trim_span(q + 2, &t->in_len);
	/* a tag alone on its line takes the line with it */
	for (ls = q; ls > p && (ls[-1] == ' ' || ls[-1] == '\t'); ls--)
		;
	for (le = t->close; le < e && (*le == ' ' || *le == '\t'); le++)
		;
	if ((ls == text || ls[-1] == '\n') && (le == e || *le == '\n')) {
		t->from = ls;
		t->to = le < e ? le + 1 : le;
	}
	return true;
}

static bool is_block(const struct tag *t, const char *kw)
{
	size_t l = strlen(kw);
	return t->in_len >= l && strncmp(t->in, kw, l) == 0 && (t->in_len == l || t->in[l] == ' ');
}

struct parse {
	pgbt_tree_where *where;
	const void *ctx;
	const char *text;
	const char *at;         /* a cursor: tags are met in the text's order */
	int line;               /* the line at is on */
};

/* The line of at, which is not before any earlier call's. */
static int line_at(struct parse *ps, const char *at)
{
	for (; ps->at < at; ps->at++)
		ps->line += *ps->at == '\n';
	return ps->line;
}

static const char *where(const struct parse *ps, const char *at, char *buf, size_t len)
{
	ps->where(ps->ctx, pgbt_line_in(ps->text, at), buf, len);
	return buf;
}

/* From p, finds the {{else}} (if any) and {{end}} matching an open block. */
static int find_end(const struct parse *ps, const struct tag *open, const char *e,
		    struct tag *els, struct tag *end, struct pgbt_err *err)
{
	const char *p = open->to;
	struct tag t;
	int depth = 0;
	char w[160];

	els->open = NULL;
	while (next_tag(ps->text, p, e, &t)) {
		if (is_block(&t, "if") || is_block(&t, "for"))
			depth++;
		else if (is_block(&t, "end") && depth-- == 0) {
			*end = t;
			return 0;
		} else if (is_block(&t, "else") && depth == 0)
			*els = t;
		p = t.close;
	}
	return pgbt_fail(err, "%s: {{%.*s}} has no {{end}}", where(ps, open->open, w, sizeof(w)),
			 (int)open->in_len, open->in);
}

/* Appends node to *v (*n of them); its children become the array's. */
static int add(struct pgbt_node **v, size_t *n, const struct pgbt_node *node,
	       struct pgbt_err *err)
{
	struct pgbt_node *grown = realloc(*v, (*n + 1) * sizeof(**v));

	if (!grown)
		return pgbt_fail(err, "out of memory");
	*v = grown;
	grown[(*n)++] = *node;
	return 0;
}

static int add_text(struct pgbt_node **v, size_t *n, const char *from, const char *to,
		    struct pgbt_err *err)
{
	struct pgbt_node node = { .kind = NODE_TEXT, .from = from, .to = to };

	return from < to ? add(v, n, &node, err) : 0;
}

static int add_tag(struct pgbt_node **v, size_t *n, enum pgbt_node_kind kind,
		   const struct tag *t, int line, struct pgbt_node *node, struct pgbt_err *err)
{
	node->kind = kind;
	node->open = t->open;
	node->line = line;
	node->inner = strndup(t->in, t->in_len);
	if (!node->inner || add(v, n, node, err) < 0) {
		free(node->inner);
		return pgbt_fail(err, "out of memory");
	}
	return 0;
}

/* [p, e) into nodes, the way the text renders: a block tag alone on its
 * line takes the line, a value tag leaves it (but note(), which renders
 * as nothing). */
static int parse_seq(struct parse *ps, const char *p, const char *e, struct pgbt_node **v,
		     size_t *n, struct pgbt_err *err)
{
	struct tag t, els, end = { 0 };
	char w[160];

	while (p < e && next_tag(ps->text, p, e, &t)) {
		bool is_for = is_block(&t, "for");
		int line = line_at(ps, t.open);

		if (is_for || is_block(&t, "if")) {
			struct pgbt_node block = { .kind = NODE_TEXT };

			if (add_text(v, n, p, t.from, err) < 0 ||
			    find_end(ps, &t, e, &els, &end, err) < 0)
				return -1;
			/* a {{for}} renders up to its {{end}}, an {{else}} included */
			if (parse_seq(ps, t.to, is_for || !els.open ? end.from : els.from,
				      &block.body, &block.nbody, err) < 0 ||
			    (!is_for && els.open &&
			     parse_seq(ps, els.to, end.from, &block.els, &block.nels, err) < 0) ||
			    add_tag(v, n, is_for ? NODE_FOR : NODE_IF, &t, line, &block, err) < 0) {
				pgbt_tree_free(block.body, block.nbody);
				pgbt_tree_free(block.els, block.nels);
				return -1;
			}
			p = end.to;
			continue;
		}
		if (is_block(&t, "else") || is_block(&t, "end"))
			return pgbt_fail(err, "%s: {{%.*s}} without {{if}} or {{for}}",
					 where(ps, t.open, w, sizeof(w)), (int)t.in_len, t.in);
		/* a note() renders as nothing: alone on its line, it takes the
		   line, as a block tag does */
		bool note = t.in_len > 5 && strncmp(t.in, "note(", 5) == 0;
		struct pgbt_node value = { .kind = NODE_TEXT };
		if (add_text(v, n, p, note ? t.from : t.open, err) < 0 ||
		    add_tag(v, n, NODE_VALUE, &t, line, &value, err) < 0)
			return -1;
		p = note ? t.to : t.close;
	}
	return add_text(v, n, p, e, err);
}

int pgbt_tree_parse(const char *text, size_t len, pgbt_tree_where *where, const void *ctx,
		    struct pgbt_node **ret, size_t *ret_n, struct pgbt_err *err)
{
	struct parse ps = { where, ctx, text, text, 1 };

	*ret = NULL;
	*ret_n = 0;
	if (parse_seq(&ps, text, text + len, ret, ret_n, err) == 0)
		return 0;
	pgbt_tree_free(*ret, *ret_n);
	*ret = NULL;
	*ret_n = 0;
	return -1;
}

void pgbt_tree_free(struct pgbt_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		pgbt_tree_free(nodes[i].body, nodes[i].nbody);
		pgbt_tree_free(nodes[i].els, nodes[i].nels);
		free(nodes[i].inner);
	}
	free(nodes);
}
