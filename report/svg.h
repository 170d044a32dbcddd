/* The HTML page's charts, drawn as inline SVG (no script, no network):
 * bands stacked over the reports, and a heatmap of log2 buckets over the
 * reports. Each mark carries data- attributes with its figures, so that
 * the page can be checked as well as looked at. Knows nothing of tables:
 * the page gives it numbers and names. */
#ifndef PGBT_REPORT_SVG_H
#define PGBT_REPORT_SVG_H

#include "spec.h"

#include "lib/common/buf.h"

#include <stdbool.h>

/* The reports along x, in time order. */
struct rp_svg_x {
	int n;
	const int *number;            /* data-report */
	const char *const *when;      /* the script's time, or "" */
};

/* One band: a row's seconds in each report. */
struct rp_svg_band {
	const char *name;             /* legend, and data-ATTR */
	const char *attr;             /* the key it names: "event" */
	const double *seconds;        /* x->n of them */
	bool rest;                    /* the rows past the top, summed */
};

/* Bands stacked in each report as shares of the bar's total (y: 0 to
 * 100%), first band at the bottom, with a legend. what: what the total is
 * ("client backend time"). */
void rp_svg_bands(struct pgbt_buf *out, const struct rp_svg_x *x, const struct rp_svg_band *bands,
		  int nbands, const char *what);

/* Counts by log2 bucket (lo..hi, in unit) in each report: count[r * nb + b]
 * for report r and bucket b, buckets from the lowest up. */
struct rp_svg_heat {
	const long long *lo, *hi;
	int nb;
	const double *count;
	enum rp_unit unit;
};

void rp_svg_heatmap(struct pgbt_buf *out, const struct rp_svg_x *x, const struct rp_svg_heat *h);

#endif
