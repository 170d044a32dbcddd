/* Tests of pgbt-gen report (report/): the "//@ report" lines of every
 * script; real bpftrace -f json output of waits from bpftrace 0.17, 0.23
 * and 0.27 (tests/unit/report/, captured with two sessions in
 * pg_sleep(0.2) on Debian's 15; and of waits mode=sample, its estimates
 * with their sample counts) read into the text report, JSON lines and
 * Prometheus text; keys with commas; percentiles from log2 buckets; bad
 * input refused in one line. Run from the top of the tree. */
#include "check.h"
#include "files.h"
#include "report_load.h"
#include "report/input.h"
#include "report/jsonl.h"
#include "report/cell.h"
#include "report/prom.h"
#include "report/reader.h"
#include "report/table.h"

#include <dirent.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct run {
	char *text, *json;
	size_t text_len, json_len;
	char prom[65536];
	char err[1024];
	int rc;
};

/* Feeds input (lines) to a reader with every output; the Prometheus text
 * is taken before the reader is freed (which removes its file). */
static void run_reader(const char *input, const char *textfile_dir, struct run *ret)
{
	FILE *text, *json;
	struct rp_options opt = { .load_spec = load_spec, .input = "test", .clock = fixed_clock,
				  .textfile_dir = textfile_dir };
	struct rp_reader r;
	struct pgbt_err err = { .msg = "" };

	memset(ret, 0, sizeof(*ret));
	text = open_memstream(&ret->text, &ret->text_len);
	json = open_memstream(&ret->json, &ret->json_len);
	opt.text = text;
	opt.json = json;
	rp_reader_init(&r, &opt);
	ret->rc = feed_reader(&r, input, &err);
	if (r.prom_path[0]) {
		char *s = slurp(r.prom_path, NULL);
		snprintf(ret->prom, sizeof(ret->prom), "%s", s ? s : "");
		free(s);
	}
	snprintf(ret->err, sizeof(ret->err), "%s", err.msg);
	rp_reader_free(&r);
	fclose(text);
	fclose(json);
}

static void free_run(struct run *r)
{
	free(r->text);
	free(r->json);
}

/* The row of table `table` in the first JSON line with keys k1=v1 (and
 * k2=v2, if given): its field `field`, or -1. */
static double json_field(const char *json, const char *table, const char *k1, const char *v1,
			 const char *field)
{
	struct json_object *o = json_tokener_parse(json), *tables, *t, *rows;
	double ret = -1;

	if (!o || !json_object_object_get_ex(o, "tables", &tables))
		goto out;
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		struct json_object *name;
		t = json_object_array_get_idx(tables, i);
		if (!json_object_object_get_ex(t, "name", &name) ||
		    strcmp(json_object_get_string(name), table) != 0 ||
		    !json_object_object_get_ex(t, "rows", &rows))
			continue;
		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			struct json_object *row = json_object_array_get_idx(rows, k), *keys, *v, *f;
			if (!json_object_object_get_ex(row, "keys", &keys) ||
			    !json_object_object_get_ex(keys, k1, &v) ||
			    strcmp(json_object_get_string(v), v1) != 0)
				continue;
			if (json_object_object_get_ex(row, "keys", &keys) &&
			    json_object_object_get_ex(keys, "kind", &v) &&
			    strcmp(json_object_get_string(v), "client backend") != 0)
				continue;
			if (json_object_object_get_ex(row, field, &f))
				ret = json_object_get_double(f);
			goto out;
		}
	}
out:
	if (o)
		json_object_put(o);
	return ret;
}

/* Field `field` of the row labelled `label` (or, with label NULL, keyed
 * k1=v1) of table `table`, client backends' where rows have kinds, in the
 * JSON line `line` (the first of a string); -1 when absent. */
static double json_row(const char *line, const char *table, const char *k1, const char *v1,
		       const char *label, const char *field)
{
	struct json_object *o = json_tokener_parse(line), *tables, *rows;
	double ret = -1;

	if (!o || !json_object_object_get_ex(o, "tables", &tables))
		goto out;
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		struct json_object *t = json_object_array_get_idx(tables, i), *name;
		if (!json_object_object_get_ex(t, "name", &name) ||
		    strcmp(json_object_get_string(name), table) != 0 ||
		    !json_object_object_get_ex(t, "rows", &rows))
			continue;
		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			struct json_object *row = json_object_array_get_idx(rows, k), *keys, *v, *f;
			json_object_object_get_ex(row, "keys", &keys);
			if (label ? !json_object_object_get_ex(row, "label", &v) ||
				    strcmp(json_object_get_string(v), label) != 0 :
				    !keys || !json_object_object_get_ex(keys, k1, &v) ||
				    strcmp(json_object_get_string(v), v1) != 0)
				continue;
			if (keys && json_object_object_get_ex(keys, "kind", &v) &&
			    strcmp(json_object_get_string(v), "client backend") != 0)
				continue;
			if (json_object_object_get_ex(row, field, &f))
				ret = json_object_get_double(f);
			goto out;
		}
	}
out:
	if (o)
		json_object_put(o);
	return ret;
}

/* The last line of JSON lines s (the whole trace's report). */
static const char *last_line(const char *s)
{
	const char *end = s + strlen(s), *p;

	while (end > s && end[-1] == '\n')
		end--;
	for (p = end; p > s && p[-1] != '\n'; p--)
		;
	return p;
}

static void test_every_spec(void)
{
	DIR *d = opendir("scripts");
	struct dirent *de;
	int with_report = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char name[64];
		struct pgbt_template tpl;
		struct pgbt_err err = { .msg = "" };
		struct rp_spec spec;

		if (l < 4 || strcmp(de->d_name + l - 3, ".bt") != 0 || l - 3 >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 3), de->d_name);
		CHECK(load_template(name, &tpl, &err) == 0);
		if (tpl.nreport) {
			int rc = rp_spec_read(&tpl, &spec, &err);
			CHECK(rc == 0);
			if (rc)
				fprintf(stderr, "     %s\n", err.msg);
			with_report++;
		}
		pgbt_template_free(&tpl);
	}
	if (d)
		closedir(d);
	CHECK(with_report >= 1);
}

static void test_bad_specs(void)
{
	static const char *const bad[] = {
		"table t title=\"x\"",                                  /* no map */
		"table t keys=a,a title=\"x\"\nmap @m t sum",            /* a key twice */
		"table t keys=a split=b title=\"x\"\nmap @m t sum",      /* split not a key */
		"table t keys=a\nmap @m t sum",                          /* no title */
		"map @m t sum",                                          /* no table */
		"table t keys=a title=\"x\"\nmap @m t median",           /* a role */
		"table t keys=a title=\"x\"\nmap @m t count:us",         /* count with a unit */
		"table t keys=a title=\"x\"\nmap @m t sum metric=a-b",   /* a metric name */
		"table t keys=a title=\"x\"\nmap @m t hist row=x",       /* a hist row */
		"table t keys=a title=\"x",                              /* a quote */
		"frobnicate",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024], *q;
		struct pgbt_template tpl;
		struct pgbt_err err = { .msg = "" };
		struct rp_spec spec;
		int n = snprintf(text, sizeof(text), "/*\n * t\tA test.\n */\n//@ report ");

		for (const char *c = bad[i]; *c && n < (int)sizeof(text) - 16; c++) {
			if (*c == '\n')
				n += snprintf(text + n, sizeof(text) - (size_t)n, "\n//@ report ");
			else
				text[n++] = *c;
		}
		text[n] = '\0';
		CHECK(pgbt_template_parse("t", "test", text, strlen(text), &tpl, &err) == 0);
		CHECK(rp_spec_read(&tpl, &spec, &err) < 0);
		q = strstr(err.msg, "bad report line");
		CHECK(q || strstr(err.msg, "has no map"));
		pgbt_template_free(&tpl);
	}
}

/* The captures: every bpftrace's JSON gives the same figures. */
static void test_waits_captures(void)
{
	static const char *const files[] = {
		"tests/unit/report/waits-bt0.17.json", "tests/unit/report/waits-bt0.23.json",
		"tests/unit/report/waits-bt0.27.json",
	};
	char dir[] = "/tmp/pgbt-report-test.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *in = slurp(files[i], NULL);
		struct run r;
		double s, n, p50;

		CHECK(in != NULL);
		if (!in)
			continue;
		run_reader(in, dir, &r);
		CHECK(r.rc == 0);
		if (r.rc)
			fprintf(stderr, "     %s: %s\n", files[i], r.err);
		/* two sessions, each 200 ms in pg_sleep */
		CHECK(r.text && strstr(r.text, "client backend:"));
		CHECK(r.text && strstr(r.text, "Timeout:PgSleep"));
		CHECK(r.text && strstr(r.text, "Client:ClientRead (idle)"));
		CHECK(r.text && strstr(r.text, "on CPU"));
		s = json_field(r.json, "waits", "event", "Timeout:PgSleep", "sum");
		n = json_field(r.json, "waits", "event", "Timeout:PgSleep", "count");
		p50 = json_field(r.json, "waits", "event", "Timeout:PgSleep", "p50");
		CHECK(s > 0.40 && s < 0.41);
		CHECK(n == 2);
		CHECK(p50 > 0.262 && p50 < 0.263);   /* 2^18 us: [131072, 262143] */
		CHECK(strstr(r.json, "\"schema\":\"pgbt-report/1\"") != NULL);
		CHECK(strstr(r.json, "\"datadir\":\"/tmp/rep-pg/data\"") != NULL);
		CHECK(strstr(r.prom, "# TYPE pgbt_wait_seconds_total counter") != NULL);
		CHECK(strstr(r.prom, "pgbt_wait_seconds_total{kind=\"client backend\","
			     "event=\"Timeout:PgSleep\",datadir=\"/tmp/rep-pg/data\",port=\"5488\"} 0.40") != NULL);
		CHECK(strstr(r.prom, "pgbt_wait_duration_seconds_bucket{kind=\"client backend\","
			     "event=\"Timeout:PgSleep\",datadir=\"/tmp/rep-pg/data\",port=\"5488\","
			     "le=\"0.262144\"} 2") != NULL);
		CHECK(strstr(r.prom, "pgbt_waits_total{kind=\"client backend\",event=\"Timeout:PgSleep\"") != NULL);
		if (r.rc == 0 && (!strstr(r.prom, "pgbt_wait_seconds_total") || s < 0))
			fprintf(stderr, "     %s:\n%s\n%s\n%s\n", files[i], r.text, r.json, r.prom);
		free_run(&r);
		free(in);
	}
	rmdir(dir);
}

/* waits mode=sample's captures (bpftrace -f json of waits mode=sample
 * interval=1 on Debian's 15, while one session slept in pg_sleep(1) and
 * another burnt a CPU for 1.6 s, so that every tick then landed in the
 * cluster; 0.17, 0.23, 0.27): every bpftrace's JSON gives the same
 * estimates, with their sample counts and no counts, averages or
 * percentiles (samples are not waits). */
static void test_sample_captures(void)
{
	static const char *const files[] = {
		"tests/unit/report/waits-sample-bt0.17.json", "tests/unit/report/waits-sample-bt0.23.json",
		"tests/unit/report/waits-sample-bt0.27.json",
	};
	char dir[] = "/tmp/pgbt-report-test.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *in = slurp(files[i], NULL), want[256];
		const char *trace;
		struct run r;

		CHECK(in != NULL);
		if (!in)
			continue;
		run_reader(in, dir, &r);
		CHECK(r.rc == 0);
		if (r.rc)
			fprintf(stderr, "     %s: %s\n", files[i], r.err);
		CHECK(r.text && strstr(r.text, "Time by wait event (" RP_SAMPLES_NOTE "):"));
		CHECK(r.text && strstr(r.text, "  event                              time   share   samples\n"));
		CHECK(r.text && !strstr(r.text, "p50<"));
		trace = r.json ? last_line(r.json) : "";
		CHECK(strstr(trace, "\"scope\":\"trace\"") != NULL);
		/* 20 samples of 50 ms in pg_sleep, 32 on CPU */
		CHECK(json_row(trace, "waits", "event", "Timeout:PgSleep", NULL, "sum") == 1.0);
		CHECK(json_row(trace, "waits", "event", "Timeout:PgSleep", NULL, "samples") == 20);
		CHECK(json_row(trace, "waits", "event", "Timeout:PgSleep", NULL, "count") == -1);
		CHECK(json_row(trace, "waits", "event", "Timeout:PgSleep", NULL, "p50") == -1);
		CHECK(json_row(trace, "waits", NULL, NULL, "on CPU", "sum") == 1.6);
		CHECK(json_row(trace, "waits", NULL, NULL, "on CPU", "samples") == 32);
		CHECK(json_row(trace, "sampler", "ticks", "sampled", NULL, "sum") == 32);
		CHECK(json_row(trace, "sampler", "ticks", "missed", NULL, "sum") > 0);
		snprintf(want, sizeof(want), "pgbt_wait_samples_total{kind=\"client backend\","
			 "event=\"Timeout:PgSleep\",datadir=\"");
		CHECK(strstr(r.prom, want) != NULL);
		CHECK(strstr(r.prom, "# TYPE pgbt_cpu_samples_total counter") != NULL);
		CHECK(strstr(r.prom, "pgbt_wait_duration_seconds") == NULL);
		if (r.rc == 0 && json_row(trace, "waits", "event", "Timeout:PgSleep", NULL, "samples") != 20)
			fprintf(stderr, "     %s:\n%s\n%s\n%s\n", files[i], r.text, trace, r.prom);
		free_run(&r);
		free(in);
	}
	rmdir(dir);
}

#define ID "{\"type\": \"printf\", \"data\": \"pgbt waits interval=0 per_backend=on mode=auto: " \
	   "postmaster 7, port 5432, data directory /d\\n\"}\n"

static void expect_error(const char *what, const char *input, const char *want)
{
	char dir[] = "/tmp/pgbt-report-test.XXXXXX";
	struct run r;
	DIR *d;
	struct dirent *de;
	int files = 0;

	CHECK(mkdtemp(dir) != NULL);
	run_reader(input, dir, &r);
	CHECK(r.rc < 0);
	CHECK(strstr(r.err, want) != NULL);
	CHECK(!strchr(r.err, '\n'));
	if (r.rc == 0 || !strstr(r.err, want))
		fprintf(stderr, "     %s: got \"%s\", want \"%s\"\n", what, r.err, want);
	/* nothing left in the textfile directory */
	d = opendir(dir);
	while (d && (de = readdir(d)))
		files += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
	if (d)
		closedir(d);
	CHECK(files == 0);
	rmdir(dir);
	free_run(&r);
}

static void test_bad_input(void)
{
	expect_error("text output", "Attaching 7 probes...\n", "not JSON");
	expect_error("truncated", ID "{\"type\": \"map\", \"data\": {\"@wait_us\": {\"1,IO:X\": 1", "cut short");
	expect_error("no id", "{\"type\": \"map\", \"data\": {\"@xids_by_pid\": {\"12\": 3}}}\n",
		     "before the script's first line");
	expect_error("another script's map", ID "{\"type\": \"map\", \"data\": {\"@xids_by_pid\": {\"12\": 3}}}\n",
		     "is not one of waits's");
	expect_error("unknown type", ID "{\"type\": \"frobnicate\", \"data\": 1}\n",
		     "unknown bpftrace message type 'frobnicate'");
	expect_error("binary", "\x7f" "ELF\x02\x01\x01\x00\x00\x00\n", "not JSON");
	expect_error("NUL", ID "{\"type\"\0: 1}\n", "not JSON");
	expect_error("a hist as a number", ID "{\"type\": \"map\", \"data\": {\"@wait_hist_us\": {\"1,IO:X\": 1}}}\n",
		     "a map message for a histogram");
	expect_error("too few keys", ID "{\"type\": \"map\", \"data\": {\"@wait_us\": {\"IOX\": 1}}}\n",
		     "fewer than the 2 fields");
	expect_error("not a number", ID "{\"type\": \"map\", \"data\": {\"@wait_us\": {\"1,IO:X\": [1]}}}\n",
		     "not a number");
	expect_error("empty", "", "no report");
	expect_error("unknown script", "{\"type\": \"printf\", \"data\": \"pgbt nosuch: postmaster 7, "
		     "port 5432, data directory /d\\n\"}\n", "no script nosuch");
	expect_error("no report lines", "{\"type\": \"printf\", \"data\": \"pgbt xid-events: postmaster 7, "
		     "port 5432, data directory /d\\n\"}\n", "no report");
}

static void test_keys_and_buckets(void)
{
	struct rp_spec spec = { .script = "t", .ntables = 1, .nmaps = 1 };
	struct rp_msg m;
	struct pgbt_err err = { .msg = "" };
	struct rp_store store = {0};
	const struct rp_mapdata *md;
	static const char line[] = "{\"type\": \"map\", \"data\": {\"@m\": "
		"{\"12,select a, b from t,IO:X\": 5, \"13,,IO:Y\": 6}}}";

	spec.tables[0] = (struct rp_table){ .name = "t", .title = "T", .nkeys = 3, .split = -1,
					    .text = 1, .top = 10 };
	strcpy(spec.tables[0].keys[0], "pid");
	strcpy(spec.tables[0].keys[1], "query");
	strcpy(spec.tables[0].keys[2], "event");
	spec.maps[0] = (struct rp_map){ .name = "@m", .table = 0, .role = ROLE_SUM };
	CHECK(rp_msg_parse(line, strlen(line), &m, &err) == 0);
	CHECK(rp_msg_to_store(&m, &spec, &store, &err) == 0);
	md = rp_store_map(&store, "@m");
	CHECK(md && md->n == 2);
	if (md && md->n == 2) {
		CHECK_STR(md->e[0].key[0], "12");
		CHECK_STR(md->e[0].key[1], "select a, b from t");
		CHECK_STR(md->e[0].key[2], "IO:X");
		CHECK_STR(md->e[1].key[1], "");
		CHECK(md->e[0].v == 5);
	}
	rp_msg_free(&m);
	rp_store_free(&store);

	/* percentiles: the upper bound of the bucket that holds them */
	{
		struct rp_entry e = {0};
		rp_entry_add_bucket(&e, 1024, 2047, 90);
		rp_entry_add_bucket(&e, 4096, 8191, 9);
		rp_entry_add_bucket(&e, 65536, 131071, 1);
		CHECK(rp_hist_bound(&e, 0.5) == 2048);
		CHECK(rp_hist_bound(&e, 0.95) == 8192);
		CHECK(rp_hist_bound(&e, 0.99) == 8192);
		CHECK(rp_hist_bound(&e, 1.0) == 131072);
		free(e.b);
	}
	/* 0.27: a count too large for a double comes as a string */
	{
		static const char big[] = "{\"type\": \"map\", \"data\": {\"@m\": "
			"{\"1,q,IO:X\": \"18446744073709551615\"}}}";
		CHECK(rp_msg_parse(big, strlen(big), &m, &err) == 0);
		CHECK(rp_msg_to_store(&m, &spec, &store, &err) == 0);
		md = rp_store_map(&store, "@m");
		CHECK(md && md->n == 1 && md->e[0].v > 1.8e19);
		rp_msg_free(&m);
		rp_store_free(&store);
	}
}

static void test_ident(void)
{
	struct rp_ident id;

	CHECK(rp_ident_parse("pgbt waits interval=2 mode=auto: postmaster 42, port 5433, "
			     "data directory /var/lib/postgresql/15/main\n", &id));
	CHECK_STR(id.script, "waits");
	CHECK(id.nparams == 2);
	CHECK_STR(rp_ident_param(&id, "interval"), "2");
	CHECK(id.postmaster == 42 && id.port == 5433);
	CHECK_STR(id.datadir, "/var/lib/postgresql/15/main");
	CHECK(rp_ident_parse("pgbt xid-rate: postmaster 1, port 1, data directory /x y", &id));
	CHECK_STR(id.datadir, "/x y");
	CHECK(!rp_ident_parse("Tracing wait events of postmaster PID 3", &id));
	CHECK(!rp_ident_parse("pgbt waits: postmaster x, port 1, data directory /d", &id));
	CHECK(!rp_ident_parse("pgbt waits: postmaster 1, port 99999, data directory /d", &id));
	CHECK(!rp_ident_parse("pgbt waits: postmaster 1, port 1, data directory ", &id));
}

int main(void)
{
	test_every_spec();
	test_bad_specs();
	test_ident();
	test_keys_and_buckets();
	test_waits_captures();
	test_sample_captures();
	test_bad_input();
	return check_done();
}
