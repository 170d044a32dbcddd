/* The report for people: each table ranked, in ms, s, MB, with counts,
 * averages and percentiles. */
#ifndef PGBT_REPORT_TEXT_H
#define PGBT_REPORT_TEXT_H

#include "lib/common/buf.h"
#include "spec.h"
#include "store.h"

/* Appends the tables of store under heading. seconds: how long the
 * report covers (0: unknown), for rates. top as rp_view_build's. -1 when
 * out of memory. */
int rp_text_report(struct pgbt_buf *out, const struct rp_spec *spec, const struct rp_store *store,
		   const struct rp_store *names_too, const char *heading, double seconds, int top);

#endif
