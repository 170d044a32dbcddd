#include "buf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct pgbt_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *s;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	while (cap < b->len + more + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void pgbt_buf_add(struct pgbt_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void pgbt_buf_printf(struct pgbt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pgbt_buf_free(struct pgbt_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

const char *pgbt_trim_span(const char *s, size_t *n)
{
	while (*n && isspace((unsigned char)*s))
		s++, (*n)--;
	while (*n && isspace((unsigned char)s[*n - 1]))
		(*n)--;
	return s;
}

bool pgbt_trim(const char *s, size_t n, char *out, size_t outlen)
{
	bool whole;

	s = pgbt_trim_span(s, &n);
	whole = n < outlen;
	if (!whole)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return whole;
}

char *pgbt_call_args(const char *s, const char *fn)
{
	size_t fl = strlen(fn), sl = strlen(s);

	if (sl < fl + 2 || strncmp(s, fn, fl) != 0 || s[fl] != '(' || s[sl - 1] != ')')
		return NULL;
	return pgbt_trim_dup(s + fl + 1, sl - fl - 2);
}

char *pgbt_trim_dup(const char *s, size_t n)
{
	char *out;

	s = pgbt_trim_span(s, &n);
	out = malloc(n + 1);
	if (out) {
		memcpy(out, s, n);
		out[n] = '\0';
	}
	return out;
}
