/* SVG charts (report/svg.h). Sizes are in the SVG's own units; the page
 * scales the whole drawing to its width (viewBox). */
#include "svg.h"

#include "cell.h"
#include "escape.h"
#include "store.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define WIDTH 900.0
#define LEFT 64.0        /* room for the y labels */
#define RIGHT 12.0
#define TOP 12.0
#define BOTTOM 46.0      /* room for the x labels and the axis title */
#define X_LABELS 10      /* at most, so that they do not overlap */

/* Distinct colours, told apart by most readers; more bands than these go
 * round the hue circle. The rows past the top are grey. */
static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8",
};
#define NPALETTE (int)(sizeof(palette) / sizeof(palette[0]))
#define REST_COLOUR "#bab0ac"

static void colour(int i, bool rest, char *out, size_t len)
{
	if (rest)
		snprintf(out, len, "%s", REST_COLOUR);
	else if (i < NPALETTE)
		snprintf(out, len, "%s", palette[i]);
	else
		snprintf(out, len, "hsl(%d,55%%,55%%)", (int)fmod((i - NPALETTE) * 137.5 + 20, 360));
}

/* "#3 16:52:36", or "#3" when the script printed no time. */
static void report_name(const struct rp_svg_x *x, int i, char *out, size_t len)
{
	snprintf(out, len, "#%d%s%s", x->number[i], x->when[i][0] ? " " : "", x->when[i]);
}

static void open_svg(struct pgbt_buf *out, double height, const char *label)
{
	/* inline in HTML: the parser gives it the SVG namespace */
	pgbt_buf_printf(out, "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", WIDTH, height);
	rp_html_escape(out, label);
	pgbt_buf_printf(out, "\">\n");
}

/* The reports along x: some labelled (the script's time, else the report's
 * number), and the axis's title. */
static void x_axis(struct pgbt_buf *out, const struct rp_svg_x *x, double height)
{
	double pw = WIDTH - LEFT - RIGHT, bw = pw / x->n, base = height - BOTTOM;
	int step = (x->n + X_LABELS - 1) / X_LABELS;

	pgbt_buf_printf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n",
			LEFT, base, WIDTH - RIGHT, base);
	for (int i = 0; i < x->n; i += step) {
		pgbt_buf_printf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">",
				LEFT + (i + 0.5) * bw, base + 16);
		rp_html_escape(out, x->when[i][0] ? x->when[i] : "");
		if (!x->when[i][0])
			pgbt_buf_printf(out, "#%d", x->number[i]);
		pgbt_buf_printf(out, "</text>\n");
	}
	pgbt_buf_printf(out, "<text class=\"title\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">"
			"report%s, in time order</text>\n", LEFT + pw / 2, height - 6,
			x->n > 1 ? "s" : "");
}

static void y_title(struct pgbt_buf *out, double height, const char *text)
{
	double mid = TOP + (height - TOP - BOTTOM) / 2;

	pgbt_buf_printf(out, "<text class=\"title\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
			"transform=\"rotate(-90 14 %.1f)\">", mid, mid);
	rp_html_escape(out, text);
	pgbt_buf_printf(out, "</text>\n");
}

void rp_svg_bands(struct pgbt_buf *out, const struct rp_svg_x *x, const struct rp_svg_band *bands,
		  int nbands, const char *what)
{
	double height = 320, ph = height - TOP - BOTTOM, pw = WIDTH - LEFT - RIGHT;
	double bw = pw / x->n, gap = bw > 6 ? bw * 0.15 : 0;
	char title[256], c[32];

	snprintf(title, sizeof(title), "share of %s", what);
	open_svg(out, height, title);
	for (int p = 0; p <= 100; p += 25) {
		double y = TOP + ph * (1 - p / 100.0);
		pgbt_buf_printf(out, "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n",
				LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, p);
	}
	for (int b = 0; b < nbands; b++) {
		const struct rp_svg_band *band = &bands[b];

		colour(b, band->rest, c, sizeof(c));
		pgbt_buf_printf(out, "<g class=\"band%s\" fill=\"%s\" data-name=\"", band->rest ? " rest" : "", c);
		rp_html_escape(out, band->name);
		if (!band->rest && rp_html_attr_name_ok(band->attr)) {
			pgbt_buf_printf(out, "\" data-%s=\"", band->attr);
			rp_html_escape(out, band->name);
		}
		pgbt_buf_printf(out, "\">\n");
		for (int i = 0; i < x->n; i++) {
			double total = 0, below = 0, share;
			char name[48], secs[32];

			for (int k = 0; k < nbands; k++) {
				total += bands[k].seconds[i];
				below += k < b ? bands[k].seconds[i] : 0;
			}
			if (total <= 0 || band->seconds[i] <= 0)
				continue;
			share = band->seconds[i] / total;
			report_name(x, i, name, sizeof(name));
			rp_human(band->seconds[i] * 1e9, UNIT_NS, secs, sizeof(secs));
			pgbt_buf_printf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
					"data-report=\"%d\" data-seconds=\"%.9g\" data-share=\"%.9g\">"
					"<title>%s: ", LEFT + i * bw + gap / 2,
					TOP + ph * (1 - (below + band->seconds[i]) / total), bw - gap,
					ph * share, x->number[i], band->seconds[i], share, name);
			rp_html_escape(out, band->name);
			pgbt_buf_printf(out, " %s, %.1f%%</title></rect>\n", secs, share * 100);
		}
		pgbt_buf_printf(out, "</g>\n");
	}
	x_axis(out, x, height);
	y_title(out, height, title);
	pgbt_buf_printf(out, "</svg>\n<ul class=\"legend\">\n");
	for (int b = nbands - 1; b >= 0; b--) {
		colour(b, bands[b].rest, c, sizeof(c));
		pgbt_buf_printf(out, "<li><span class=\"swatch\" style=\"background:%s\"></span>", c);
		rp_html_escape(out, bands[b].name);
		pgbt_buf_printf(out, "</li>\n");
	}
	pgbt_buf_printf(out, "</ul>\n");
}

/* Light to dark blue as t goes 0 to 1. */
static void heat_colour(double t, char *out, size_t len)
{
	static const double lo[3] = { 222, 235, 247 }, hi[3] = { 8, 48, 107 };
	int c[3];

	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(lo[i] + (hi[i] - lo[i]) * t);
	snprintf(out, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* The bound people read for bucket lo..hi: every value in it is below. */
static void bound_text(long long lo, long long hi, enum rp_unit u, char *out, size_t len)
{
	if (lo == RP_BELOW)
		snprintf(out, len, "< 0");
	else if (hi == LLONG_MAX)
		snprintf(out, len, "inf");
	else
		rp_human((double)hi + 1, u, out, len);
}

void rp_svg_heatmap(struct pgbt_buf *out, const struct rp_svg_x *x, const struct rp_svg_heat *h)
{
	double ch = h->nb > 16 ? 14 : 20, ph = ch * h->nb, height = TOP + ph + BOTTOM;
	double pw = WIDTH - LEFT - RIGHT, bw = pw / x->n, max = 0;
	char c[16], from[32], to[32];

	for (int i = 0; i < x->n * h->nb; i++)
		max = h->count[i] > max ? h->count[i] : max;
	open_svg(out, height, "counts by log2 bucket over the reports");
	pgbt_buf_printf(out, "<rect class=\"plot\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/>\n",
			LEFT, TOP, pw, ph);
	for (int b = 0; b < h->nb; b++) {
		bound_text(h->lo[b], h->hi[b], h->unit, to, sizeof(to));
		pgbt_buf_printf(out, "<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				LEFT - 6, TOP + ph - b * ch - ch / 2 + 4, to);
	}
	for (int i = 0; i < x->n; i++)
		for (int b = 0; b < h->nb; b++) {
			double n = h->count[i * h->nb + b], bound;
			char name[48];

			if (n <= 0)
				continue;
			heat_colour(log1p(n) / log1p(max), c, sizeof(c));
			report_name(x, i, name, sizeof(name));
			bound = h->lo[b] == RP_BELOW ? 0 : h->hi[b] == LLONG_MAX ? INFINITY :
				((double)h->hi[b] + 1) * rp_unit_scale(h->unit);
			if (h->lo[b] == RP_BELOW)
				snprintf(from, sizeof(from), "-inf");
			else
				rp_human((double)h->lo[b], h->unit, from, sizeof(from));
			bound_text(h->lo[b], h->hi[b], h->unit, to, sizeof(to));
			pgbt_buf_printf(out, "<rect class=\"cell\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
					"height=\"%.2f\" fill=\"%s\" data-report=\"%d\" data-bucket=\"%.9g\" "
					"data-lo=\"%lld\" data-hi=\"%lld\" data-count=\"%.0f\">"
					"<title>%s: %.0f in [%s, %s)</title></rect>\n",
					LEFT + i * bw, TOP + ph - (b + 1) * ch, bw, ch, c, x->number[i], bound,
					h->lo[b], h->hi[b], n, name, n, from, to);
		}
	x_axis(out, x, height);
	y_title(out, height, "log2 bucket upper bound");
	pgbt_buf_printf(out, "</svg>\n");
	heat_colour(log1p(1) / log1p(max > 1 ? max : 1), from, sizeof(from));
	heat_colour(1, to, sizeof(to));
	pgbt_buf_printf(out, "<p class=\"scale\">Colour: the count in the bucket in that report, "
			"on a log scale, from 1 <span class=\"swatch\" style=\"background:%s\"></span> "
			"to %.0f <span class=\"swatch\" style=\"background:%s\"></span>. Each row holds "
			"the values below its bound and at or above the bound of the row beneath "
			"(log2 buckets).</p>\n", from, max, to);
}
