/* Columns and cells (report/cell.h). */
#include "cell.h"

#include <stdio.h>

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

int rp_view_columns(const struct rp_view *v, enum rp_column cols[RP_NCOLUMNS])
{
	int n = 0;

	if (v->sum)
		cols[n++] = RP_COL_SUM;
	if (v->share)
		cols[n++] = RP_COL_SHARE;
	if (v->count)
		cols[n++] = RP_COL_COUNT;
	if (v->samples)
		cols[n++] = RP_COL_SAMPLES;
	if (v->t->rate)
		cols[n++] = RP_COL_RATE;
	if (v->avg)
		cols[n++] = RP_COL_AVG;
	if (v->hist) {
		cols[n++] = RP_COL_P50;
		cols[n++] = RP_COL_P95;
		cols[n++] = RP_COL_P99;
	}
	if (v->max)
		cols[n++] = RP_COL_MAX;
	if (v->value)
		cols[n++] = RP_COL_VALUE;
	return n;
}

const char *rp_column_header(const struct rp_view *v, enum rp_column c)
{
	static const char *const names[RP_NCOLUMNS] = {
		"sum", "share", "count", "samples", "per s", "avg", "p50<", "p95<", "p99<", "max",
		"value",
	};

	if (c == RP_COL_SUM)
		return rp_unit_is_time(v->sum_unit) ? "time" : v->sum_unit == UNIT_BYTES ? "bytes" : "sum";
	return names[c];
}

const char *rp_column_key(enum rp_column c)
{
	static const char *const keys[RP_NCOLUMNS] = {
		"sum", "share", "count", "samples", "rate", "avg", "p50", "p95", "p99", "max",
		"value",
	};

	return keys[c];
}

static struct rp_cell figure(bool has, double value, enum rp_unit unit)
{
	return (struct rp_cell){ .has = has, .value = value, .unit = unit };
}

struct rp_cell rp_row_cell(const struct rp_view *v, const struct rp_row *r, enum rp_column c,
			   double seconds)
{
	static const double q[] = { 0.5, 0.95, 0.99 };
	struct rp_cell cell = {0};

	switch (c) {
	case RP_COL_SUM:
		return figure(r->has_sum, r->sum, v->sum_unit);
	case RP_COL_SHARE:
		cell = figure(r->share >= 0, r->share, UNIT_NONE);
		cell.show = RP_SHOW_PERCENT;
		return cell;
	case RP_COL_COUNT:
		/* a row of its own ("on CPU") has a time, not events */
		return figure(r->has_count && r->kind != ROW_LABEL, r->count, UNIT_NONE);
	case RP_COL_SAMPLES:
		return figure(r->has_samples, r->samples, UNIT_NONE);
	case RP_COL_RATE: {
		/* of the sum when there is one (bytes per second), else of the count */
		bool has = v->sum ? r->has_sum : r->has_count && r->kind != ROW_LABEL;
		cell = figure(seconds >= 0.05 && has, (v->sum ? r->sum : r->count) / seconds,
			      v->sum ? v->sum_unit : UNIT_NONE);
		cell.show = v->sum ? RP_SHOW_HUMAN : RP_SHOW_RATE;
		return cell;
	}
	case RP_COL_AVG:
		return figure(r->has_avg && r->kind != ROW_TOTAL, r->avg, v->avg_unit);
	case RP_COL_P50:
	case RP_COL_P95:
	case RP_COL_P99: {
		double b = rp_hist_bound(&r->hist, q[c - RP_COL_P50]);
		return figure(b >= 0, b, v->hist_unit);
	}
	case RP_COL_MAX:
		return figure(r->has_max, r->max, v->max_unit);
	case RP_COL_VALUE:
		cell = figure(r->has_value || r->text, r->value, v->value_unit);
		cell.text = r->text;
		return cell;
	case RP_NCOLUMNS:
		break;
	}
	return cell;
}

void rp_cell_text(const struct rp_cell *cell, char *out, size_t len)
{
	if (!cell->has)
		snprintf(out, len, "%s", "");
	else if (cell->text)
		snprintf(out, len, "%s", cell->text);
	else if (cell->show == RP_SHOW_PERCENT)
		snprintf(out, len, "%.1f%%", cell->value * 100);
	else if (cell->show == RP_SHOW_RATE)
		snprintf(out, len, cell->value >= 100 ? "%.0f" : "%.1f", cell->value);
	else
		rp_human(cell->value, cell->unit, out, len);
}

double rp_cell_raw(const struct rp_cell *cell)
{
	return cell->value * rp_unit_scale(cell->unit);
}
