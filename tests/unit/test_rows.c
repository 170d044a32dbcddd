/* Tests of rows from outside the binary (lib/found/rows.c) and of the template
 * loops and conditions over them: {{for R in relations limit N}},
 * {{if connected}}, with a fake relation list instead of a database, on
 * the fake server fixture opened offline. */
#include "check.h"
#include "lib/found/rows.h"
#include "lib/template/template.h"

#include <stdlib.h>

#define HEADER "/*\n * t\tA test template.\n */\n"

static char fixtures[512];

/* Renders text with the given rows (NULL: none); NULL on error (in err). */
static char *render(struct pgbt_target *t, const char *text, const struct pgbt_rows *rows,
		    const char *param, struct pgbt_err *err)
{
	struct pgbt_template tpl;
	char *out = NULL;

	err->msg[0] = '\0';
	if (pgbt_template_parse("t", "test", text, strlen(text), &tpl, err) < 0)
		return NULL;
	if ((!rows || pgbt_template_add_rows(&tpl, rows, err) == 0) &&
	    (!param || pgbt_template_set_param(&tpl, param, err) == 0))
		pgbt_template_render(&tpl, t, &out, err);
	pgbt_template_free(&tpl);
	return out;
}

static void expect(struct pgbt_target *t, const char *text, const struct pgbt_rows *rows,
		   const char *param, const char *want)
{
	struct pgbt_err err;
	char *out = render(t, text, rows, param, &err);

	CHECK(out && strstr(out, want));
	if (!out || !strstr(out, want))
		fprintf(stderr, "     wanted \"%s\" in:\n%s\n     error: %s\n", want,
			out ? out : "(none)", err.msg);
	free(out);
}

static void expect_absent(struct pgbt_target *t, const char *text, const struct pgbt_rows *rows,
			  const char *unwanted)
{
	struct pgbt_err err;
	char *out = render(t, text, rows, NULL, &err);

	CHECK(out && !strstr(out, unwanted));
	free(out);
}

static void test_escape(void)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;   /* as a bpftrace string literal */
	} cases[] = {
		{"public.t", 63, "public.t"},
		{"a\"b\\c", 63, "a\\\\\\\"b\\\\\\\\c"},      /* a\"b\\c: JSON-safe */
		{"x\n\xc3\xa9", 63, "x\\\\u000a\\303\\251"}, /* newline as \u000a, UTF-8 é */
		{"\xe9\x7f", 63, "\\\\u00e9\\\\u007f"},      /* Latin-1 é, DEL as \u00XX */
		{"abcdef", 3, "abc"},
		/* cut before an escape or a character that would not fit whole */
		{"ab\"", 3, "ab"},
		{"ab\xc3\xa9", 3, "ab"},
		{"a\xc3", 63, "a\\\\u00c3"},
	};
	char out[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pgbt_rows_escape(cases[i].in, cases[i].max, out, sizeof(out));
		CHECK_STR(out, cases[i].want);
	}
	CHECK(pgbt_rows_safe("a\\\\\\\"b\\\\u000a"));
	CHECK(pgbt_rows_safe("a\\\"b\\\\c\\303"));
	CHECK(!pgbt_rows_safe("a\"); system(\"x"));
	CHECK(!pgbt_rows_safe("a\\"));
	CHECK(!pgbt_rows_safe("a\\q"));
	CHECK(!pgbt_rows_safe("a\nb"));
}

static void test_rows_table(struct pgbt_rows *r)
{
	struct pgbt_err err;
	const char *rows[][3] = { { "5", "16384", "public.t" }, { "0", "1262", "pg_catalog.pg_database" },
				  { "5", "16390", "s.\\\"q\\\"" } };
	const char *bad[3] = { "5", "1", "x\"; system(\"rm" };

	CHECK(pgbt_rows_init(r, "relations", "db oid name", "a test list", &err) == 0);
	for (size_t i = 0; i < 3; i++)
		CHECK(pgbt_rows_add(r, rows[i], &err) == 0);
	CHECK(pgbt_rows_add(r, bad, &err) < 0);
	CHECK(strstr(err.msg, "not safe in a bpftrace string") != NULL);
	CHECK_EQ_U(r->nrows, 3);
	CHECK_STR(pgbt_rows_cell(r, 1, "name"), "pg_catalog.pg_database");
	CHECK(pgbt_rows_cell(r, 1, "nope") == NULL);
}

static void test_loops(struct pgbt_target *t, const struct pgbt_rows *r)
{
	const char *loop = HEADER "//@ param max int:0..100 10 most\n"
		"{{for R in relations limit $max}}@n[{{R.db}}, {{R.oid}}] = \"{{R.name}}\";\n{{end}}"
		"{{if connected}}named{{else}}oids{{end}}\n";

	expect(t, loop, r, NULL, "@n[5, 16384] = \"public.t\";\n@n[0, 1262] = "
	       "\"pg_catalog.pg_database\";\n@n[5, 16390] = \"s.\\\"q\\\"\";\nnamed\n");
	expect(t, loop, r, NULL, "//   relations: 3 of 3 rows (a test list)\n");
	expect(t, loop, r, "max=1", "= \"public.t\";\nnamed\n");
	expect(t, loop, r, "max=1", "1 of 3 rows (a test list); the rest print as OIDs");
	expect(t, loop, r, "max=0", "0 of 3 rows (a test list); the rest print as OIDs\nnamed\n");
	/* no rows given: no iterations, not connected, no provenance line */
	expect(t, loop, NULL, NULL, "max=10 (default)\noids\n");
	expect_absent(t, loop, NULL, "relations:");
	expect_absent(t, loop, NULL, "@n[");
	expect(t, HEADER "{{if !connected}}plain{{end}}\n", NULL, NULL, "plain");
	/* a loop over rows needs neither DWARF nor a layout */
	{
		struct pgbt_template tpl;
		struct pgbt_needs n;
		struct pgbt_err err;
		CHECK(pgbt_template_parse("t", "test", loop, strlen(loop), &tpl, &err) == 0);
		pgbt_template_needs(&tpl, &n);
		CHECK(!n.types && !n.live);
		pgbt_template_free(&tpl);
	}
	{
		struct pgbt_err err;
		char *out = render(t, HEADER "{{for R in relations limit nope}}x{{end}}\n", r, NULL, &err);
		CHECK(!out);
		free(out);
	}
}

int main(void)
{
	const char *env = getenv("PGBT_FIXTURES");
	struct pgbt_target t;
	struct pgbt_rows r;
	struct pgbt_err err;
	char path[700];

	snprintf(fixtures, sizeof(fixtures), "%s", env ? env : "build/fixtures");
	test_escape();
	test_rows_table(&r);
	snprintf(path, sizeof(path), "%s/fake_postgres", fixtures);
	if (pgbt_target_open_binary(&t, path, &err) < 0) {
		CHECK(!"open fixture");
		fprintf(stderr, "     %s\n", err.msg);
	} else {
		test_loops(&t, &r);
		pgbt_target_close(&t);
	}
	pgbt_rows_free(&r);
	return check_done();
}
