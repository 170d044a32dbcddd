/* The reports kept for the charts (report/history.h). */
#include "history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rp_chart rp_chart_of(const struct rp_view *v)
{
	if (v->sum && rp_unit_is_time(v->sum_unit) && (v->t->split < 0 || v->split_named))
		return RP_CHART_BANDS;
	if (v->hist)
		return RP_CHART_HEATMAP;
	return RP_CHART_NONE;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool is_row(const struct rp_series *s, int table, const char *section,
		   const struct rp_row *r)
{
	if (s->table != table || !same_text(s->section, section) ||
	    r->kind == ROW_TOTAL || r->kind == ROW_REST)
		return false;
	if (s->labelled || r->kind == ROW_LABEL)
		return s->labelled && r->kind == ROW_LABEL && strcmp(s->label, r->label) == 0;
	for (int k = 0; k < s->nkeys; k++)
		if (strcmp(s->key[k], r->key[k]) != 0)
			return false;
	return true;
}

static struct rp_series *find(const struct rp_history *h, int table, const char *section,
			      const struct rp_row *r)
{
	for (int i = 0; i < h->nseries; i++)
		if (is_row(&h->series[i], table, section, r))
			return &h->series[i];
	return NULL;
}

const struct rp_series *rp_history_find(const struct rp_history *h, int table,
					const char *section, const struct rp_row *r)
{
	return find(h, table, section, r);
}

static void free_series(struct rp_series *s)
{
	free(s->section);
	for (int k = 0; k < s->nkeys; k++)
		free(s->key[k]);
	free(s->seconds);
	if (s->hist)
		for (int i = 0; i < RP_HISTORY_MAX; i++)
			free(s->hist[i].b);
	free(s->hist);
}

/* A new series for row r, with room for every kept report (all zero). */
static struct rp_series *new_series(struct rp_history *h, enum rp_chart chart, int table,
				    const char *section, const struct rp_row *r, int nkeys)
{
	struct rp_series *all = realloc(h->series, (size_t)(h->nseries + 1) * sizeof(*all)), *s;
	bool ok;

	if (!all)
		return NULL;
	h->series = all;
	s = &all[h->nseries];
	memset(s, 0, sizeof(*s));
	s->table = table;
	s->labelled = r->kind == ROW_LABEL;
	snprintf(s->label, sizeof(s->label), "%s", r->label);
	ok = !section || (s->section = strdup(section));
	for (int k = 0; ok && !s->labelled && k < nkeys; k++)
		ok = (s->key[s->nkeys++] = strdup(r->key[k])) != NULL;
	if (ok && chart == RP_CHART_BANDS)
		ok = (s->seconds = calloc(RP_HISTORY_MAX, sizeof(*s->seconds))) != NULL;
	if (ok && chart == RP_CHART_HEATMAP)
		ok = (s->hist = calloc(RP_HISTORY_MAX, sizeof(*s->hist))) != NULL;
	if (!ok) {
		free_series(s);
		return NULL;
	}
	h->nseries++;
	return s;
}

/* Row r of report h->n - 1 into its series. */
static int add_row(struct rp_history *h, const struct rp_view *v, enum rp_chart chart, int table,
		   const struct rp_section *sec, const struct rp_row *r)
{
	struct rp_series *s;
	int at = h->n - 1;

	if (r->kind == ROW_TOTAL || r->kind == ROW_REST)
		return 0;
	/* idle waits are outside the shares the bands show */
	if (chart == RP_CHART_BANDS && (r->idle || !r->has_sum))
		return 0;
	if (chart == RP_CHART_HEATMAP && !r->hist.nb)
		return 0;
	s = find(h, table, sec->name, r);
	if (!s && !(s = new_series(h, chart, table, sec->name, r, v->t->nkeys - (v->t->split >= 0))))
		return -1;
	if (chart == RP_CHART_BANDS) {
		s->seconds[at] = r->sum * rp_unit_scale(v->sum_unit);
		return 0;
	}
	for (int i = 0; i < r->hist.nb; i++)
		if (rp_entry_add_bucket(&s->hist[at], r->hist.b[i].lo, r->hist.b[i].hi,
					r->hist.b[i].n) < 0)
			return -1;
	return 0;
}

static bool series_empty(const struct rp_series *s, int n)
{
	for (int i = 0; i < n; i++)
		if ((s->seconds && s->seconds[i] != 0) || (s->hist && s->hist[i].nb))
			return false;
	return true;
}

/* Room for one more report: the oldest goes, and the rows only it had. */
static void drop_oldest(struct rp_history *h)
{
	int kept = 0;

	memmove(&h->marks[0], &h->marks[1], (size_t)(h->n - 1) * sizeof(h->marks[0]));
	for (int i = 0; i < h->nseries; i++) {
		struct rp_series *s = &h->series[i];
		if (s->seconds) {
			memmove(&s->seconds[0], &s->seconds[1], (size_t)(h->n - 1) * sizeof(*s->seconds));
			s->seconds[h->n - 1] = 0;
		}
		if (s->hist) {
			free(s->hist[0].b);
			memmove(&s->hist[0], &s->hist[1], (size_t)(h->n - 1) * sizeof(*s->hist));
			memset(&s->hist[h->n - 1], 0, sizeof(*s->hist));
		}
		if (series_empty(s, h->n - 1))
			free_series(s);
		else
			h->series[kept++] = *s;
	}
	h->nseries = kept;
	h->n--;
	h->dropped++;
}

int rp_history_add(struct rp_history *h, const struct rp_spec *spec, const struct rp_store *report,
		   const struct rp_store *names, int number, const char *when, double seconds)
{
	struct rp_mark *m;

	if (h->n == RP_HISTORY_MAX)
		drop_oldest(h);
	m = &h->marks[h->n++];
	m->number = number;
	m->seconds = seconds;
	snprintf(m->when, sizeof(m->when), "%s", when ? when : "");
	if (!h->dropped && h->n == 1)
		snprintf(h->first_when, sizeof(h->first_when), "%s", m->when);
	for (int t = 0; t < spec->ntables; t++) {
		struct rp_view v;
		enum rp_chart chart;
		int rc = 0;

		if (rp_view_build(spec, t, report, names, -1, &v) < 0)
			return -1;
		chart = rp_chart_of(&v);
		for (int i = 0; chart != RP_CHART_NONE && rc == 0 && i < v.nsections; i++)
			for (int k = 0; rc == 0 && k < v.sections[i].nrows; k++)
				rc = add_row(h, &v, chart, t, &v.sections[i], &v.sections[i].rows[k]);
		rp_view_free(&v);
		if (rc < 0)
			return -1;
	}
	return 0;
}

void rp_history_free(struct rp_history *h)
{
	for (int i = 0; i < h->nseries; i++)
		free_series(&h->series[i]);
	free(h->series);
	memset(h, 0, sizeof(*h));
}
