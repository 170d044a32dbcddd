/* Tests of pgbt-gen report --html (report/html.c, svg.c, history.c): the
 * captures of tests/unit/report/ (waits from bpftrace 0.17, 0.23, 0.27;
 * query-latency from 0.23; a synthetic waits with three intervals and an
 * event and data directory holding < & " ' >, and one of twelve like a
 * pgbench run, the page docs/report.md shows) read into the page and the
 * JSON lines at once, and the page checked against the JSON: one band per
 * wait event of the client backends, the same numbers in the tables and
 * the charts, heatmap counts adding up to the histograms'. Also: escaping,
 * the page replaced whole (no temporary file left, an old page untouched
 * by bad input), and the reports kept for the charts bounded. Run from
 * the top of the tree. */
#include "check.h"
#include "report_load.h"
#include "report/escape.h"
#include "report/history.h"
#include "report/input.h"
#include "report/reader.h"

#include <dirent.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAITS_SYNTHETIC "tests/unit/report/waits-intervals-synthetic.json"
#define QUERY_LATENCY "tests/unit/report/query-latency-bt0.23.json"

struct run {
	char *json;            /* the JSON lines */
	size_t json_len;
	char *page;            /* the page at the end, or NULL */
	int rc;
	char err[1024];
};

/* Feeds input (lines) to a reader writing JSON lines and the page at
 * html_path. */
static void run_reader_top(const char *input, const char *html_path, int top, struct run *ret)
{
	struct rp_options opt = { .load_spec = load_spec, .input = "test", .clock = fixed_clock,
				  .html_path = html_path, .top = top };
	struct pgbt_err err = { .msg = "" };
	struct rp_reader r;
	FILE *json;

	memset(ret, 0, sizeof(*ret));
	json = open_memstream(&ret->json, &ret->json_len);
	opt.json = json;
	rp_reader_init(&r, &opt);
	ret->rc = feed_reader(&r, input, &err);
	rp_reader_free(&r);
	fclose(json);
	snprintf(ret->err, sizeof(ret->err), "%s", err.msg);
	ret->page = slurp(html_path, NULL);
}

static void run_reader(const char *input, const char *html_path, struct run *ret)
{
	run_reader_top(input, html_path, 0, ret);
}

static void free_run(struct run *r)
{
	free(r->json);
	free(r->page);
}

/* ---- reading the page ------------------------------------------------------ */

static char *escaped(const char *s)
{
	struct pgbt_buf b = {0};

	rp_html_escape(&b, s);
	pgbt_buf_add(&b, "", 1);
	return b.s;
}

/* The text of the element starting at the first `open` in page (up to
 * its `close`), on the heap; NULL when there is none. */
static char *element(const char *page, const char *open, const char *close)
{
	const char *a = page ? strstr(page, open) : NULL, *b = a ? strstr(a, close) : NULL;

	return b ? strndup(a, (size_t)(b - a) + strlen(close)) : NULL;
}

/* The value of attribute name in the tag that starts at tag, or "". */
static const char *attr(const char *tag, const char *name, char *out, size_t len)
{
	const char *end = strchr(tag, '>'), *p = tag;
	size_t n = strlen(name);

	out[0] = '\0';
	while ((p = strstr(p, name)) && (!end || p < end)) {
		if (p[-1] == ' ' && p[n] == '=' && p[n + 1] == '"') {
			const char *v = p + n + 2, *q = strchr(v, '"');
			snprintf(out, len, "%.*s", q ? (int)(q - v) : 0, v);
			break;
		}
		p += n;
	}
	return out;
}

static int count_of(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* ---- reading the JSON lines -------------------------------------------------- */

/* The JSON lines as objects, and how many. */
static int json_lines(const char *text, struct json_object **out, int max)
{
	int n = 0;

	for (const char *p = text; p && *p && n < max;) {
		size_t l = strcspn(p, "\n");
		char *line = strndup(p, l);
		out[n] = json_tokener_parse(line);
		n += out[n] != NULL;
		free(line);
		p += l + (p[l] == '\n');
	}
	return n;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* Table `name` of a JSON line, or NULL. */
static struct json_object *table_of(struct json_object *line, const char *name)
{
	struct json_object *tables;

	if (!json_object_object_get_ex(line, "tables", &tables))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(tables); i++) {
		struct json_object *t = json_object_array_get_idx(tables, i);
		if (str_of(t, "name") && strcmp(str_of(t, "name"), name) == 0)
			return t;
	}
	return NULL;
}

static struct json_object *rows_of(struct json_object *table)
{
	struct json_object *rows;

	return table && json_object_object_get_ex(table, "rows", &rows) ? rows : NULL;
}

/* A row's key `key`, or its label. */
static const char *row_key(struct json_object *row, const char *key)
{
	struct json_object *keys;

	if (json_object_object_get_ex(row, "keys", &keys) && str_of(keys, key))
		return str_of(keys, key);
	return str_of(row, "label");
}

static bool row_idle(struct json_object *row)
{
	struct json_object *v;

	return json_object_object_get_ex(row, "idle", &v) && json_object_get_boolean(v);
}

/* ---- the checks --------------------------------------------------------------- */

/* The client backends' chart: a band for each event (and "on CPU") the
 * JSON lines of the reports have outside idle, and no other; each band's
 * share in each report that of the JSON line of that report. */
static void check_bands(const char *file, const struct run *r, struct json_object **lines, int n)
{
	char *chart = element(r->page, "<figure class=\"chart bands\" data-table=\"waits\" "
			      "data-section=\"client backend\">", "</figure>");
	int want = 0, bands = count_of(chart, "<g class=\"band\"");

	CHECK(chart != NULL);
	if (!chart)
		return;
	for (int i = 0; i < n; i++) {
		struct json_object *rows = rows_of(table_of(lines[i], "waits"));
		const char *scope = str_of(lines[i], "scope");

		if (!scope || strcmp(scope, "report") != 0)
			continue;
		for (size_t k = 0; rows && k < json_object_array_length(rows); k++) {
			struct json_object *row = json_object_array_get_idx(rows, k), *share, *num;
			const char *kind = row_key(row, "kind"), *event = row_key(row, "event");
			char *esc, tag[4096], got[64], report[16];
			const char *band, *rect;
			bool first = true;

			if (!kind || strcmp(kind, "client backend") != 0 || !event || row_idle(row))
				continue;
			esc = escaped(event);
			snprintf(tag, sizeof(tag), "data-event=\"%s\">", esc);
			band = strstr(chart, tag);
			CHECK(band != NULL);
			if (!band)
				fprintf(stderr, "     %s: no band for %s\n", file, event);
			/* counted once, at its first report */
			for (int j = 0; j < i && first; j++) {
				struct json_object *prev = rows_of(table_of(lines[j], "waits"));
				for (size_t m = 0; prev && m < json_object_array_length(prev); m++) {
					struct json_object *pr = json_object_array_get_idx(prev, m);
					const char *pk = row_key(pr, "kind"), *pe = row_key(pr, "event");
					if (pk && pe && !row_idle(pr) && strcmp(pk, kind) == 0 &&
					    strcmp(pe, event) == 0)
						first = false;
				}
			}
			want += first;
			/* its share in this report */
			json_object_object_get_ex(lines[i], "report", &num);
			snprintf(report, sizeof(report), "data-report=\"%d\"", json_object_get_int(num));
			rect = band ? strstr(band, report) : NULL;
			CHECK(rect && rect < strstr(band, "</g>"));
			if (rect && json_object_object_get_ex(row, "share", &share)) {
				const char *tag = rect;
				while (tag > band && *tag != '<')
					tag--;
				double s = strtod(attr(tag, "data-share", got, sizeof(got)), NULL);
				CHECK(s > json_object_get_double(share) - 1e-6 &&
				      s < json_object_get_double(share) + 1e-6);
			}
			free(esc);
		}
	}
	CHECK(want > 0);
	CHECK(bands == want);
	if (bands != want)
		fprintf(stderr, "     %s: %d bands, %d events in the JSON lines\n", file, bands, want);
	free(chart);
}

/* The whole trace's table `table`: each row of the last JSON line, in the
 * section `section` (or all), has the JSON's numbers in its data-value. */
static void check_table(const char *file, const struct run *r, struct json_object *last,
			const char *table, const char *split, const char *key)
{
	static const char *const fields[] = { "sum", "count", "avg", "p50", "p95", "p99", "max", "share" };
	struct json_object *rows = rows_of(table_of(last, table));
	char open[128], *html;
	int compared = 0;

	snprintf(open, sizeof(open), "<table class=\"report\" data-table=\"%s\">", table);
	html = element(r->page, open, "</table>");
	CHECK(html != NULL && rows != NULL);
	for (size_t k = 0; html && rows && k < json_object_array_length(rows); k++) {
		struct json_object *row = json_object_array_get_idx(rows, k);
		const char *name = row_key(row, key), *sec = split ? row_key(row, split) : NULL;
		char tag[4096], *esc, *body = NULL, *tr;
		const char *in = html;

		if (!name)
			name = "";
		if (sec) {
			char *e = escaped(sec);
			snprintf(tag, sizeof(tag), "<tbody data-section=\"%s\">", e);
			free(e);
			in = body = element(html, tag, "</tbody>");
		}
		esc = escaped(name);
		if (str_of(row, "label"))
			snprintf(tag, sizeof(tag), " data-label=\"%s\"", esc);
		else if (key[0])
			snprintf(tag, sizeof(tag), " data-%s=\"%s\"", key, esc);
		else
			snprintf(tag, sizeof(tag), "<tr class=\"keys\">");
		tr = in ? element(in, tag, "</tr>") : NULL;
		CHECK(tr != NULL);
		if (!tr)
			fprintf(stderr, "     %s: %s: no row %s\n", file, table, name);
		for (size_t f = 0; tr && f < sizeof(fields) / sizeof(fields[0]); f++) {
			struct json_object *v;
			char cell[64], got[64];
			const char *c;

			snprintf(cell, sizeof(cell), "data-column=\"%s\"", fields[f]);
			c = strstr(tr, cell);
			if (!json_object_object_get_ex(row, fields[f], &v)) {
				/* a figure the JSON has not, the page has not either */
				CHECK(!c || !strcmp(fields[f], "count") || !strcmp(fields[f], "avg"));
				continue;
			}
			CHECK(c != NULL);
			if (!c)
				continue;
			CHECK(strtod(attr(c - 1, "data-value", got, sizeof(got)), NULL) ==
			      json_object_get_double(v));
			if (strtod(got, NULL) != json_object_get_double(v))
				fprintf(stderr, "     %s: %s %s %s: page %s, JSON %.9g\n", file, table, name,
					fields[f], got, json_object_get_double(v));
			compared++;
		}
		free(tr);
		free(body);
		free(esc);
	}
	CHECK(compared > 0);
	free(html);
}

/* The page is whole: its elements closed, nothing left of a script. */
static void check_whole(const char *page)
{
	CHECK(page && strncmp(page, "<!DOCTYPE html>", 15) == 0);
	CHECK(page && strstr(page, "</html>\n") == page + strlen(page) - 8);
	CHECK(count_of(page, "<figure") == count_of(page, "</figure>"));
	CHECK(count_of(page, "<svg") == count_of(page, "</svg>"));
	CHECK(count_of(page, "<g ") == count_of(page, "</g>"));
	CHECK(count_of(page, "<table") == count_of(page, "</table>"));
	CHECK(count_of(page, "<tr") == count_of(page, "</tr>"));
	CHECK(!strstr(page ? page : "", "<script") && !strstr(page ? page : "", "http:") &&
	      !strstr(page ? page : "", "https:"));
}

/* Nothing in dir but the page (no temporary file left). */
static void check_alone(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int others = 0;

	while (d && (de = readdir(d)))
		others += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			  strcmp(de->d_name, "page.html");
	if (d)
		closedir(d);
	CHECK(others == 0);
}

static void test_waits(const char *dir)
{
	static const char *const files[] = {
		"tests/unit/report/waits-bt0.17.json", "tests/unit/report/waits-bt0.23.json",
		"tests/unit/report/waits-bt0.27.json", WAITS_SYNTHETIC,
		"tests/unit/report/waits-pgbench-synthetic.json",
	};
	char path[256];

	snprintf(path, sizeof(path), "%s/page.html", dir);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *in = slurp(files[i], NULL);
		struct json_object *lines[32];
		struct run r;
		int n;

		CHECK(in != NULL);
		if (!in)
			continue;
		unlink(path);
		run_reader(in, path, &r);
		CHECK(r.rc == 0 && r.page != NULL);
		if (r.rc)
			fprintf(stderr, "     %s: %s\n", files[i], r.err);
		n = json_lines(r.json, lines, 32);
		CHECK(n >= 1);
		if (r.page && n >= 1) {
			check_whole(r.page);
			check_bands(files[i], &r, lines, n);
			check_table(files[i], &r, lines[n - 1], "waits", "kind", "event");
			CHECK(strstr(r.page, "<dd id=\"reports\" data-reports=\"") != NULL);
			CHECK(strstr(r.page, "The trace ended") != NULL);
			CHECK(!strstr(r.page, "http-equiv=\"refresh\""));
		}
		check_alone(dir);
		for (int k = 0; k < n; k++)
			json_object_put(lines[k]);
		free_run(&r);
		free(in);
	}
}

/* What the server and the script give reaches the page escaped. */
static void test_escaping(const char *dir)
{
	char path[256], *in = slurp(WAITS_SYNTHETIC, NULL), *p;
	struct run r;

	snprintf(path, sizeof(path), "%s/page.html", dir);
	CHECK(in != NULL);
	if (!in)
		return;
	run_reader(in, path, &r);
	CHECK(r.rc == 0 && r.page);
	p = r.page ? r.page : "";
	CHECK(!strstr(p, "x<&\"y>'z") && !strstr(p, "x<&"));
	CHECK(!strstr(p, "/tmp/pg <&"));
	CHECK(strstr(p, "data-event=\"Extension:x&lt;&amp;&quot;y&gt;&#39;z\"") != NULL);
	CHECK(strstr(p, "<td class=\"key\">Extension:x&lt;&amp;&quot;y&gt;&#39;z</td>") != NULL);
	CHECK(strstr(p, "data directory /tmp/pg &lt;&amp;&quot;data&gt;&#39;</dd>") != NULL);
	CHECK(strstr(p, "<title>pgbt waits: port 5499, /tmp/pg &lt;&amp;&quot;data&gt;&#39;</title>") != NULL);
	/* three reports, by the script's times */
	CHECK(strstr(p, "data-reports=\"3\">3</dd>") != NULL);
	CHECK(strstr(p, "10:00:01 to 10:00:03") != NULL);
	CHECK(count_of(p, "<rect x=") > 3);
	free_run(&r);
	free(in);

	/* the escaping itself: references, and U+FFFD for what is not text */
	{
		struct pgbt_buf b = {0};
		rp_html_escape(&b, "a<b>&\"'\t\n\x01\xff\xc3\xa9\xe2\x82\xac\xed\xa0\x80\xc0\xaf");
		pgbt_buf_add(&b, "", 1);
		CHECK_STR(b.s, "a&lt;b&gt;&amp;&quot;&#39;\t\n\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9\xe2\x82\xac"
			  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
		pgbt_buf_free(&b);
		CHECK(rp_html_attr_name_ok("event") && rp_html_attr_name_ok("p-1"));
		CHECK(!rp_html_attr_name_ok("a\"b") && !rp_html_attr_name_ok("") &&
		      !rp_html_attr_name_ok("A"));
	}
}

/* query-latency: a heatmap per table, its cells' counts those of the
 * histograms, report by report, and the table's numbers the JSON's. */
static void test_heatmap(const char *dir)
{
	char path[256], *in = slurp(QUERY_LATENCY, NULL), *map;
	struct json_object *lines[16];
	struct run r;
	int n, reports = 0;
	double all = 0;

	snprintf(path, sizeof(path), "%s/page.html", dir);
	CHECK(in != NULL);
	if (!in)
		return;
	run_reader(in, path, &r);
	CHECK(r.rc == 0 && r.page);
	n = json_lines(r.json, lines, 16);
	map = element(r.page, "<figure class=\"chart heatmap\" data-table=\"all\">", "</figure>");
	CHECK(map != NULL && n >= 2);
	CHECK(strstr(map ? map : "", "log2 bucket upper bound") != NULL);
	for (int i = 0; map && i < n; i++) {
		struct json_object *rows = rows_of(table_of(lines[i], "all")), *num, *count;
		const char *scope = str_of(lines[i], "scope");
		char want[32], got[32];
		double sum = 0;

		if (!rows || !json_object_array_length(rows) ||
		    !json_object_object_get_ex(json_object_array_get_idx(rows, 0), "count", &count))
			continue;
		if (strcmp(scope, "trace") == 0) {
			all = json_object_get_double(count);
			continue;
		}
		json_object_object_get_ex(lines[i], "report", &num);
		snprintf(want, sizeof(want), "data-report=\"%d\"", json_object_get_int(num));
		for (const char *c = map; (c = strstr(c, "<rect class=\"cell\"")); c++) {
			const char *at = strstr(c, want);
			if (at && at < strchr(c, '>'))
				sum += strtod(attr(c, "data-count", got, sizeof(got)), NULL);
		}
		CHECK(sum == json_object_get_double(count));
		reports++;
	}
	CHECK(reports == 3);
	{
		double sum = 0;
		char got[32];
		for (const char *c = map; c && (c = strstr(c, "<rect class=\"cell\"")); c++)
			sum += strtod(attr(c, "data-count", got, sizeof(got)), NULL);
		CHECK(all == 32947 && sum == all);
	}
	CHECK(strstr(r.page, "<figure class=\"chart heatmap\" data-table=\"by_db_role\" "
		     "data-row=\"postgres, postgres\">") != NULL);
	check_whole(r.page);
	if (n >= 1) {
		check_table(QUERY_LATENCY, &r, lines[n - 1], "all", NULL, "");
		check_table(QUERY_LATENCY, &r, lines[n - 1], "by_db_role", NULL, "database");
	}
	check_alone(dir);
	for (int k = 0; k < n; k++)
		json_object_put(lines[k]);
	free(map);
	free_run(&r);
	free(in);
}

/* --top 2: on CPU and two events, the other rows in one grey band, each
 * bar still adding up to 100%; the same rows as the table's. */
static void test_top(const char *dir)
{
	char path[256], *in = slurp("tests/unit/report/waits-pgbench-synthetic.json", NULL), *chart;
	struct run r;
	double shares = 0;

	snprintf(path, sizeof(path), "%s/page.html", dir);
	CHECK(in != NULL);
	if (!in)
		return;
	run_reader_top(in, path, 2, &r);
	CHECK(r.rc == 0);
	chart = element(r.page, "<figure class=\"chart bands\" data-table=\"waits\" "
			"data-section=\"client backend\">", "</figure>");
	CHECK(count_of(chart, "<g class=\"band\"") == 3);
	CHECK(count_of(chart, "<g class=\"band rest\"") == 1);
	CHECK(strstr(chart ? chart : "", "data-name=\"(3 more)\"") != NULL);
	for (const char *c = chart; c && (c = strstr(c, "data-report=\"1\"")); c++) {
		char got[64];
		shares += strtod(attr(c - 1, "data-share", got, sizeof(got)), NULL);
	}
	CHECK(shares > 0.999999 && shares < 1.000001);
	CHECK(strstr(r.page ? r.page : "", "<tr class=\"rest\" data-label=\"(3 more)\">") != NULL);
	check_whole(r.page);
	free(chart);
	free_run(&r);
	free(in);
}

/* Bad input leaves the page as it was: the old one, or the last report's
 * page, whole; no temporary file. */
static void test_bad_input(const char *dir)
{
	static const char *const bad[] = {
		"Attaching 7 probes...\n",
		"{\"type\": \"printf\", \"data\": \"pgbt waits interval=0 per_backend=on mode=auto: "
		"postmaster 7, port 5432, data directory /d\\n\"}\n{\"type\": \"map\", \"data\": "
		"{\"@wait_us\": {\"1,IO:X\": 1",
		"{\"type\": \"frobnicate\", \"data\": 1}\n",
		"\x7f" "ELF\x02\x01\x01\n",
		"",
	};
	char path[256], *good = slurp(WAITS_SYNTHETIC, NULL), *broken;
	struct run r;

	snprintf(path, sizeof(path), "%s/page.html", dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		if (f) {
			fputs("an old page\n", f);
			fclose(f);
		}
		run_reader(bad[i], path, &r);
		CHECK(r.rc < 0);
		CHECK_STR(r.page, "an old page\n");
		check_alone(dir);
		free_run(&r);
	}
	/* cut after its second report's first map: the first report's page */
	CHECK(good != NULL);
	if (!good)
		return;
	broken = strdup(good);
	*strstr(strstr(broken, "10:00:02"), "@waits") = '\0';
	strcat(broken, "not json\n");
	unlink(path);
	run_reader(broken, path, &r);
	CHECK(r.rc < 0);
	CHECK(r.page && strstr(r.page, "data-reports=\"1\">1</dd>"));
	CHECK(r.page && strstr(r.page, "Tracing: this page is written again"));
	CHECK(r.page && strstr(r.page, "<meta http-equiv=\"refresh\" content=\"1\">"));
	check_whole(r.page);
	check_alone(dir);
	free_run(&r);
	free(broken);
	free(good);
}

/* The charts keep the last RP_HISTORY_MAX reports, and only the rows they
 * have. */
static void test_history_bound(void)
{
	struct rp_spec spec;
	struct pgbt_err err = { .msg = "" };
	struct rp_history h = {0};
	int rc = load_spec(NULL, "waits", &spec, &err);

	CHECK(rc == 0);
	for (int i = 1; rc == 0 && i <= RP_HISTORY_MAX + 10; i++) {
		char line[256];
		struct rp_store store = {0};
		struct rp_msg m;

		snprintf(line, sizeof(line), "{\"type\": \"map\", \"data\": {\"@wait_us\": "
			 "{\"1,IO:WALSync\": %d, \"1,%s\": 5}}}", i, i == 1 ? "Once:First" : "IO:DataFileRead");
		rc = rp_msg_parse(line, strlen(line), &m, &err);
		if (rc == 0)
			rc = rp_msg_to_store(&m, &spec, &store, &err);
		if (rc == 0)
			rc = rp_history_add(&h, &spec, &store, NULL, i, "", 1);
		rp_msg_free(&m);
		rp_store_free(&store);
	}
	CHECK(rc == 0);
	CHECK(h.n == RP_HISTORY_MAX && h.dropped == 10);
	CHECK(h.marks[0].number == 11 && h.marks[h.n - 1].number == RP_HISTORY_MAX + 10);
	for (int i = 0; i < h.nseries; i++) {
		CHECK(h.series[i].nkeys != 1 || strcmp(h.series[i].key[0], "Once:First") != 0);
		if (h.series[i].nkeys == 1 && strcmp(h.series[i].key[0], "IO:WALSync") == 0)
			CHECK(h.series[i].seconds[0] == 11e-6 &&
			      h.series[i].seconds[h.n - 1] == (RP_HISTORY_MAX + 10) * 1e-6);
	}
	CHECK(h.nseries == 2);
	rp_history_free(&h);
}

int main(void)
{
	char dir[] = "/tmp/pgbt-html-test.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	test_waits(dir);
	test_escaping(dir);
	test_heatmap(dir);
	test_top(dir);
	test_bad_input(dir);
	test_history_bound();
	{
		char path[256];
		snprintf(path, sizeof(path), "%s/page.html", dir);
		unlink(path);
		rmdir(dir);
	}
	return check_done();
}
