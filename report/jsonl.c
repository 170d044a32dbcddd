/* One JSON object per report (report/jsonl.h), built and printed with
 * json-c. Times in seconds, sizes in bytes, whatever the script keeps. */
#include "jsonl.h"

#include "table.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static struct json_object *number(double v)
{
	char s[40];

	snprintf(s, sizeof(s), "%.9g", v);
	return json_object_new_double_s(v, s);
}

static const char *unit_name(enum rp_unit u)
{
	return rp_unit_is_time(u) ? "seconds" : u == UNIT_BYTES ? "bytes" : "";
}

/* A row's figures, scaled to seconds or bytes. */
static struct json_object *row_json(const struct rp_view *v, const struct rp_section *s,
				    const struct rp_row *r)
{
	const struct rp_table *t = v->t;
	struct json_object *o = json_object_new_object(), *keys = json_object_new_object();

	if (s->name)
		json_object_object_add(keys, t->keys[t->split], json_object_new_string(s->name));
	if (r->kind == ROW_KEYS)
		for (int k = 0, shown = 0; k < t->nkeys; k++)
			if (k != t->split)
				json_object_object_add(keys, t->keys[k],
						       json_object_new_string(r->key[shown++]));
	json_object_object_add(o, "keys", keys);
	if (r->kind == ROW_LABEL)
		json_object_object_add(o, "label", json_object_new_string(r->label));
	if (r->has_sum)
		json_object_object_add(o, "sum", number(r->sum * rp_unit_scale(v->sum_unit)));
	if (r->has_count)
		json_object_object_add(o, "count", number(r->count));
	if (r->has_samples)
		json_object_object_add(o, "samples", number(r->samples));
	if (r->has_avg)
		json_object_object_add(o, "avg", number(r->avg * rp_unit_scale(v->avg_unit)));
	if (r->hist.nb) {
		static const char *const names[] = { "p50", "p95", "p99" };
		static const double q[] = { 0.5, 0.95, 0.99 };
		for (int i = 0; i < 3; i++)
			json_object_object_add(o, names[i],
					       number(rp_hist_bound(&r->hist, q[i]) *
						      rp_unit_scale(v->hist_unit)));
	}
	if (r->has_max)
		json_object_object_add(o, "max", number(r->max * rp_unit_scale(v->max_unit)));
	if (r->text)
		json_object_object_add(o, "value", json_object_new_string(r->text));
	else if (r->has_value)
		json_object_object_add(o, "value", number(r->value * rp_unit_scale(v->value_unit)));
	if (r->share >= 0)
		json_object_object_add(o, "share", number(r->share));
	if (r->idle)
		json_object_object_add(o, "idle", json_object_new_boolean(1));
	return o;
}

static struct json_object *table_json(const struct rp_view *v)
{
	struct json_object *o = json_object_new_object(), *rows = json_object_new_array();
	struct json_object *units = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(v->t->name));
	json_object_object_add(o, "title", json_object_new_string(v->t->title));
	if (v->sum)
		json_object_object_add(units, "sum", json_object_new_string(unit_name(v->sum_unit)));
	if (v->avg)
		json_object_object_add(units, "avg", json_object_new_string(unit_name(v->avg_unit)));
	if (v->hist)
		json_object_object_add(units, "p50", json_object_new_string(unit_name(v->hist_unit)));
	if (v->max)
		json_object_object_add(units, "max", json_object_new_string(unit_name(v->max_unit)));
	json_object_object_add(o, "units", units);
	for (int i = 0; i < v->nsections; i++)
		for (int r = 0; r < v->sections[i].nrows; r++)
			if (v->sections[i].rows[r].kind != ROW_TOTAL)
				json_object_array_add(rows, row_json(v, &v->sections[i],
								     &v->sections[i].rows[r]));
	json_object_object_add(o, "rows", rows);
	return o;
}

int rp_jsonl_write(FILE *f, const struct rp_ident *id, const struct rp_spec *spec,
		   const struct rp_store *store, const struct rp_store *names_too, int report,
		   bool whole, const char *when, double seconds, struct pgbt_err *err)
{
	struct json_object *o = json_object_new_object(), *params = json_object_new_object();
	struct json_object *server = json_object_new_object(), *tables = json_object_new_array();
	const char *text;
	int rc = 0;

	json_object_object_add(o, "schema", json_object_new_string(RP_JSON_SCHEMA));
	json_object_object_add(o, "script", json_object_new_string(id->script));
	for (int i = 0; i < id->nparams; i++)
		json_object_object_add(params, id->params[i][0], json_object_new_string(id->params[i][1]));
	json_object_object_add(o, "params", params);
	json_object_object_add(server, "postmaster_pid", json_object_new_int64(id->postmaster));
	json_object_object_add(server, "port", json_object_new_int(id->port));
	json_object_object_add(server, "datadir", json_object_new_string(id->datadir));
	json_object_object_add(o, "server", server);
	json_object_object_add(o, "report", json_object_new_int(report));
	json_object_object_add(o, "scope", json_object_new_string(whole ? "trace" : "report"));
	if (!whole && when && when[0])
		json_object_object_add(o, "time", json_object_new_string(when));
	if (seconds >= 0.05)
		json_object_object_add(o, "seconds", number(seconds));
	for (int i = 0; i < spec->ntables; i++) {
		struct rp_view v;
		if (rp_view_build(spec, i, store, names_too, -1, &v) < 0) {
			json_object_put(o);
			json_object_put(tables);
			return pgbt_fail(err, "out of memory");
		}
		if (!rp_view_empty(&v))
			json_object_array_add(tables, table_json(&v));
		rp_view_free(&v);
	}
	json_object_object_add(o, "tables", tables);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text || fprintf(f, "%s\n", text) < 0 || fflush(f) == EOF)
		rc = pgbt_fail(err, "stdout: write failed: %s", strerror(errno));
	json_object_put(o);
	return rc;
}
