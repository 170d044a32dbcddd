/* Text tables (report/text.h): fixed-width columns, keys first. */
#include "text.h"

#include "table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define KEY_WIDTH_MAX 48
#define COL 9

void rp_human(double v, enum rp_unit u, char *out, size_t len)
{
	double s;

	if (rp_unit_is_time(u)) {
		s = v * rp_unit_scale(u);
		if (s >= 100)
			snprintf(out, len, "%.0f s", s);
		else if (s >= 1)
			snprintf(out, len, "%.2f s", s);
		else if (s >= 0.01)
			snprintf(out, len, "%.0f ms", s * 1e3);
		else if (s >= 0.001)
			snprintf(out, len, "%.1f ms", s * 1e3);
		else if (s >= 1e-6 || s == 0)
			snprintf(out, len, "%.0f us", s * 1e6);
		else
			snprintf(out, len, "%.0f ns", s * 1e9);
	} else if (u == UNIT_BYTES) {
		if (v >= 1024.0 * 1024 * 1024)
			snprintf(out, len, "%.2f GB", v / (1024.0 * 1024 * 1024));
		else if (v >= 1024.0 * 1024)
			snprintf(out, len, "%.1f MB", v / (1024.0 * 1024));
		else if (v >= 1024)
			snprintf(out, len, "%.1f kB", v / 1024);
		else
			snprintf(out, len, "%.0f B", v);
	} else if (v >= 1e6 || v <= -1e6 || (double)(long long)v == v) {
		snprintf(out, len, "%.0f", v);
	} else {
		snprintf(out, len, "%.2f", v);
	}
}

static const char *sum_header(enum rp_unit u)
{
	return rp_unit_is_time(u) ? "time" : u == UNIT_BYTES ? "bytes" : "sum";
}

/* A cell: a value or blank. */
static void cell(struct pgbt_buf *out, bool has, double v, enum rp_unit u)
{
	char s[32] = "";

	if (has)
		rp_human(v, u, s, sizeof(s));
	pgbt_buf_printf(out, " %*s", COL, s);
}

/* The text of a key cell, cut to width with "..." at its end. */
static void key_cell(struct pgbt_buf *out, const char *s, int width)
{
	int n = (int)strlen(s);

	if (n > width)
		pgbt_buf_printf(out, "%.*s...", width - 3, s);
	else
		pgbt_buf_printf(out, "%-*s", width, s);
}

static int key_width(const struct rp_view *v, int k, const char *header)
{
	int w = (int)strlen(header);

	for (int i = 0; i < v->nsections; i++)
		for (int r = 0; r < v->sections[i].nrows; r++) {
			const struct rp_row *row = &v->sections[i].rows[r];
			const char *s = row->kind != ROW_KEYS ? (k == 0 ? row->label : "") :
					row->key[k] ? row->key[k] : "all";
			int n = (int)strlen(s) + (row->idle && k == 0 ? 7 : 0);
			w = n > w ? n : w;
		}
	return w > KEY_WIDTH_MAX ? KEY_WIDTH_MAX : w;
}

static void row_line(struct pgbt_buf *out, const struct rp_view *v, const struct rp_row *r,
		     int nkeys, const int *width, double seconds)
{
	pgbt_buf_printf(out, "  ");
	for (int k = 0; k < nkeys; k++) {
		char s[512];
		if (r->kind == ROW_KEYS)
			snprintf(s, sizeof(s), "%s%s", r->key[k], r->idle && k == nkeys - 1 ? " (idle)" : "");
		else
			snprintf(s, sizeof(s), "%s", k == 0 ? r->label : "");
		key_cell(out, s, width[k]);
		pgbt_buf_printf(out, " ");
	}
	if (!nkeys)
		key_cell(out, r->kind == ROW_KEYS ? "all" : r->label, width[0]);
	if (v->sum)
		cell(out, r->has_sum, r->sum, v->sum_unit);
	if (v->share) {
		char s[16] = "";
		if (r->share >= 0)
			snprintf(s, sizeof(s), "%.1f%%", r->share * 100);
		pgbt_buf_printf(out, " %7s", s);
	}
	if (v->count)
		cell(out, r->has_count && r->kind != ROW_LABEL, r->count, UNIT_NONE);
	if (v->t->rate) {
		/* of the sum when there is one (bytes per second), else of the count */
		char s[32] = "";
		bool has = v->sum ? r->has_sum : r->has_count && r->kind != ROW_LABEL;
		double x = (v->sum ? r->sum : r->count) / seconds;
		if (seconds >= 0.05 && has && v->sum)
			rp_human(x, v->sum_unit, s, sizeof(s));
		else if (seconds >= 0.05 && has)
			snprintf(s, sizeof(s), x >= 100 ? "%.0f" : "%.1f", x);
		pgbt_buf_printf(out, " %*s", COL, s);
	}
	if (v->avg)
		cell(out, r->has_avg && r->kind != ROW_TOTAL, r->avg, v->avg_unit);
	if (v->hist) {
		static const double q[] = { 0.5, 0.95, 0.99 };
		for (int i = 0; i < 3; i++) {
			double b = rp_hist_bound(&r->hist, q[i]);
			cell(out, b >= 0, b, v->hist_unit);
		}
	}
	if (v->max)
		cell(out, r->has_max, r->max, v->max_unit);
	if (v->value && r->text)
		pgbt_buf_printf(out, " %s", r->text);
	else if (v->value)
		cell(out, r->has_value, r->value, v->value_unit);
	/* no trailing blanks */
	while (out->len && out->s[out->len - 1] == ' ')
		out->len--;
	pgbt_buf_printf(out, "\n");
}

static void header_line(struct pgbt_buf *out, const struct rp_view *v, int nkeys,
			const int *width)
{
	const struct rp_table *t = v->t;

	pgbt_buf_printf(out, "  ");
	for (int k = 0, shown = 0; k < t->nkeys; k++) {
		if (k == t->split)
			continue;
		key_cell(out, t->keys[k], width[shown++]);
		pgbt_buf_printf(out, " ");
	}
	if (!nkeys)
		key_cell(out, "", width[0]);
	if (v->sum)
		pgbt_buf_printf(out, " %*s", COL, sum_header(v->sum_unit));
	if (v->share)
		pgbt_buf_printf(out, " %7s", "share");
	if (v->count)
		pgbt_buf_printf(out, " %*s", COL, "count");
	if (v->t->rate)
		pgbt_buf_printf(out, " %*s", COL, "per s");
	if (v->avg)
		pgbt_buf_printf(out, " %*s", COL, "avg");
	if (v->hist)
		pgbt_buf_printf(out, " %*s %*s %*s", COL, "p50<", COL, "p95<", COL, "p99<");
	if (v->max)
		pgbt_buf_printf(out, " %*s", COL, "max");
	if (v->value)
		pgbt_buf_printf(out, " %*s", COL, "value");
	pgbt_buf_printf(out, "\n");
}

static void table_text(struct pgbt_buf *out, const struct rp_view *v, double seconds)
{
	const struct rp_table *t = v->t;
	int nkeys = t->nkeys - (t->split >= 0), width[RP_MAX_KEYS];

	pgbt_buf_printf(out, "%s%s:\n", t->title,
			v->hist ? " (p50< p95< p99<: upper bounds of log2 buckets)" : "");
	for (int k = 0, shown = 0; k < t->nkeys; k++)
		if (k != t->split) {
			width[shown] = key_width(v, shown, t->keys[k]);
			shown++;
		}
	if (!nkeys)
		width[0] = key_width(v, 0, "");
	for (int i = 0; i < v->nsections; i++) {
		const struct rp_section *s = &v->sections[i];
		if (t->sections && i == t->sections) {
			double rest = 0;
			for (int k = i; k < v->nsections; k++)
				rest += v->sections[k].total;
			pgbt_buf_printf(out, "(%d more %s%s", v->nsections - i, t->keys[t->split],
					v->sections[i].total > 0 ? ": " : "");
			if (rest > 0) {
				char h[32];
				rp_human(rest, v->sum ? v->sum_unit : UNIT_NONE, h, sizeof(h));
				pgbt_buf_printf(out, "%s", h);
			}
			pgbt_buf_printf(out, ")\n");
			break;
		}
		if (s->name && v->split_named)
			pgbt_buf_printf(out, "%s:\n", s->name);
		else if (s->name && strlen(s->name) > 100)
			pgbt_buf_printf(out, "%s %.97s...:\n", t->keys[t->split], s->name);
		else if (s->name)
			pgbt_buf_printf(out, "%s %s:\n", t->keys[t->split], s->name);
		header_line(out, v, nkeys, width);
		for (int r = 0; r < s->nrows; r++)
			row_line(out, v, &s->rows[r], nkeys, width, seconds);
	}
}

int rp_text_report(struct pgbt_buf *out, const struct rp_spec *spec, const struct rp_store *store,
		   const struct rp_store *names_too, const char *heading, double seconds, int top)
{
	bool any = false;

	pgbt_buf_printf(out, "\n%s\n", heading);
	for (int i = 0; i < spec->ntables; i++) {
		struct rp_view v;

		if (rp_view_build(spec, i, store, names_too, top, &v) < 0)
			return -1;
		if (!rp_view_empty(&v)) {
			pgbt_buf_printf(out, "\n");
			table_text(out, &v, seconds);
			any = true;
		}
		rp_view_free(&v);
	}
	if (!any)
		pgbt_buf_printf(out, "(nothing seen)\n");
	return out->oom ? -1 : 0;
}
