/* libFuzzer target: pgbt-gen report's reader (report/) on an input of
 * bpftrace -f json lines, with the built-in templates' "//@ report" lines
 * for the script the input names; the text and JSON reports are written
 * to /dev/null, the HTML page to a file in a directory of its own (at each
 * report, as pgbt-gen report --html does), and the Prometheus text of the
 * whole trace is made.
 * Seeds: tests/unit/report/ and captures of the other scripts
 * (tests/fuzz/seeds.sh). */
#include "lib/common/embedded.h"
#include "report/prom.h"
#include "report/reader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct pgbt_embedded *embedded(const char *path)
{
	for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++)
		if (strcmp(e->path, path) == 0)
			return e;
	return NULL;
}

static int read_fragment(void *ctx, const char *name, char **ret, size_t *ret_len,
			 struct pgbt_err *err)
{
	char path[128];
	const struct pgbt_embedded *e;

	(void)ctx;
	snprintf(path, sizeof(path), "scripts/include/%s.bt", name);
	if (!(e = embedded(path)) || !(*ret = strndup(e->data, e->len)))
		return pgbt_fail(err, "no %s", path);
	*ret_len = e->len;
	return 0;
}

/* Specs read once per script (loading a template takes a while). */
static struct cached {
	char script[64];
	struct rp_spec spec;
	int rc;
} cache[64];

static int load_spec_now(const char *script, struct rp_spec *ret, struct pgbt_err *err);

static int load_spec(void *ctx, const char *script, struct rp_spec *ret, struct pgbt_err *err)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		struct cached *c = &cache[i];
		if (c->script[0] && strcmp(c->script, script) == 0) {
			*ret = c->spec;
			return c->rc ? pgbt_fail(err, "cached failure") : 0;
		}
		if (!c->script[0]) {
			snprintf(c->script, sizeof(c->script), "%s", script);
			c->rc = load_spec_now(script, &c->spec, err);
			*ret = c->spec;
			return c->rc;
		}
	}
	return load_spec_now(script, ret, err);
}

static int load_spec_now(const char *script, struct rp_spec *ret, struct pgbt_err *err)
{
	struct pgbt_template tpl;
	const struct pgbt_embedded *e;
	char path[128];
	int rc;

	if (strlen(script) > 48 || strchr(script, '/'))
		return pgbt_fail(err, "not a script name");
	snprintf(path, sizeof(path), "scripts/%s.bt", script);
	if (!(e = embedded(path)))
		return pgbt_fail(err, "no script %s", script);
	if (pgbt_template_load(script, path, e->data, e->len, read_fragment, NULL, &tpl, err) < 0)
		return -1;
	rc = rp_spec_read(&tpl, ret, err);
	pgbt_template_free(&tpl);
	return rc;
}

static double fixed_clock(void)
{
	return 1.0;
}

static char page_dir[64], page[80];

static void remove_page(void)
{
	unlink(page);
	rmdir(page_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct rp_options opt = { .load_spec = load_spec, .input = "fuzz", .clock = fixed_clock };
	struct rp_reader r;
	struct pgbt_err err;
	const char *p = (const char *)data, *end = p + size;
	int rc = 0;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	if (!page[0]) {
		snprintf(page_dir, sizeof(page_dir), "/tmp/pgbt-fuzz-report.XXXXXX");
		if (!mkdtemp(page_dir))
			abort();
		snprintf(page, sizeof(page), "%s/page.html", page_dir);
		atexit(remove_page);
	}
	opt.html_path = page;
	opt.text = null;
	opt.json = null;
	rp_reader_init(&r, &opt);
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		rc = rp_reader_line(&r, p, len, &err);
		p += len + 1;
	}
	if (rc == 0 && rp_reader_end(&r, &err) == 0 && r.have_id) {
		struct pgbt_buf b = {0};
		rp_prom_text(&b, &r.id, &r.spec, &r.total, &r.total);
		pgbt_buf_free(&b);
	}
	rp_reader_free(&r);
	return 0;
}
