/* For the unit tests of pgbt-gen report: a file read whole, and the
 * scripts' "//@ report" lines read from scripts/ (run from the top of the
 * tree), as pgbt-gen report reads them from its built-in templates. */
#ifndef PGBT_TEST_REPORT_LOAD_H
#define PGBT_TEST_REPORT_LOAD_H

#include "report/reader.h"
#include "report/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static inline int read_fragment(void *ctx, const char *name, char **ret, size_t *ret_len,
			 struct pgbt_err *err)
{
	char path[256];

	(void)ctx;
	snprintf(path, sizeof(path), "scripts/include/%s.bt", name);
	if (!(*ret = slurp(path, ret_len)))
		return pgbt_fail(err, "no %s", path);
	return 0;
}

static inline int load_template(const char *script, struct pgbt_template *tpl, struct pgbt_err *err)
{
	char path[256], *text;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "scripts/%s.bt", script);
	if (!(text = slurp(path, &len)))
		return pgbt_fail(err, "no script %s", script);
	rc = pgbt_template_load(script, path, text, len, read_fragment, NULL, tpl, err);
	free(text);
	return rc;
}

static inline int load_spec(void *ctx, const char *script, struct rp_spec *ret, struct pgbt_err *err)
{
	struct pgbt_template tpl;
	int rc;

	(void)ctx;
	if (load_template(script, &tpl, err) < 0)
		return -1;
	rc = rp_spec_read(&tpl, ret, err);
	pgbt_template_free(&tpl);
	return rc;
}

static inline double fixed_clock(void)
{
	return 100.0;
}

/* Feeds input to the reader a line at a time, then ends it: the first
 * failure's return code. */
static inline int feed_reader(struct rp_reader *r, const char *input, struct pgbt_err *err)
{
	const char *p = input;
	int rc = 0;

	while (*p && rc == 0) {
		size_t l = strcspn(p, "\n");
		rc = rp_reader_line(r, p, l, err);
		p += l + (p[l] == '\n');
	}
	return rc == 0 ? rp_reader_end(r, err) : rc;
}

#endif
