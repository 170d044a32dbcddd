/* A template's text, read once into a tree: the literal text between
 * tags, the value tags, and the {{if}} and {{for}} blocks with what they
 * hold. Rendering, a template's needs and its fragments' argument checks
 * walk this tree instead of reading the text again. Internal to the
 * template code (lib/template/template*.c). */
#ifndef PGBT_TEMPLATE_TREE_H
#define PGBT_TEMPLATE_TREE_H

#include "lib/common/err.h"

#include <stddef.h>

#define DIRECTIVE "//@"         /* starts a line for pgbt-gen, never rendered */

enum pgbt_node_kind { NODE_TEXT, NODE_VALUE, NODE_IF, NODE_FOR };

struct pgbt_node {
	enum pgbt_node_kind kind;
	const char *from, *to;          /* TEXT: the span of the template's text */
	const char *open;               /* tags: their "{{", for includes */
	int line;                       /* tags: the line of the text it is on */
	char *inner;                    /* tags: what the braces hold, trimmed */
	struct pgbt_node *body;         /* IF: when true; FOR: each pass */
	size_t nbody;
	struct pgbt_node *els;          /* IF: after {{else}} */
	size_t nels;
};

/* Where line LINE of the text came from, into ret, for messages: the
 * template knows its fragments ("NAME, include/FRAGMENT:LINE"). */
typedef void pgbt_tree_where(const void *ctx, int line, char *ret, size_t len);

/* Reads text (len bytes) into *ret (*ret_n top-level nodes), which point
 * into the text: it must outlive them. A block without {{end}}, or an
 * {{else}} or {{end}} without a block, is an error naming where it is
 * (as where(ctx, ...) says). */
int pgbt_tree_parse(const char *text, size_t len, pgbt_tree_where *where, const void *ctx,
		    struct pgbt_node **ret, size_t *ret_n, struct pgbt_err *err);
void pgbt_tree_free(struct pgbt_node *nodes, size_t n);

/* The line of text that at is on, from 1. */
int pgbt_line_in(const char *text, const char *at);

#endif
