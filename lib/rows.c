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

void pgbt_rows_escape(const char *s, size_t max_bytes, char *out, size_t outlen)
{
	size_t o = 0;

	if (!outlen)
		return;
	for (size_t i = 0; s[i] && i < max_bytes; i++) {
		unsigned char ch = (unsigned char)s[i];
		char e[8];
		size_t el;

		if (ch == '"' || ch == '\\')
			el = (size_t)snprintf(e, sizeof(e), "\\%c", ch);
		else if (ch < 0x20 || ch > 0x7e)
			el = (size_t)snprintf(e, sizeof(e), "\\%03o", ch);
		else
			el = (size_t)snprintf(e, sizeof(e), "%c", ch);
		if (o + el >= outlen)
			break;
		memcpy(out + o, e, el);
		o += el;
	}
	out[o] = '\0';
}
