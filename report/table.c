/* Joins a table's maps into rows (report/table.h). */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rp_hist_bound(const struct rp_entry *e, double q)
{
	double total = rp_entry_hist_count(e), seen = 0;

	if (total <= 0)
		return -1;
	for (int i = 0; i < e->nb; i++) {
		seen += e->b[i].n;
		if (seen >= q * total)
			return e->b[i].hi == RP_BELOW ? 0 : (double)e->b[i].hi + 1;
	}
	return (double)e->b[e->nb - 1].hi + 1;
}

const char *rp_key_name(const struct rp_spec *spec, const struct rp_table *t, int field,
			const char *raw, const struct rp_store *a, const struct rp_store *b)
{
	const char *key = t->keys[field], *map = rp_spec_names_map(spec, key), *fixed;
	char *end;
	long long n;

	if (map) {
		char *k[1] = { (char *)raw };
		const struct rp_entry *e = a ? rp_store_find(a, map, k, 1) : NULL;
		if (!e || !e->s)
			e = b ? rp_store_find(b, map, k, 1) : NULL;
		if (e && e->s)
			return e->s[0] ? e->s : "(empty)";
	}
	errno = 0;
	n = strtoll(raw, &end, 10);
	if (*raw && !*end && !errno && (fixed = rp_spec_value_name(spec, key, n)))
		return fixed;
	return raw;
}

struct build {
	const struct rp_spec *spec;
	const struct rp_table *t;
	const struct rp_store *store, *names_too;
	struct rp_view *v;
};

static struct rp_section *section_of(struct build *b, const char *name)
{
	struct rp_view *v = b->v;
	struct rp_section *s;

	for (int i = 0; i < v->nsections; i++)
		if ((!name && !v->sections[i].name) ||
		    (name && v->sections[i].name && strcmp(name, v->sections[i].name) == 0))
			return &v->sections[i];
	s = realloc(v->sections, (size_t)(v->nsections + 1) * sizeof(*s));
	if (!s)
		return NULL;
	v->sections = s;
	s = &s[v->nsections];
	memset(s, 0, sizeof(*s));
	if (name && !(s->name = strdup(name)))
		return NULL;
	v->nsections++;
	return s;
}

static bool row_matches(const struct rp_row *r, enum rp_row_kind kind, char *const *key,
			int nkey, const char *label)
{
	if (r->kind != kind)
		return false;
	if (kind == ROW_LABEL)
		return strcmp(r->label, label) == 0;
	for (int i = 0; i < nkey; i++)
		if (strcmp(r->key[i], key[i]) != 0)
			return false;
	return true;
}

/* The row (made when new) for shown keys key (ROW_KEYS) or label. */
static struct rp_row *row_of(struct rp_section *s, enum rp_row_kind kind, char *const *key,
			     int nkey, const char *label)
{
	struct rp_row *r;

	for (int i = 0; i < s->nrows; i++)
		if (row_matches(&s->rows[i], kind, key, nkey, label))
			return &s->rows[i];
	r = realloc(s->rows, (size_t)(s->nrows + 1) * sizeof(*r));
	if (!r)
		return NULL;
	s->rows = r;
	r = &r[s->nrows];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->share = -1;
	if (label)
		snprintf(r->label, sizeof(r->label), "%s", label);
	for (int i = 0; i < nkey; i++)
		if (!(r->key[i] = strdup(key[i])))
			return NULL;
	s->nrows++;
	return r;
}

/* v of a map in unit from, in unit to (a column's: its first map's). */
static double in_unit(double v, enum rp_unit from, enum rp_unit to)
{
	return from == to ? v : v * rp_unit_scale(from) / rp_unit_scale(to);
}

/* Adds entry e of map m into row r. */
static int add_to_row(const struct rp_view *v, struct rp_row *r, const struct rp_map *m,
		      const struct rp_entry *e)
{
	switch (m->role) {
	case ROLE_SUM:
		r->sum += in_unit(e->v, m->unit, v->sum_unit);
		r->has_sum = true;
		break;
	case ROLE_COUNT:
		r->count += e->v;
		r->has_count = true;
		break;
	case ROLE_SAMPLES:
		r->samples += e->v;
		r->has_samples = true;
		break;
	case ROLE_MAX: {
		double x = in_unit(e->v, m->unit, v->max_unit);
		r->max = !r->has_max || x > r->max ? x : r->max;
		r->has_max = true;
		break;
	}
	case ROLE_AVG:
		r->avg = in_unit(e->v, m->unit, v->avg_unit);
		r->has_avg = true;
		break;
	case ROLE_VALUE:
		r->value = in_unit(e->v, m->unit, v->value_unit);
		r->has_value = true;
		if (e->s && !r->text && !(r->text = strdup(e->s)))
			return -1;
		break;
	case ROLE_HIST:
		for (int i = 0; i < e->nb; i++)
			if (rp_entry_add_bucket(&r->hist, e->b[i].lo, e->b[i].hi, e->b[i].n) < 0)
				return -1;
		break;
	}
	return 0;
}

static int add_map(struct build *b, const struct rp_map *m)
{
	const struct rp_mapdata *md = rp_store_map(b->store, m->name);
	const struct rp_table *t = b->t;

	for (size_t i = 0; md && i < md->n; i++) {
		const struct rp_entry *e = &md->e[i];
		char *shown[RP_MAX_KEYS];
		int nshown = 0;
		const char *sec = NULL;
		struct rp_section *s;
		struct rp_row *r;

		if (m->row[0]) {
			if (t->split >= 0 && e->nkeys == 1)
				sec = rp_key_name(b->spec, t, t->split, e->key[0], b->store, b->names_too);
		} else {
			for (int k = 0; k < e->nkeys && k < t->nkeys; k++) {
				const char *name = rp_key_name(b->spec, t, k, e->key[k], b->store,
							       b->names_too);
				if (k == t->split)
					sec = name;
				else
					shown[nshown++] = (char *)name;
			}
		}
		if (!(s = section_of(b, sec)))
			return -1;
		r = m->row[0] ? row_of(s, ROW_LABEL, NULL, 0, m->row) :
				row_of(s, ROW_KEYS, shown, nshown, NULL);
		if (!r || add_to_row(b->v, r, m, e) < 0)
			return -1;
		if (!m->row[0] && t->idle[0] && e->nkeys && strcmp(e->key[e->nkeys - 1], t->idle) == 0)
			r->idle = true;
	}
	return 0;
}

/* The columns the table's maps give; a column's unit is that of its first
 * keyed map (a row= map may keep other units: ns of CPU beside us of waits). */
static void note_columns(struct rp_view *v, const struct rp_spec *spec, int table)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < spec->nmaps; i++) {
			const struct rp_map *m = &spec->maps[i];
			bool *has;
			enum rp_unit *unit;

			if (m->table != table || (pass == 0) == (m->row[0] != '\0'))
				continue;
			switch (m->role) {
			case ROLE_SUM: has = &v->sum; unit = &v->sum_unit; break;
			case ROLE_HIST: has = &v->hist; unit = &v->hist_unit; break;
			case ROLE_MAX: has = &v->max; unit = &v->max_unit; break;
			case ROLE_AVG: has = &v->avg; unit = &v->avg_unit; break;
			case ROLE_VALUE: has = &v->value; unit = &v->value_unit; break;
			case ROLE_SAMPLES: v->samples = true; continue;
			default: v->count = true; continue;
			}
			if (!*has)
				*unit = m->unit;
			*has = true;
		}
	/* a histogram counts, and an average follows from a sum and a count */
	v->count = v->count || v->hist;
	if (v->sum && v->count && !v->avg) {
		v->avg = true;
		v->avg_unit = v->sum_unit;
	}
	v->share = (v->sum || v->count) && v->t->nkeys > 0;
}

static double rank_of(const struct rp_view *v, const struct rp_row *r)
{
	if (v->sum)
		return r->sum;
	if (v->count)
		return r->count;
	if (v->max)
		return r->max;
	return r->value;
}

static int by_rank(const void *a, const void *b)
{
	const struct rp_row *x = a, *y = b;

	if (x->idle != y->idle)
		return x->idle ? 1 : -1;
	return x->rank < y->rank ? 1 : x->rank > y->rank ? -1 : 0;
}

static void free_row(struct rp_row *r)
{
	free(r->text);
	for (int k = 0; k < RP_MAX_KEYS; k++)
		free(r->key[k]);
	free(r->hist.b);
}

/* Rows past top (not labels, not idle) summed into one "(N more)" row. */
static int cut(struct rp_section *s, int top)
{
	struct rp_row rest = { .kind = ROW_REST, .share = -1 }, *keep;
	int n = 0, extra = 0;

	for (int i = 0; i < s->nrows; i++)
		extra += s->rows[i].kind == ROW_KEYS && !s->rows[i].idle;
	if (extra <= top || s->nrows <= 0)
		return 0;
	keep = calloc((size_t)s->nrows, sizeof(*keep));
	if (!keep)
		return -1;
	extra = 0;
	for (int i = 0, shown = 0; i < s->nrows; i++) {
		struct rp_row *r = &s->rows[i];
		if (r->kind != ROW_KEYS || r->idle || shown++ < top) {
			keep[n++] = *r;
			continue;
		}
		extra++;
		rest.sum += r->sum;
		rest.count += r->count;
		rest.samples += r->samples;
		rest.max = r->max > rest.max ? r->max : rest.max;
		rest.has_sum |= r->has_sum;
		rest.has_count |= r->has_count;
		rest.has_samples |= r->has_samples;
		rest.has_max |= r->has_max;
		rest.rank += r->rank;
		for (int k = 0; k < r->hist.nb; k++)
			if (rp_entry_add_bucket(&rest.hist, r->hist.b[k].lo, r->hist.b[k].hi,
						r->hist.b[k].n) < 0) {
				free(keep);
				return -1;
			}
		free_row(r);
	}
	snprintf(rest.label, sizeof(rest.label), "(%d more)", extra);
	/* it goes after the shown rows, before idle ones */
	for (int i = n; i > 0; i--) {
		if (!keep[i - 1].idle) {
			memmove(&keep[i + 1], &keep[i], (size_t)(n - i) * sizeof(*keep));
			keep[i] = rest;
			n++;
			break;
		}
	}
	free(s->rows);
	s->rows = keep;
	s->nrows = n;
	return 0;
}

static bool all_zero(const struct rp_row *r)
{
	return r->sum == 0 && r->count == 0 && r->max == 0 && r->avg == 0 && r->value == 0 &&
	       r->samples == 0 && !r->text && rp_entry_hist_count(&r->hist) == 0;
}

static int finish_section(struct rp_view *v, struct rp_section *s, int top)
{
	double total = 0;
	struct rp_row *r;
	int kept = 0;

	/* bpftrace 0.17 prints a cleared map without keys as 0: nothing seen */
	for (int i = 0; i < s->nrows; i++) {
		if (all_zero(&s->rows[i]))
			free_row(&s->rows[i]);
		else
			s->rows[kept++] = s->rows[i];
	}
	s->nrows = kept;

	for (int i = 0; i < s->nrows; i++) {
		r = &s->rows[i];
		if (v->hist && !r->has_count && r->hist.nb) {
			r->count = rp_entry_hist_count(&r->hist);
			r->has_count = true;
		}
		r->rank = rank_of(v, r);
		if (!r->idle)
			total += r->rank;
	}
	s->total = total;
	qsort(s->rows, (size_t)s->nrows, sizeof(*s->rows), by_rank);
	if (top && cut(s, top) < 0)
		return -1;
	for (int i = 0; i < s->nrows; i++) {
		r = &s->rows[i];
		if (r->has_sum && r->has_count && r->count > 0 && !r->has_avg) {
			r->avg = r->sum / r->count;
			r->has_avg = true;
		}
		if (v->share && !r->idle && total > 0)
			r->share = r->rank / total;
	}
	if (v->t->total && v->share && s->nrows > 1) {
		/* after the rows it adds up, before the idle ones */
		struct rp_row *rows = realloc(s->rows, (size_t)(s->nrows + 1) * sizeof(*rows)), t;
		int at = 0;

		if (!rows)
			return -1;
		s->rows = rows;
		memset(&t, 0, sizeof(t));
		t.kind = ROW_TOTAL;
		snprintf(t.label, sizeof(t.label), "total");
		for (int i = 0; i < s->nrows; i++) {
			if (rows[i].idle)
				continue;
			at = i + 1;
			t.sum += rows[i].sum;
			t.count += rows[i].count;
			t.samples += rows[i].samples;
			t.has_sum |= rows[i].has_sum;
			t.has_count |= rows[i].has_count && rows[i].kind != ROW_LABEL;
			t.has_samples |= rows[i].has_samples;
		}
		t.share = total > 0 ? 1 : -1;
		memmove(&rows[at + 1], &rows[at], (size_t)(s->nrows - at) * sizeof(*rows));
		rows[at] = t;
		s->nrows++;
	}
	return 0;
}

/* A column is shown only where some row has a figure in it: waits keeps
 * counts and histograms in one mode, samples in another. */
static void keep_columns_with_figures(struct rp_view *v)
{
	bool count = false, samples = false, hist = false, max = false, avg = false, value = false;

	for (int i = 0; i < v->nsections; i++)
		for (int k = 0; k < v->sections[i].nrows; k++) {
			const struct rp_row *r = &v->sections[i].rows[k];
			count |= r->has_count && r->kind != ROW_LABEL;
			samples |= r->has_samples;
			hist |= r->hist.nb > 0;
			max |= r->has_max;
			avg |= r->has_avg;
			value |= r->has_value || r->text;
		}
	v->count &= count;
	v->samples &= samples;
	v->hist &= hist;
	v->max &= max;
	v->avg &= avg;
	v->value &= value;
}

static int by_section(const void *a, const void *b, void *arg)
{
	const struct build *bd = arg;
	const struct rp_section *x = a, *y = b;
	const char *key;
	int rx, ry;

	if (!x->name || !y->name)
		return x->name ? 1 : y->name ? -1 : 0;
	/* in the order of the key's value lines, else the largest first */
	key = bd->t->keys[bd->t->split];
	rx = rp_spec_value_rank(bd->spec, key, x->name);
	ry = rp_spec_value_rank(bd->spec, key, y->name);
	if (rx != ry)
		return rx - ry;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

int rp_view_build(const struct rp_spec *spec, int table, const struct rp_store *store,
		  const struct rp_store *names_too, int top, struct rp_view *ret)
{
	struct build b = { spec, &spec->tables[table], store, names_too, ret };

	memset(ret, 0, sizeof(*ret));
	ret->t = b.t;
	ret->split_named = b.t->split >= 0 &&
		rp_spec_value_rank(spec, b.t->keys[b.t->split], "") > 0;
	note_columns(ret, spec, table);
	for (int i = 0; i < spec->nmaps; i++)
		if (spec->maps[i].table == table && add_map(&b, &spec->maps[i]) < 0)
			goto fail;
	for (int i = 0; i < ret->nsections; i++)
		if (finish_section(ret, &ret->sections[i], top < 0 ? 0 : top ? top : b.t->top) < 0)
			goto fail;
	if (ret->nsections > 1 && b.t->split >= 0)
		qsort_r(ret->sections, (size_t)ret->nsections, sizeof(*ret->sections), by_section, &b);
	keep_columns_with_figures(ret);
	return 0;
fail:
	rp_view_free(ret);
	return -1;
}

bool rp_view_empty(const struct rp_view *v)
{
	for (int i = 0; i < v->nsections; i++)
		if (v->sections[i].nrows)
			return false;
	return true;
}

void rp_view_free(struct rp_view *v)
{
	for (int i = 0; i < v->nsections; i++) {
		for (int k = 0; k < v->sections[i].nrows; k++)
			free_row(&v->sections[i].rows[k]);
		free(v->sections[i].rows);
		free(v->sections[i].name);
	}
	free(v->sections);
	memset(v, 0, sizeof(*v));
}
