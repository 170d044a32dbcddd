/* The report as one HTML page (--html FILE): who was traced and for how
 * long, charts over the reports (report/svg.h), and the whole trace's
 * tables with the rows, figures and units of the text report. One file,
 * no script and nothing fetched, replaced whole at each report so that a
 * browser's reload shows the latest. Marks and cells carry data-
 * attributes with their raw figures (seconds, bytes, shares 0 to 1: the
 * JSON lines' numbers), so the page can be checked. */
#ifndef PGBT_REPORT_HTML_H
#define PGBT_REPORT_HTML_H

#include "history.h"
#include "ident.h"
#include "spec.h"
#include "store.h"

#include "lib/common/buf.h"
#include "lib/common/err.h"

#include <stdbool.h>

struct rp_page {
	const struct rp_ident *id;
	const struct rp_spec *spec;
	const struct rp_store *total;       /* the whole trace so far */
	const struct rp_history *history;   /* the reports, for the charts */
	int reports;                        /* so far */
	double seconds;                     /* they cover */
	double lost;                        /* events bpftrace lost */
	int top;                            /* as rp_view_build's */
	bool done;                          /* the trace ended */
};

/* The page's text; -1 when out of memory. */
int rp_html_page(struct pgbt_buf *out, const struct rp_page *p);

/* The page written to path, whole or not at all (report/replace.h). */
int rp_html_write(const char *path, const struct rp_page *p, struct pgbt_err *err);

#endif
