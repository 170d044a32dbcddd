/* Prometheus exposition (report/prom.h), after
 * prometheus.io/docs/instrumenting/exposition_formats: "# HELP", "# TYPE",
 * then one line per series, label values escaped (\\, \", \n). */
#include "prom.h"

#include "replace.h"
#include "table.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A label value: escaped, and valid UTF-8 (a byte that is not becomes
 * '?'), as Prometheus rejects a whole file for one bad label. */
static void label_value(struct pgbt_buf *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; u[i];) {
		size_t n = u[i] < 0x80 ? 1 : u[i] >= 0xc2 && u[i] <= 0xdf ? 2 :
			   u[i] >= 0xe0 && u[i] <= 0xef ? 3 : u[i] >= 0xf0 && u[i] <= 0xf4 ? 4 : 0;
		bool ok = n > 0;

		for (size_t k = 1; ok && k < n; k++)
			ok = (u[i + k] & 0xc0) == 0x80;
		if (!ok) {
			pgbt_buf_add(out, "?", 1);
			i++;
			continue;
		}
		if (u[i] == '\\' || u[i] == '"')
			pgbt_buf_printf(out, "\\%c", u[i]);
		else if (u[i] == '\n')
			pgbt_buf_add(out, "\\n", 2);
		else
			pgbt_buf_add(out, s + i, n);
		i += n;
	}
}

/* {key="value",...,datadir="...",port="..."} without the closing brace,
 * so that a bucket can add le=. */
static void labels(struct pgbt_buf *out, const struct rp_ident *id, const struct rp_spec *spec,
		   const struct rp_map *m, const struct rp_entry *e, const struct rp_store *total)
{
	const struct rp_table *t = &spec->tables[m->table];

	pgbt_buf_add(out, "{", 1);
	for (int k = 0; k < e->nkeys; k++) {
		int field = m->row[0] ? t->split : k;
		pgbt_buf_printf(out, "%s=\"", t->keys[field]);
		label_value(out, rp_key_name(spec, t, field, e->key[k], total, NULL));
		pgbt_buf_add(out, "\",", 2);
	}
	pgbt_buf_add(out, "datadir=\"", 9);
	label_value(out, id->datadir);
	pgbt_buf_printf(out, "\",port=\"%d\"", id->port);
}

static double scaled(const struct rp_map *m, double v)
{
	return v * rp_unit_scale(m->unit);
}

/* The sum map of m's table with m's keys, for a histogram's _sum. */
static const struct rp_map *sum_of(const struct rp_spec *spec, const struct rp_map *m)
{
	for (int i = 0; i < spec->nmaps; i++) {
		const struct rp_map *s = &spec->maps[i];
		if (s->table == m->table && s->role == ROLE_SUM && !s->row[0] && s->unit == m->unit)
			return s;
	}
	return NULL;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every bucket bound any series of the histogram has had: the same le
 * for each series, as histogram_quantile wants. */
static double *bounds_of(const struct rp_mapdata *md, int *ret_n)
{
	double *b = NULL;
	int n = 0;

	for (size_t i = 0; i < md->n; i++)
		for (int k = 0; k < md->e[i].nb; k++) {
			double hi = md->e[i].b[k].hi == LLONG_MAX ? -1 : (double)md->e[i].b[k].hi + 1;
			bool seen = hi < 0;
			for (int j = 0; j < n && !seen; j++)
				seen = b[j] == hi;
			if (seen)
				continue;
			double *nb = realloc(b, (size_t)(n + 1) * sizeof(*b));
			if (!nb) {
				free(b);
				return NULL;
			}
			b = nb;
			b[n++] = hi;
		}
	if (b)
		qsort(b, (size_t)n, sizeof(*b), by_double);
	*ret_n = n;
	return b;
}

static void histogram(struct pgbt_buf *out, const struct rp_ident *id, const struct rp_spec *spec,
		      const struct rp_map *m, const struct rp_mapdata *md,
		      const struct rp_store *total)
{
	const struct rp_map *sm = sum_of(spec, m);
	int nb = 0;
	double *bounds = bounds_of(md, &nb);

	if (nb && !bounds) {
		out->oom = true;
		return;
	}
	for (size_t i = 0; i < md->n; i++) {
		const struct rp_entry *e = &md->e[i];
		const struct rp_entry *se = sm ? rp_store_find(total, sm->name, e->key, e->nkeys) : NULL;
		double cum = 0;
		int k = 0;

		for (int j = 0; j < nb; j++) {
			for (; k < e->nb && e->b[k].hi != LLONG_MAX && (double)e->b[k].hi + 1 <= bounds[j]; k++)
				cum += e->b[k].n;
			pgbt_buf_printf(out, "%s_bucket", m->metric);
			labels(out, id, spec, m, e, total);
			pgbt_buf_printf(out, ",le=\"%.9g\"} %.0f\n", scaled(m, bounds[j]), cum);
		}
		pgbt_buf_printf(out, "%s_bucket", m->metric);
		labels(out, id, spec, m, e, total);
		pgbt_buf_printf(out, ",le=\"+Inf\"} %.0f\n", rp_entry_hist_count(e));
		if (se) {
			pgbt_buf_printf(out, "%s_sum", m->metric);
			labels(out, id, spec, m, e, total);
			pgbt_buf_printf(out, "} %.9g\n", scaled(sm, se->v));
		}
		pgbt_buf_printf(out, "%s_count", m->metric);
		labels(out, id, spec, m, e, total);
		pgbt_buf_printf(out, "} %.0f\n", rp_entry_hist_count(e));
	}
	free(bounds);
}

int rp_prom_text(struct pgbt_buf *out, const struct rp_ident *id, const struct rp_spec *spec,
		 const struct rp_store *total, const struct rp_store *last)
{
	for (int i = 0; i < spec->nmaps; i++) {
		const struct rp_map *m = &spec->maps[i];
		bool gauge = m->role == ROLE_MAX || m->role == ROLE_AVG;
		const struct rp_mapdata *md = rp_store_map(gauge ? last : total, m->name);
		const char *type = m->role == ROLE_HIST ? "histogram" : gauge ? "gauge" : "counter";

		if (!m->metric[0] || !md || !md->n)
			continue;
		pgbt_buf_printf(out, "# HELP %s pgbt %s: %s (%s%s%s)\n", m->metric, spec->script,
				spec->tables[m->table].title, m->row[0] ? m->row : m->name,
				gauge ? ", in the last report" : "",
				m->unit != UNIT_NONE ? rp_unit_is_time(m->unit) ? ", seconds" : ", bytes" : "");
		pgbt_buf_printf(out, "# TYPE %s %s\n", m->metric, type);
		if (m->role == ROLE_HIST) {
			histogram(out, id, spec, m, md, total);
			continue;
		}
		for (size_t k = 0; k < md->n; k++) {
			pgbt_buf_printf(out, "%s", m->metric);
			labels(out, id, spec, m, &md->e[k], total);
			pgbt_buf_printf(out, "} %.9g\n", scaled(m, md->e[k].v));
		}
	}
	return out->oom ? -1 : 0;
}

static void file_name(const struct rp_ident *id, char *out, size_t len)
{
	snprintf(out, len, "pgbt_%s_%d.prom", id->script, id->port);
	for (char *c = out; *c; c++)
		if (*c == '-')
			*c = '_';
}

int rp_prom_write(const char *dir, const struct rp_ident *id, const struct rp_spec *spec,
		  const struct rp_store *total, const struct rp_store *last, char *path,
		  size_t len, struct pgbt_err *err)
{
	struct pgbt_buf b = {0};
	char name[128], final[PATH_MAX], what[PATH_MAX + 16];
	int rc = -1;

	file_name(id, name, sizeof(name));
	snprintf(final, sizeof(final), "%s/%s", dir, name);
	snprintf(what, sizeof(what), "--textfile %s", dir);
	if (rp_prom_text(&b, id, spec, total, last) < 0)
		pgbt_fail(err, "out of memory");
	else if (rp_replace_file(final, b.s ? b.s : "", b.len, what, err) == 0)
		rc = 0;
	if (rc == 0)
		snprintf(path, len, "%s", final);
	pgbt_buf_free(&b);
	return rc;
}
