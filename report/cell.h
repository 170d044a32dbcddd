/* A table's columns and a row's cells, as every output for people shows
 * them (the text report, the HTML page): which cells a row has, their
 * figures, and the text of each. One place, so the outputs agree. */
#ifndef PGBT_REPORT_CELL_H
#define PGBT_REPORT_CELL_H

#include "table.h"

#include <stdbool.h>
#include <stddef.h>

enum rp_column {
	RP_COL_SUM, RP_COL_SHARE, RP_COL_COUNT, RP_COL_SAMPLES, RP_COL_RATE, RP_COL_AVG,
	RP_COL_P50, RP_COL_P95, RP_COL_P99, RP_COL_MAX, RP_COL_VALUE,
	RP_NCOLUMNS
};

/* What a table with a samples column says of its times, after its title. */
#define RP_SAMPLES_NOTE "estimates from samples: each sample of a process counts for the period between samples"

/* How a cell's figure reads: "1.25 s", "34.5%", a rate of counts. */
enum rp_show { RP_SHOW_HUMAN, RP_SHOW_PERCENT, RP_SHOW_RATE };

struct rp_cell {
	bool has;                 /* false: a blank cell */
	double value;             /* in unit (a share: 0 to 1) */
	enum rp_unit unit;
	enum rp_show show;
	const char *text;         /* a value that is a string, shown as is */
};

/* value (in unit u) for people: "1.25 s", "830 us", "12.4 MB", "1234". */
void rp_human(double value, enum rp_unit u, char *out, size_t len);

/* The columns view v shows, in order, into cols; their number. */
int rp_view_columns(const struct rp_view *v, enum rp_column cols[RP_NCOLUMNS]);
/* Its heading: "time", "share", "p95<"... */
const char *rp_column_header(const struct rp_view *v, enum rp_column c);
/* Its name in the JSON lines ("sum", "p95"; "rate" for per s). */
const char *rp_column_key(enum rp_column c);

/* Row r's cell in column c; seconds: how long the report covers, for
 * rates (below 0.05: none). */
struct rp_cell rp_row_cell(const struct rp_view *v, const struct rp_row *r, enum rp_column c,
			   double seconds);
/* Its text for people ("" when blank). */
void rp_cell_text(const struct rp_cell *cell, char *out, size_t len);
/* Its figure in seconds or bytes, as the JSON lines give it. */
double rp_cell_raw(const struct rp_cell *cell);

#endif
