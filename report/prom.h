/* The Prometheus text exposition format, for node_exporter's textfile
 * collector: DIR/pgbt_SCRIPT_PORT.prom, written whole to a hidden
 * temporary file in DIR and renamed over the old one, so the collector
 * never reads half a file. Sums and counts are counters over the whole
 * trace (monotonic); maxima and averages are gauges of the last report;
 * histograms have cumulative `le` buckets at the log2 bounds. */
#ifndef PGBT_REPORT_PROM_H
#define PGBT_REPORT_PROM_H

#include "ident.h"
#include "spec.h"
#include "store.h"

#include "lib/common/buf.h"
#include "lib/common/err.h"

#include <stddef.h>

/* The exposition text of the maps of spec that name a metric=. */
int rp_prom_text(struct pgbt_buf *out, const struct rp_ident *id, const struct rp_spec *spec,
		 const struct rp_store *total, const struct rp_store *last);

/* Writes it into dir; the file's path into path. */
int rp_prom_write(const char *dir, const struct rp_ident *id, const struct rp_spec *spec,
		  const struct rp_store *total, const struct rp_store *last, char *path,
		  size_t len, struct pgbt_err *err);

#endif
