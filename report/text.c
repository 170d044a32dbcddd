/* Text tables (report/text.h): fixed-width columns, keys first. */
#include "text.h"

#include "cell.h"
#include "table.h"

#include <stdio.h>
#include <string.h>

#define KEY_WIDTH_MAX 48
#define COL 9
#define SHARE_COL 7

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
	enum rp_column cols[RP_NCOLUMNS];
	int ncols;

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
	ncols = rp_view_columns(v, cols);
	for (int i = 0; i < ncols; i++) {
		struct rp_cell c = rp_row_cell(v, r, cols[i], seconds);
		char s[64];

		rp_cell_text(&c, s, sizeof(s));
		if (c.text)
			pgbt_buf_printf(out, " %s", c.text);   /* a file name: whole */
		else
			pgbt_buf_printf(out, " %*s", cols[i] == RP_COL_SHARE ? SHARE_COL : COL, s);
	}
	/* no trailing blanks */
	while (out->len && out->s[out->len - 1] == ' ')
		out->len--;
	pgbt_buf_printf(out, "\n");
}

static void header_line(struct pgbt_buf *out, const struct rp_view *v, int nkeys,
			const int *width)
{
	const struct rp_table *t = v->t;
	enum rp_column cols[RP_NCOLUMNS];
	int ncols;

	pgbt_buf_printf(out, "  ");
	for (int k = 0, shown = 0; k < t->nkeys; k++) {
		if (k == t->split)
			continue;
		key_cell(out, t->keys[k], width[shown++]);
		pgbt_buf_printf(out, " ");
	}
	if (!nkeys)
		key_cell(out, "", width[0]);
	ncols = rp_view_columns(v, cols);
	for (int i = 0; i < ncols; i++)
		pgbt_buf_printf(out, " %*s", cols[i] == RP_COL_SHARE ? SHARE_COL : COL,
				rp_column_header(v, cols[i]));
	pgbt_buf_printf(out, "\n");
}

static void table_text(struct pgbt_buf *out, const struct rp_view *v, double seconds)
{
	const struct rp_table *t = v->t;
	int nkeys = t->nkeys - (t->split >= 0), width[RP_MAX_KEYS];

	pgbt_buf_printf(out, "%s%s%s%s%s:\n", t->title,
			v->hist ? " (p50< p95< p99<: upper bounds of log2 buckets)" : "",
			v->samples ? " (" : "", v->samples ? RP_SAMPLES_NOTE : "", v->samples ? ")" : "");
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
