/* The HTML page (report/html.h). */
#include "html.h"

#include "cell.h"
#include "escape.h"
#include "replace.h"
#include "svg.h"
#include "table.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_SECTIONS 4      /* of a table, the first (as the text orders them) */
#define HEATMAPS 4            /* rows of a table, the largest */
#define MAX_BUCKETS 160       /* log2 buckets of a heatmap: 64-bit values, and some gaps */

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;"
	"padding:0 1em}\n"
	"h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.2em;margin:1.6em 0 .4em;"
	"border-bottom:1px solid #ccc}\n"
	"dl.summary{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}\n"
	"dl.summary dt{color:#555}dl.summary dd{margin:0;overflow-wrap:anywhere}\n"
	".state{color:#555;font-style:italic}.lost{color:#a00;font-weight:bold}\n"
	"figure{margin:1em 0 2em}figcaption{margin-bottom:.4em}svg{width:100%;height:auto;display:block}\n"
	"svg text{font:11px system-ui,sans-serif;fill:#333}svg .title{font-size:12px}\n"
	"svg .grid{stroke:#e3e3e3}svg .axis{stroke:#888}svg .plot{fill:#fafafa;stroke:#ddd}\n"
	"ul.legend{list-style:none;padding:0;margin:.3em 0 0 64px;display:flex;flex-wrap:wrap;"
	"gap:.2em 1.2em}\n"
	".swatch{display:inline-block;width:.9em;height:.9em;margin-right:.35em;"
	"vertical-align:-.1em;border:1px solid #0002}\n"
	".scale{color:#555;font-size:.9em;margin:.3em 0 0 64px}\n"
	"table.report{border-collapse:collapse;margin:.4em 0 1.6em;font-variant-numeric:tabular-nums}\n"
	"table.report caption{text-align:left;font-weight:bold;padding:.3em 0}\n"
	"table.report .note{font-weight:normal;color:#555}\n"
	"table.report th,table.report td{padding:.15em .6em;border-bottom:1px solid #eee;"
	"vertical-align:top}\n"
	"table.report thead th{border-bottom:1px solid #999;text-align:left}\n"
	"table.report th.num,table.report td.num{text-align:right;white-space:nowrap}\n"
	"table.report td.key{max-width:40em;overflow-wrap:anywhere}\n"
	"table.report tr.section th{text-align:left;background:#f3f3f3}\n"
	"table.report tr.total td{border-top:1px solid #999;font-weight:bold}\n"
	"table.report tr.idle td{color:#777}table.report .idle-note{color:#777}\n"
	"table.report tr.rest td,table.report tbody.more td{color:#555;font-style:italic}\n";

static void esc(struct pgbt_buf *out, const char *s)
{
	rp_html_escape(out, s);
}

/* data-NAME="VALUE", escaped; nothing when NAME is not a plain word. */
static void data_attr(struct pgbt_buf *out, const char *name, const char *value)
{
	if (!rp_html_attr_name_ok(name))
		return;
	pgbt_buf_printf(out, " data-%s=\"", name);
	esc(out, value);
	pgbt_buf_printf(out, "\"");
}

/* A row's name for people: its label, or its shown keys joined. */
static void row_name(const struct rp_view *v, const struct rp_row *r, char *out, size_t len)
{
	int nkeys = v->t->nkeys - (v->t->split >= 0);
	size_t at = 0;

	out[0] = '\0';
	if (r->kind != ROW_KEYS || !nkeys) {
		snprintf(out, len, "%s", r->kind != ROW_KEYS ? r->label : "all");
		return;
	}
	for (int k = 0; k < nkeys && at < len; k++)
		at += (size_t)snprintf(out + at, len - at, "%s%s", k ? ", " : "", r->key[k]);
}

/* The one key a band or row is named by (waits: "event"), if one. */
static const char *only_key(const struct rp_table *t)
{
	if (t->nkeys - (t->split >= 0) != 1)
		return NULL;
	return t->keys[t->split == 0 ? 1 : 0];
}

/* ---- the header ----------------------------------------------------------- */

static void header(struct pgbt_buf *out, const struct rp_page *p)
{
	const struct rp_ident *id = p->id;
	const struct rp_history *h = p->history;
	const char *last = h->n ? h->marks[h->n - 1].when : "";

	pgbt_buf_printf(out, "<header>\n<h1>pgbt ");
	esc(out, id->script);
	pgbt_buf_printf(out, "</h1>\n<dl class=\"summary\">\n<dt>script</dt><dd id=\"script\">");
	esc(out, id->script);
	pgbt_buf_printf(out, "</dd>\n<dt>parameters</dt><dd id=\"params\">");
	for (int i = 0; i < id->nparams; i++) {
		pgbt_buf_printf(out, "%s", i ? " " : "");
		esc(out, id->params[i][0]);
		pgbt_buf_printf(out, "=");
		esc(out, id->params[i][1]);
	}
	if (!id->nparams)
		pgbt_buf_printf(out, "(none)");
	pgbt_buf_printf(out, "</dd>\n<dt>server</dt><dd id=\"server\" data-postmaster=\"%ld\" "
			"data-port=\"%d\" data-datadir=\"", id->postmaster, id->port);
	esc(out, id->datadir);
	pgbt_buf_printf(out, "\">postmaster %ld, port %d, data directory ", id->postmaster, id->port);
	esc(out, id->datadir);
	pgbt_buf_printf(out, "</dd>\n<dt>time covered</dt><dd id=\"covered\" data-seconds=\"%.9g\">"
			"%.1f s", p->seconds, p->seconds);
	if (h->first_when[0] && last[0]) {
		pgbt_buf_printf(out, " (the script's times of its reports: ");
		esc(out, h->first_when);
		if (strcmp(h->first_when, last) != 0) {
			pgbt_buf_printf(out, " to ");
			esc(out, last);
		}
		pgbt_buf_printf(out, ")");
	}
	pgbt_buf_printf(out, "</dd>\n<dt>reports</dt><dd id=\"reports\" data-reports=\"%d\">%d</dd>\n"
			"</dl>\n", p->reports, p->reports);
	if (p->lost > 0)
		pgbt_buf_printf(out, "<p class=\"lost\">bpftrace lost %.0f events so far: figures are "
				"low.</p>\n", p->lost);
	pgbt_buf_printf(out, "<p class=\"state\">%s</p>\n</header>\n",
			p->done ? "The trace ended: this page is complete." :
			"Tracing: this page is written again at each report (reload for the latest).");
}

/* ---- charts --------------------------------------------------------------- */

struct axis {
	int number[RP_HISTORY_MAX];
	const char *when[RP_HISTORY_MAX];
	struct rp_svg_x x;
};

static void axis_of(const struct rp_history *h, struct axis *a)
{
	for (int i = 0; i < h->n; i++) {
		a->number[i] = h->marks[i].number;
		a->when[i] = h->marks[i].when;
	}
	a->x = (struct rp_svg_x){ .n = h->n, .number = a->number, .when = a->when };
}

/* A section's heading as the text report has it: "client backend", or
 * "pid 4242" when the split key's values have no names. */
static void section_heading(struct pgbt_buf *out, const struct rp_view *v, const char *name)
{
	if (!v->split_named) {
		esc(out, v->t->keys[v->t->split]);
		pgbt_buf_printf(out, " ");
	}
	esc(out, name);
}

static void chart_open(struct pgbt_buf *out, const char *kind, const struct rp_view *v,
		       const struct rp_section *s, const char *row)
{
	pgbt_buf_printf(out, "<figure class=\"chart %s\" data-table=\"", kind);
	esc(out, v->t->name);
	pgbt_buf_printf(out, "\"");
	if (s->name)
		data_attr(out, "section", s->name);
	if (row)
		data_attr(out, "row", row);
	pgbt_buf_printf(out, ">\n<figcaption><b>");
	esc(out, v->t->title);
	if (s->name) {
		pgbt_buf_printf(out, ": ");
		section_heading(out, v, s->name);
	}
	if (row) {
		pgbt_buf_printf(out, ": ");
		esc(out, row);
	}
	pgbt_buf_printf(out, "</b>. ");
}

/* The idle rows of s, named in the caption of a chart that leaves them out. */
static void idle_note(struct pgbt_buf *out, const struct rp_view *v, const struct rp_section *s)
{
	int n = 0;

	for (int i = 0; i < s->nrows; i++) {
		char name[256];
		if (!s->rows[i].idle)
			continue;
		row_name(v, &s->rows[i], name, sizeof(name));
		pgbt_buf_printf(out, "%s", n++ ? ", " : " Left out, as from the table's shares: ");
		esc(out, name);
	}
	if (n)
		pgbt_buf_printf(out, " (idle: waiting for work, not working).");
}

/* Section s of a table of seconds: a band per row over the reports, the
 * rows past top summed into one, as the table has them. */
static int bands_chart(struct pgbt_buf *out, const struct rp_page *p, int table,
		       const struct rp_view *v, const struct rp_section *s, const struct rp_svg_x *x,
		       int top)
{
	struct rp_svg_band *bands = calloc((size_t)s->nrows + 1, sizeof(*bands));
	char (*names)[256] = calloc((size_t)s->nrows + 1, sizeof(*names)), what[256];
	double *rest = calloc((size_t)x->n, sizeof(*rest));
	int n = 0, keyed = 0, extra = 0;

	if (!bands || !names || !rest) {
		free(bands);
		free(names);
		free(rest);
		return -1;
	}
	for (int i = 0; i < s->nrows; i++) {
		const struct rp_row *r = &s->rows[i];
		const struct rp_series *ser = rp_history_find(p->history, table, s->name, r);

		if (r->kind == ROW_TOTAL || r->kind == ROW_REST || r->idle || !ser || !ser->seconds)
			continue;
		/* as the table: rows of their own ("on CPU") always, top keyed ones */
		if (r->kind == ROW_KEYS && keyed++ >= top) {
			for (int k = 0; k < x->n; k++)
				rest[k] += ser->seconds[k];
			extra++;
			continue;
		}
		row_name(v, r, names[n], sizeof(names[n]));
		bands[n] = (struct rp_svg_band){ .name = names[n], .attr = only_key(v->t),
						 .seconds = ser->seconds };
		n++;
	}
	if (extra) {
		snprintf(names[n], sizeof(names[n]), "(%d more)", extra);
		bands[n] = (struct rp_svg_band){ .name = names[n], .seconds = rest, .rest = true };
		n++;
	}
	if (n) {
		if (s->name && v->split_named)
			snprintf(what, sizeof(what), "%s time", s->name);
		else if (s->name)
			snprintf(what, sizeof(what), "%s %s's time", v->t->keys[v->t->split], s->name);
		else
			snprintf(what, sizeof(what), "the rows' time");
		chart_open(out, "bands", v, s, NULL);
		pgbt_buf_printf(out, "Each bar is a report; each band a row's share of ");
		esc(out, what);
		pgbt_buf_printf(out, " in it (as the table's share column: the rows added up).");
		idle_note(out, v, s);
		pgbt_buf_printf(out, " Hover a band for its time.</figcaption>\n");
		rp_svg_bands(out, x, bands, n, what);
		pgbt_buf_printf(out, "</figure>\n");
	}
	free(bands);
	free(names);
	free(rest);
	return 0;
}

/* The log2 buckets any kept report of ser has, from the lowest up, with
 * the buckets between them that none had (so that y is log2 throughout). */
static int buckets_of(const struct rp_series *ser, int n, long long *lo, long long *hi)
{
	int nb = 0;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < ser->hist[i].nb; k++) {
			const struct rp_bucket *b = &ser->hist[i].b[k];
			int at = 0;
			while (at < nb && lo[at] < b->lo)
				at++;
			if ((at < nb && lo[at] == b->lo) || nb == MAX_BUCKETS)
				continue;
			memmove(&lo[at + 1], &lo[at], (size_t)(nb - at) * sizeof(*lo));
			memmove(&hi[at + 1], &hi[at], (size_t)(nb - at) * sizeof(*hi));
			lo[at] = b->lo;
			hi[at] = b->hi;
			nb++;
		}
	for (int at = 0; at + 1 < nb && nb < MAX_BUCKETS; at++) {
		long long next, end;
		if (hi[at] < -1 || hi[at] >= LLONG_MAX / 2 || hi[at] + 1 >= lo[at + 1])
			continue;     /* no gap, or not log2 */
		next = hi[at] + 1;
		end = next <= 1 ? next : 2 * next - 1;
		if (end >= lo[at + 1])
			continue;
		memmove(&lo[at + 2], &lo[at + 1], (size_t)(nb - at - 1) * sizeof(*lo));
		memmove(&hi[at + 2], &hi[at + 1], (size_t)(nb - at - 1) * sizeof(*hi));
		lo[at + 1] = next;
		hi[at + 1] = end;
		nb++;
	}
	return nb;
}

/* Row r of a table of histograms: its buckets over the reports. */
static int heatmap_chart(struct pgbt_buf *out, const struct rp_page *p, int table,
			 const struct rp_view *v, const struct rp_section *s, const struct rp_row *r,
			 const struct rp_svg_x *x)
{
	const struct rp_series *ser = rp_history_find(p->history, table, s->name, r);
	long long lo[MAX_BUCKETS], hi[MAX_BUCKETS];
	double *count;
	char name[256];
	int nb;

	if (!ser || !ser->hist || !(nb = buckets_of(ser, x->n, lo, hi)))
		return 0;
	if (!(count = calloc((size_t)x->n * (size_t)nb, sizeof(*count))))
		return -1;
	for (int i = 0; i < x->n; i++)
		for (int k = 0; k < ser->hist[i].nb; k++)
			for (int b = 0; b < nb; b++)
				if (lo[b] == ser->hist[i].b[k].lo)
					count[i * nb + b] += ser->hist[i].b[k].n;
	row_name(v, r, name, sizeof(name));
	/* a table without keys has one row: the figure needs no row name */
	chart_open(out, "heatmap", v, s, v->t->nkeys > (v->t->split >= 0) ? name : NULL);
	pgbt_buf_printf(out, "Each column is a report; each row a log2 bucket, labelled with its "
			"upper bound; the darker, the more in it.</figcaption>\n");
	rp_svg_heatmap(out, x, &(struct rp_svg_heat){ .lo = lo, .hi = hi, .nb = nb, .count = count,
						    .unit = v->hist_unit });
	pgbt_buf_printf(out, "</figure>\n");
	free(count);
	return 0;
}

static int charts(struct pgbt_buf *out, const struct rp_page *p)
{
	static struct axis a;     /* large: out of the stack */
	bool any = false;

	if (!p->history->n)
		return 0;
	axis_of(p->history, &a);
	for (int t = 0; t < p->spec->ntables; t++) {
		struct rp_view v;
		enum rp_chart chart;
		int rc = 0, heatmaps = 0;

		if (rp_view_build(p->spec, t, p->total, NULL, -1, &v) < 0)
			return -1;
		chart = rp_chart_of(&v);
		if (chart != RP_CHART_NONE && !rp_view_empty(&v) && !any) {
			pgbt_buf_printf(out, "<section id=\"charts\">\n<h2>Over the reports</h2>\n");
			if (p->history->dropped)
				pgbt_buf_printf(out, "<p>The last %d reports; the %d before them are in the "
						"tables only.</p>\n", p->history->n, p->history->dropped);
			any = true;
		}
		for (int i = 0; rc == 0 && i < v.nsections && i < CHART_SECTIONS; i++) {
			const struct rp_section *s = &v.sections[i];
			if (chart == RP_CHART_BANDS)
				rc = bands_chart(out, p, t, &v, s, &a.x, p->top > 0 ? p->top : v.t->top);
			for (int k = 0; chart == RP_CHART_HEATMAP && rc == 0 && k < s->nrows &&
			     heatmaps < HEATMAPS; k++)
				if (s->rows[k].kind == ROW_KEYS && s->rows[k].hist.nb) {
					rc = heatmap_chart(out, p, t, &v, s, &s->rows[k], &a.x);
					heatmaps++;
				}
		}
		rp_view_free(&v);
		if (rc < 0)
			return -1;
	}
	if (any)
		pgbt_buf_printf(out, "</section>\n");
	return 0;
}

/* ---- tables --------------------------------------------------------------- */

/* A row as the text report has it: its keys, then a cell per column with
 * the figure people read and, in data-value, the JSON lines' number. */
static void row_html(struct pgbt_buf *out, const struct rp_view *v, const struct rp_row *r,
		     const enum rp_column *cols, int ncols, double seconds)
{
	static const char *const kinds[] = { "keys", "label", "rest", "total" };
	const struct rp_table *t = v->t;
	int nkeys = t->nkeys - (t->split >= 0);

	pgbt_buf_printf(out, "<tr class=\"%s%s\"", kinds[r->kind], r->idle ? " idle" : "");
	if (r->kind == ROW_KEYS)
		for (int k = 0, shown = 0; k < t->nkeys; k++)
			if (k != t->split)
				data_attr(out, t->keys[k], r->key[shown++]);
	if (r->kind != ROW_KEYS)
		data_attr(out, "label", r->label);
	pgbt_buf_printf(out, ">");
	for (int k = 0; k < nkeys || (k == 0 && !nkeys); k++) {
		pgbt_buf_printf(out, "<td class=\"key\">");
		if (r->kind == ROW_KEYS && nkeys)
			esc(out, r->key[k]);
		else if (r->kind == ROW_KEYS)
			pgbt_buf_printf(out, "all");
		else if (k == 0)
			esc(out, r->label);
		if (r->idle && k == nkeys - 1)
			pgbt_buf_printf(out, " <span class=\"idle-note\">(idle)</span>");
		pgbt_buf_printf(out, "</td>");
	}
	for (int i = 0; i < ncols; i++) {
		struct rp_cell c = rp_row_cell(v, r, cols[i], seconds);
		char text[64];

		if (c.has && c.text) {
			pgbt_buf_printf(out, "<td class=\"text\" data-column=\"%s\">", rp_column_key(cols[i]));
			esc(out, c.text);
			pgbt_buf_printf(out, "</td>");
			continue;
		}
		if (!c.has) {
			pgbt_buf_printf(out, "<td class=\"num\"></td>");
			continue;
		}
		rp_cell_text(&c, text, sizeof(text));
		pgbt_buf_printf(out, "<td class=\"num\" data-column=\"%s\" data-value=\"%.9g\">%s</td>",
				rp_column_key(cols[i]), rp_cell_raw(&c), text);
	}
	pgbt_buf_printf(out, "</tr>\n");
}

static void table_html(struct pgbt_buf *out, const struct rp_view *v, double seconds)
{
	const struct rp_table *t = v->t;
	enum rp_column cols[RP_NCOLUMNS];
	int ncols = rp_view_columns(v, cols), nkeys = t->nkeys - (t->split >= 0);
	int width = ncols + (nkeys ? nkeys : 1);

	pgbt_buf_printf(out, "<table class=\"report\" data-table=\"");
	esc(out, t->name);
	pgbt_buf_printf(out, "\">\n<caption>");
	esc(out, t->title);
	if (v->hist)
		pgbt_buf_printf(out, " <span class=\"note\">(p50&lt; p95&lt; p99&lt;: upper bounds of "
				"log2 buckets)</span>");
	if (v->samples)
		pgbt_buf_printf(out, " <span class=\"note\">(%s)</span>", RP_SAMPLES_NOTE);
	pgbt_buf_printf(out, "</caption>\n<thead><tr>");
	for (int k = 0; k < t->nkeys; k++)
		if (k != t->split) {
			pgbt_buf_printf(out, "<th scope=\"col\">");
			esc(out, t->keys[k]);
			pgbt_buf_printf(out, "</th>");
		}
	if (!nkeys)
		pgbt_buf_printf(out, "<th scope=\"col\"></th>");
	for (int i = 0; i < ncols; i++)
		pgbt_buf_printf(out, "<th scope=\"col\" class=\"num\">%s</th>",
				cols[i] == RP_COL_P50 || cols[i] == RP_COL_P95 || cols[i] == RP_COL_P99 ?
				(cols[i] == RP_COL_P50 ? "p50&lt;" : cols[i] == RP_COL_P95 ? "p95&lt;" : "p99&lt;") :
				rp_column_header(v, cols[i]));
	pgbt_buf_printf(out, "</tr></thead>\n");
	for (int i = 0; i < v->nsections; i++) {
		const struct rp_section *s = &v->sections[i];

		if (t->sections && i == t->sections) {
			/* as the text: the sections past sections= in one line */
			double rest = 0;
			char h[32] = "";
			for (int k = i; k < v->nsections; k++)
				rest += v->sections[k].total;
			if (rest > 0)
				rp_human(rest, v->sum ? v->sum_unit : UNIT_NONE, h, sizeof(h));
			pgbt_buf_printf(out, "<tbody class=\"more\"><tr><td colspan=\"%d\">(%d more ", width,
					v->nsections - i);
			esc(out, t->keys[t->split]);
			pgbt_buf_printf(out, "%s%s)</td></tr></tbody>\n", rest > 0 ? ": " : "", h);
			break;
		}
		pgbt_buf_printf(out, "<tbody");
		if (s->name) {
			data_attr(out, "section", s->name);
			pgbt_buf_printf(out, "><tr class=\"section\"><th colspan=\"%d\">", width);
			section_heading(out, v, s->name);
			pgbt_buf_printf(out, "</th></tr");
		}
		pgbt_buf_printf(out, ">\n");
		for (int r = 0; r < s->nrows; r++)
			row_html(out, v, &s->rows[r], cols, ncols, seconds);
		pgbt_buf_printf(out, "</tbody>\n");
	}
	pgbt_buf_printf(out, "</table>\n");
}

static int tables(struct pgbt_buf *out, const struct rp_page *p)
{
	bool any = false;

	pgbt_buf_printf(out, "<section id=\"tables\">\n<h2>The whole trace");
	if (p->reports > 1)
		pgbt_buf_printf(out, " (%d reports)", p->reports);
	pgbt_buf_printf(out, "</h2>\n");
	for (int i = 0; i < p->spec->ntables; i++) {
		struct rp_view v;

		if (rp_view_build(p->spec, i, p->total, NULL, p->top, &v) < 0)
			return -1;
		if (!rp_view_empty(&v)) {
			table_html(out, &v, p->seconds);
			any = true;
		}
		rp_view_free(&v);
	}
	if (!any)
		pgbt_buf_printf(out, "<p class=\"nothing\">(nothing seen)</p>\n");
	pgbt_buf_printf(out, "</section>\n");
	return 0;
}

int rp_html_page(struct pgbt_buf *out, const struct rp_page *p)
{
	const char *interval = rp_ident_param(p->id, "interval");

	pgbt_buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			"<meta name=\"generator\" content=\"pgbt-gen report\">\n");
	/* while tracing, the browser reloads it at each report by itself */
	if (!p->done && interval && atoi(interval) > 0)
		pgbt_buf_printf(out, "<meta http-equiv=\"refresh\" content=\"%d\">\n", atoi(interval));
	pgbt_buf_printf(out, "<title>pgbt ");
	esc(out, p->id->script);
	pgbt_buf_printf(out, ": port %d, ", p->id->port);
	esc(out, p->id->datadir);
	pgbt_buf_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
	header(out, p);
	if (charts(out, p) < 0 || tables(out, p) < 0)
		return -1;
	pgbt_buf_printf(out, "</body>\n</html>\n");
	return out->oom ? -1 : 0;
}

int rp_html_write(const char *path, const struct rp_page *p, struct pgbt_err *err)
{
	struct pgbt_buf b = {0};
	char what[4200];
	int rc;

	snprintf(what, sizeof(what), "--html %s", path);
	if (rp_html_page(&b, p) < 0)
		rc = pgbt_fail(err, "out of memory");
	else
		rc = rp_replace_file(path, b.s, b.len, what, err);
	pgbt_buf_free(&b);
	return rc;
}
