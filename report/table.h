/* A report table as people and programs read it: the maps of one table
 * joined by key into rows (a sum, a count, an average, percentiles from
 * the histogram), keys named, rows in sections by the split key, ranked
 * by share, the rows past `top` summed into one. */
#ifndef PGBT_REPORT_TABLE_H
#define PGBT_REPORT_TABLE_H

#include "spec.h"
#include "store.h"

#include <stdbool.h>

enum rp_row_kind { ROW_KEYS, ROW_LABEL, ROW_REST, ROW_TOTAL };

struct rp_row {
	enum rp_row_kind kind;
	char *key[RP_MAX_KEYS];       /* as shown: names where the script has them */
	char label[64];               /* ROW_LABEL: "on CPU"; ROW_REST: "(3 more)" */
	bool has_sum, has_count, has_max, has_avg, has_value, has_samples;
	double sum, count, max, avg, value;   /* in the view's units */
	double samples;               /* ROLE_SAMPLES: samples the sum stands for */
	struct rp_entry hist;         /* buckets (owned) */
	char *text;                   /* a value that is a string (a file name) */
	bool idle;                    /* outside the shares */
	double rank;                  /* what rows are ordered by */
	double share;                 /* of the section's rank total; <0: none */
};

struct rp_section {
	char *name;                   /* the split key's value, or NULL */
	double total;                 /* of its rows' ranks, idle ones aside */
	struct rp_row *rows;
	int nrows;
};

struct rp_view {
	const struct rp_table *t;
	/* the columns shown, with their units: those its maps give, but for
	 * a column no row has a figure in (mode=sample of waits has no
	 * counts or histograms, the other modes no samples) */
	bool sum, count, hist, max, avg, value, share, samples;
	enum rp_unit sum_unit, hist_unit, max_unit, avg_unit, value_unit;
	struct rp_section *sections;
	int nsections;
	bool split_named;             /* the split key has value names (kind) */
};

/* The view of table t from store (names looked up in store, then in
 * names_too, e.g. the whole trace's). top: rows kept per section, the rest
 * summed (0: the table's top=, <0: every row). -1 when out of memory. */
int rp_view_build(const struct rp_spec *spec, int table, const struct rp_store *store,
		  const struct rp_store *names_too, int top, struct rp_view *ret);
void rp_view_free(struct rp_view *v);
bool rp_view_empty(const struct rp_view *v);

/* The upper bound (in the map's unit) of the bucket holding quantile q
 * of e's histogram: every value there is below it. <0 when empty. */
double rp_hist_bound(const struct rp_entry *e, double q);

/* Shown value of key field `field` of table t for raw value raw: a fixed
 * name, a name from a names map (in a or b), or raw itself. */
const char *rp_key_name(const struct rp_spec *spec, const struct rp_table *t, int field,
			const char *raw, const struct rp_store *a, const struct rp_store *b);

#endif
