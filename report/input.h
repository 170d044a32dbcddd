/* bpftrace's "-f json" output, one message a line, read with json-c. What
 * differs between bpftrace versions is absorbed here: 0.17 prints blank
 * lines and keys tuples as "a,b"; 0.26 and later drop the blanks inside a
 * tuple key, print integers too large for a double as strings, and give
 * attached_probes and lost_events a "count". */
#ifndef PGBT_REPORT_INPUT_H
#define PGBT_REPORT_INPUT_H

#include "lib/common/err.h"
#include "spec.h"
#include "store.h"

#include <json-c/json.h>

enum rp_msg_kind {
	RP_MSG_NONE,      /* a blank line, attached_probes: nothing to do */
	RP_MSG_TEXT,      /* printf, cat, join, syscall, value: text */
	RP_MSG_TIME,      /* time(): text too, and the report's time */
	RP_MSG_MAP,       /* map, hist, stats: one map */
	RP_MSG_LOST,      /* lost_events: bpftrace dropped events */
	RP_MSG_PROBLEM,   /* helper_error, runtime_error, errorf, warnf */
};

struct rp_msg {
	enum rp_msg_kind kind;
	const char *text;             /* TEXT, TIME, PROBLEM */
	char map[64];                 /* MAP: its name */
	const char *type;             /* MAP: "map", "hist" or "stats" */
	struct json_object *data;     /* MAP: its value */
	double lost;                  /* LOST */
	struct json_object *root;     /* owns the above */
	char problem[256];
};

/* Reads one line (without its newline). Errors: not JSON, not an object
 * with a known "type", a map message without exactly one map. */
int rp_msg_parse(const char *line, size_t len, struct rp_msg *ret, struct pgbt_err *err);
void rp_msg_free(struct rp_msg *m);

/* Puts the map of message m into store, as spec describes it (keys split
 * into its fields, numbers, strings or buckets). A map spec does not
 * know is an error naming it. */
int rp_msg_to_store(const struct rp_msg *m, const struct rp_spec *spec, struct rp_store *store,
		    struct pgbt_err *err);

#endif
