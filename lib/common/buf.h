/* A growable string: rendering appends to it; on allocation failure it
 * remembers the failure and later appends do nothing. And trimming. */
#ifndef PGBT_BUF_H
#define PGBT_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct pgbt_buf {
	char *s;
	size_t len, cap;
	bool oom;
};

void pgbt_buf_add(struct pgbt_buf *b, const char *s, size_t n);
void pgbt_buf_printf(struct pgbt_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pgbt_buf_free(struct pgbt_buf *b);

/* s (*n bytes) without leading/trailing blanks: where it starts, and its
 * length in *n. */
const char *pgbt_trim_span(const char *s, size_t *n);
/* Copies s (n bytes) without leading/trailing blanks into out, cut to
 * fit; false when it was cut. */
bool pgbt_trim(const char *s, size_t n, char *out, size_t outlen);
/* The same, whole, on the heap (NULL: out of memory). */
char *pgbt_trim_dup(const char *s, size_t n);
/* What "FN(ARGS)" passes, trimmed, on the heap; NULL when s is no such
 * call (or out of memory). */
char *pgbt_call_args(const char *s, const char *fn);

#endif
