/* What pgbt-gen report knows of a script's maps: its "//@ report"
 * directives (docs/templates.md, "Reports"), read from the template. A
 * table gathers the maps that share its keys into columns (a sum, a count,
 * a histogram...); names and values turn keys into what people read. */
#ifndef PGBT_REPORT_SPEC_H
#define PGBT_REPORT_SPEC_H

#include "lib/common/err.h"
#include "lib/template/template.h"

#include <stdbool.h>

#define RP_MAX_KEYS 6
#define RP_MAX_TABLES 12
#define RP_MAX_MAPS 32
#define RP_MAX_NAMES 8
#define RP_MAX_VALUES 16

/* ROLE_SAMPLES: a count of samples (mode=sample of waits), each standing
 * for a time the script has already added to the table's sum: shown as
 * its own column, never taken for events (no average from it). */
enum rp_role { ROLE_SUM, ROLE_COUNT, ROLE_HIST, ROLE_MAX, ROLE_AVG, ROLE_VALUE, ROLE_SAMPLES };
enum rp_unit { UNIT_NONE, UNIT_NS, UNIT_US, UNIT_MS, UNIT_BYTES };

struct rp_table {
	char name[32];
	char title[128];
	char keys[RP_MAX_KEYS][32];   /* what each key of its maps is */
	int nkeys;
	int split;                    /* a key whose values get a section each, or -1 */
	int text;                     /* a key that may hold commas (a query), or -1 */
	int top;                      /* rows shown per section, the rest summed */
	int sections;                 /* sections shown (the largest), 0 all */
	char idle[64];                /* a last-key value outside the shares */
	bool total;                   /* a total line: the rows add up */
	bool rate;                    /* counts per second too */
};

struct rp_map {
	char name[64];                /* "@wait_us" */
	int table;
	enum rp_role role;
	enum rp_unit unit;
	char row[64];                 /* a row of its own, keyed by the split
					 key alone: "on CPU" */
	char metric[96];              /* Prometheus name; "" not exported */
	bool cumulative;              /* never cleared: a total, not a delta */
};

/* Values of key `key` named by a map of the script (@db_names[OID]). */
struct rp_names {
	char key[32];
	char map[64];
};

/* A fixed name for one value of a key (kind 1: "client backend"). */
struct rp_value {
	char key[32];
	long long number;
	char name[64];
};

struct rp_spec {
	char script[64];
	struct rp_table tables[RP_MAX_TABLES];
	int ntables;
	struct rp_map maps[RP_MAX_MAPS];
	int nmaps;
	struct rp_names names[RP_MAX_NAMES];
	int nnames;
	struct rp_value values[RP_MAX_VALUES];
	int nvalues;
};

/* The spec of a loaded template; a script without directives has none
 * (an error saying so). Errors name the template's line. */
int rp_spec_read(const struct pgbt_template *tpl, struct rp_spec *ret, struct pgbt_err *err);

const struct rp_map *rp_spec_map(const struct rp_spec *s, const char *name);
/* The map whose values name key `key`'s values, or NULL. */
const char *rp_spec_names_map(const struct rp_spec *s, const char *key);
/* Whether name is a names map. */
bool rp_spec_is_names_map(const struct rp_spec *s, const char *name);
/* The fixed name of value `number` of key `key`, or NULL. */
const char *rp_spec_value_name(const struct rp_spec *s, const char *key, long long number);
/* Its rank among the fixed names of key (their order in the template),
 * or the number of them when it has none: sections are shown so. */
int rp_spec_value_rank(const struct rp_spec *s, const char *key, const char *value);

/* A map's keys: its table's, or for a row= map, only the split key. */
int rp_map_nkeys(const struct rp_spec *s, const struct rp_map *m);

const char *rp_unit_name(enum rp_unit u);
/* What one unit of u is in seconds or bytes (1 for none). */
double rp_unit_scale(enum rp_unit u);
bool rp_unit_is_time(enum rp_unit u);

#endif
