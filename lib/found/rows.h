/* Rows: a small named table of strings that comes from outside the binary
 * (a database's catalog, read by lib/found/catalog.c) and that a template loops
 * over: {{for R in relations limit 300}} @relname[{{R.db}}, {{R.oid}}] =
 * "{{R.name}}"; {{end}}. Every cell is checked to be safe inside a bpftrace
 * string literal (printable ASCII, escapes only \\ \" \NNN), so no value
 * read from a database can become bpftrace code. */
#ifndef PGBT_ROWS_H
#define PGBT_ROWS_H

#include "lib/common/err.h"

#include <stdbool.h>
#include <stddef.h>

#define PGBT_ROWS_MAX_COLUMNS 8

struct pgbt_rows {
	char name[32];                  /* what {{for R in NAME}} names */
	char columns[PGBT_ROWS_MAX_COLUMNS][32];
	size_t ncolumns;
	char **cells;                   /* nrows x ncolumns, row by row */
	size_t nrows, cap;
	char origin[256];               /* where the rows came from, for provenance */
};

int pgbt_rows_init(struct pgbt_rows *r, const char *name, const char *columns,
		   const char *origin, struct pgbt_err *err);
/* Appends one row of ncolumns cells; a cell that is not safe in a bpftrace
 * string literal is an error (escape it with pgbt_rows_escape first). */
int pgbt_rows_add(struct pgbt_rows *r, const char *const *cells, struct pgbt_err *err);
void pgbt_rows_free(struct pgbt_rows *r);

/* The cell of column col in row i, or NULL when there is no such column. */
const char *pgbt_rows_cell(const struct pgbt_rows *r, size_t i, const char *col);

/* Escapes s for a bpftrace string literal whose value is also safe inside
 * a JSON string and on a terminal (bpftrace cannot escape at run time): in
 * the value, " and \ become \" and \\, control characters and bytes that
 * are not UTF-8 \u00XX (Latin-1), UTF-8 characters stay (as \NNN in the
 * literal). The value holds at most max_bytes (bpftrace's default string
 * size is 64 bytes with the NUL), cut before an escape or a character, never
 * inside one. */
void pgbt_rows_escape(const char *s, size_t max_bytes, char *out, size_t outlen);
bool pgbt_rows_safe(const char *cell);

#endif
