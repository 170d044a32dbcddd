/* The maps of one report (what bpftrace printed since the last one) or of
 * the whole trace: entries by key, each a number, a string (a name) or a
 * histogram's buckets. */
#ifndef PGBT_REPORT_STORE_H
#define PGBT_REPORT_STORE_H

#include "spec.h"

#include <stdbool.h>
#include <stddef.h>

/* A histogram bucket: values lo..hi (integers, both included); lo is
 * RP_BELOW for bpftrace's bucket of negative values. */
#define RP_BELOW (-9223372036854775807LL - 1)
struct rp_bucket {
	long long lo, hi;
	double n;
};

struct rp_entry {
	char *key[RP_MAX_KEYS];
	int nkeys;
	double v;
	char *s;                  /* a string value (a names map), or NULL */
	struct rp_bucket *b;      /* a histogram, sorted by lo */
	int nb;
};

struct rp_mapdata {
	char name[64];
	struct rp_entry *e;
	size_t n, cap;
	size_t *slot;             /* hash of the keys -> entry index + 1 */
	size_t nslots;
};

struct rp_store {
	struct rp_mapdata *maps;
	size_t n;
};

/* The entry of map at keys, made (zero, no buckets) when new; NULL when
 * out of memory. */
struct rp_entry *rp_store_entry(struct rp_store *s, const char *map, char *const *keys,
				int nkeys);
/* The entry or NULL, without making it. */
const struct rp_entry *rp_store_find(const struct rp_store *s, const char *map,
				     char *const *keys, int nkeys);
const struct rp_mapdata *rp_store_map(const struct rp_store *s, const char *map);
bool rp_store_empty(const struct rp_store *s);

/* Adds count n to bucket lo..hi of e; -1 when out of memory. */
int rp_entry_add_bucket(struct rp_entry *e, long long lo, long long hi, double n);
double rp_entry_hist_count(const struct rp_entry *e);

/* Adds the report `from` to the running totals `to`, as each map's role
 * says (sums and counts added, maxima kept, names and cumulative maps
 * replaced). -1 when out of memory. */
int rp_store_merge(struct rp_store *to, const struct rp_store *from, const struct rp_spec *spec);

void rp_store_free(struct rp_store *s);

#endif
