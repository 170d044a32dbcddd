/* JSON lines for log shippers: one object per report, schema
 * "pgbt-report/1" (docs/report.md describes every field). */
#ifndef PGBT_REPORT_JSONL_H
#define PGBT_REPORT_JSONL_H

#include "ident.h"
#include "spec.h"
#include "store.h"

#include "lib/common/err.h"

#include <stdbool.h>
#include <stdio.h>

#define RP_JSON_SCHEMA "pgbt-report/1"

int rp_jsonl_write(FILE *f, const struct rp_ident *id, const struct rp_spec *spec,
		   const struct rp_store *store, const struct rp_store *names_too, int report,
		   bool whole, const char *when, double seconds, struct pgbt_err *err);

#endif
