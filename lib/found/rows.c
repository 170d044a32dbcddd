#include "rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pgbt_rows_init(struct pgbt_rows *r, const char *name, const char *columns,
		   const char *origin, struct pgbt_err *err)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->origin, sizeof(r->origin), "%s", origin);
	for (const char *c = columns; *c && r->ncolumns < PGBT_ROWS_MAX_COLUMNS;) {
		size_t l = strcspn(c, " ");
		if (l)
			snprintf(r->columns[r->ncolumns++], sizeof(r->columns[0]), "%.*s", (int)l, c);
		c += l + (c[l] == ' ');
	}
	return r->ncolumns ? 0 : pgbt_fail(err, "rows %s: no columns", name);
}

bool pgbt_rows_safe(const char *cell)
{
	for (const char *p = cell; *p; p++) {
		if (*p < 0x20 || *p > 0x7e || *p == '"')
			return false;
		if (*p != '\\')
			continue;
		if (p[1] == '\\' || p[1] == '"')
			p++;
		else if (p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
			 p[3] >= '0' && p[3] <= '7')
			p += 3;
		else
			return false;
	}
	return true;
}

int pgbt_rows_add(struct pgbt_rows *r, const char *const *cells, struct pgbt_err *err)
{
	if (r->nrows == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		char **c = realloc(r->cells, cap * r->ncolumns * sizeof(*c));
		if (!c)
			return pgbt_fail(err, "rows %s: out of memory", r->name);
		r->cells = c;
		r->cap = cap;
	}
	for (size_t i = 0; i < r->ncolumns; i++)
		if (!pgbt_rows_safe(cells[i]))
			return pgbt_fail(err, "rows %s: '%.60s' is not safe in a bpftrace string",
					 r->name, cells[i]);
	for (size_t i = 0; i < r->ncolumns; i++) {
		r->cells[r->nrows * r->ncolumns + i] = strdup(cells[i]);
		if (!r->cells[r->nrows * r->ncolumns + i]) {
			while (i-- > 0)
				free(r->cells[r->nrows * r->ncolumns + i]);
			return pgbt_fail(err, "rows %s: out of memory", r->name);
		}
	}
	r->nrows++;
	return 0;
}

void pgbt_rows_free(struct pgbt_rows *r)
{
	for (size_t i = 0; i < r->nrows * r->ncolumns; i++)
		free(r->cells[i]);
	free(r->cells);
	r->cells = NULL;
	r->nrows = r->cap = 0;
}

const char *pgbt_rows_cell(const struct pgbt_rows *r, size_t i, const char *col)
{
	for (size_t c = 0; c < r->ncolumns; c++)
		if (strcmp(r->columns[c], col) == 0)
			return i < r->nrows ? r->cells[i * r->ncolumns + c] : NULL;
	return NULL;
}

/* The length of the UTF-8 sequence that starts at s (2-4), or 0 when the
 * bytes there are not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] > 0xf4 ? 0 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void pgbt_rows_escape(const char *s, size_t max_bytes, char *out, size_t outlen)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, shown = 0;   /* shown: bytes of the string bpftrace will hold */

	if (!outlen)
		return;
	for (size_t i = 0; u[i];) {
		char e[32];
		size_t el = 0, n = 1, value_len;

		/* The value itself stays JSON-safe: " and \ escaped, control and
		 * stray bytes as \u00XX, whole UTF-8 characters as they are. */
		if (u[i] == '"' || u[i] == '\\') {
			el = (size_t)snprintf(e, sizeof(e), "\\\\\\%c", u[i]);
			value_len = 2;
		} else if (u[i] < 0x20 || u[i] == 0x7f || (u[i] > 0x7f && !utf8_len(u + i))) {
			el = (size_t)snprintf(e, sizeof(e), "\\\\u%04x", u[i]);
			value_len = 6;
		} else if (u[i] > 0x7f) {
			n = utf8_len(u + i);
			for (size_t k = 0; k < n; k++)
				el += (size_t)snprintf(e + el, sizeof(e) - el, "\\%03o", u[i + k]);
			value_len = n;
		} else {
			el = (size_t)snprintf(e, sizeof(e), "%c", u[i]);
			value_len = 1;
		}
		if (shown + value_len > max_bytes || o + el >= outlen)
			break;
		memcpy(out + o, e, el);
		o += el;
		shown += value_len;
		i += n;
	}
	out[o] = '\0';
}
