/* The reports one after the other, for the HTML page's charts: for each
 * table it charts, each row's seconds (bands stacked over the reports) or
 * log2 buckets (a heatmap), taken from the rows report/table.c makes of
 * each report, as the text and JSON lines show them. Only the last
 * RP_HISTORY_MAX reports are kept, and rows no kept report has, so that
 * a trace of weeks stays bounded. */
#ifndef PGBT_REPORT_HISTORY_H
#define PGBT_REPORT_HISTORY_H

#include "spec.h"
#include "store.h"
#include "table.h"

#include <stdbool.h>

#define RP_HISTORY_MAX 720

/* What a table is charted as: bands when its rows are seconds (and its
 * sections, if any, are process kinds rather than PIDs or queries that
 * come and go), else a heatmap per row when it has histograms. */
enum rp_chart { RP_CHART_NONE, RP_CHART_BANDS, RP_CHART_HEATMAP };

struct rp_mark {
	int number;                   /* the report's number (1, 2, ...) */
	char when[16];                /* the script's time of it, or "" */
	double seconds;               /* how long it covers */
};

/* One row of one table over the kept reports. */
struct rp_series {
	int table;
	char *section;                /* the split key's value, or NULL */
	char *key[RP_MAX_KEYS];       /* shown keys (a ROW_KEYS row) */
	int nkeys;
	bool labelled;                /* a row of its own ... */
	char label[64];               /* ... named so: "on CPU" */
	double *seconds;              /* BANDS: in each kept report */
	struct rp_entry *hist;        /* HEATMAP: buckets in each kept report */
};

struct rp_history {
	struct rp_mark marks[RP_HISTORY_MAX];
	int n;                        /* reports kept */
	int dropped;                  /* older ones, no longer kept */
	char first_when[16];          /* the first report's time, or "" */
	struct rp_series *series;
	int nseries;
};

enum rp_chart rp_chart_of(const struct rp_view *v);

/* Adds report `number` (its maps in report; names looked up there, then in
 * names), dropping the oldest when RP_HISTORY_MAX are kept. -1 when out
 * of memory. */
int rp_history_add(struct rp_history *h, const struct rp_spec *spec, const struct rp_store *report,
		   const struct rp_store *names, int number, const char *when, double seconds);

/* The series of row r of section `section` of table `table`, or NULL. */
const struct rp_series *rp_history_find(const struct rp_history *h, int table,
					const char *section, const struct rp_row *r);

void rp_history_free(struct rp_history *h);

#endif
