/* lib/types/gdb_types.c against the compiler: every line build/fixtures/layouts
 * --print lists (offsets, sizes, a global's type, enumerators, as gcc
 * computed them) must be gdb's answer too, as it is libdw's in
 * test_dwarf.c. Then the refusals: one line naming the fact and gdb's
 * words; a binary without debug info; gdb not installed. And on the
 * PostgreSQL debug builds the tests use, every fact of the built-in
 * layout for that major as gdb and libdw answer it. Skipped, by name,
 * where gdb or a build is not there. */
#include "check.h"
#include "files.h"
#include "lib/types/gdb_types.h"
#include "lib/types/layout.h"
#include "lib/found/machine.h"
#include "lib/target/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void line_ok(int ok, const char *line, const struct pgbt_err *err)
{
	check_one(ok, line, __FILE__, __LINE__);
	if (!ok && err->msg[0])
		fprintf(stderr, "     error: %s\n", err->msg);
}

struct counts {
	int member, size, var, enumr, enumtype;
};

static void check_line(struct pgbt_gdb *g, char *line, struct counts *n,
		       struct pgbt_enumerator **list, size_t *nlist, size_t *next)
{
	char a[128], b[128];
	unsigned long long off, size;
	long long v;
	uint64_t got_off = ~0ull, got_size = ~0ull;
	int64_t got_v = 0;
	int ptrs, got_ptrs = -1, rc;
	struct pgbt_err err = { .msg = "" };

	if (strncmp(line, "sizeof ", 7) == 0) {
		char *sp = strrchr(line, ' ');
		*sp = '\0';   /* "sizeof long int 8" */
		rc = pgbt_gdb_sizeof(g, line + 7, &got_size, &err);
		*sp = ' ';
		line_ok(rc == 0 && got_size == strtoull(sp + 1, NULL, 10), line, &err);
		n->size++;
	} else if (sscanf(line, "var %127s %127s %d", a, b, &ptrs) == 3) {
		char got[128] = "";
		rc = pgbt_gdb_var_type(g, a, got, sizeof(got), &got_ptrs, &err);
		line_ok(rc == 0 && strcmp(got, b) == 0 && got_ptrs == ptrs, line, &err);
		if (rc == 0 && (strcmp(got, b) != 0 || got_ptrs != ptrs))
			fprintf(stderr, "     got %s, %d pointers\n", got, got_ptrs);
		n->var++;
	} else if (sscanf(line, "enumtype %127s %llu", a, &size) == 2) {
		free(*list);
		*list = NULL;
		*nlist = *next = 0;
		rc = pgbt_gdb_enum(g, a, list, nlist, &err);
		line_ok(rc == 0 && *nlist == size, line, &err);
		n->enumtype++;
	} else if (sscanf(line, "enum %127s %lld", a, &v) == 2) {
		rc = pgbt_gdb_enumerator(g, a, &got_v, &err);
		line_ok(rc == 0 && got_v == v, line, &err);
		if (rc == 0 && got_v != v)
			fprintf(stderr, "     got %lld\n", (long long)got_v);
		if (*next < *nlist) {
			const struct pgbt_enumerator *e = &(*list)[(*next)++];
			line_ok(strcmp(e->name, a) == 0 && e->value == v, line, &err);
		}
		n->enumr++;
	} else if (strncmp(line, "bitfield ", 9) == 0) {
		;   /* libdw refuses them by name; gdb's refusal is its own */
	} else if (sscanf(line, "%127s %127s %llu %llu", a, b, &off, &size) == 4) {
		rc = pgbt_gdb_member(g, a, b, &got_off, &got_size, &err);
		line_ok(rc == 0 && got_off == off && got_size == size, line, &err);
		if (rc == 0 && (got_off != off || got_size != size))
			fprintf(stderr, "     got offset %llu size %llu\n",
				(unsigned long long)got_off, (unsigned long long)got_size);
		n->member++;
	} else {
		line_ok(0, line, &err);
	}
}

static void test_fixture(const char *bin)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_gdb *g = pgbt_gdb_types_open(bin, &err);
	struct pgbt_enumerator *list = NULL;
	struct counts n = { 0 };
	size_t nlist = 0, next = 0;
	char cmd[4200], line[512];
	FILE *f;

	CHECK(g != NULL);
	if (!g) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK(strncmp(pgbt_gdb_version(g), "GNU gdb", 7) == 0);
	snprintf(cmd, sizeof(cmd), "'%s' --print", bin);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		check_line(g, line, &n, &list, &nlist, &next);
	}
	CHECK(f && pclose(f) == 0);
	free(list);
	/* An empty or cut-short listing must not pass quietly. */
	CHECK(n.member >= 40 && n.size >= 15 && n.var >= 10 && n.enumr >= 9 && n.enumtype >= 3);
	CHECK(pgbt_gdb_asked(g) >= 80);

	/* Refusals: the fact, then gdb's words. */
	{
		uint64_t off, size;
		int64_t v;
		char type[64];
		int ptrs;

		CHECK(pgbt_gdb_member(g, "NoSuchType", "a", &off, &size, &err) < 0);
		CHECK_STR(err.msg, "gdb cannot answer offsetof(NoSuchType, a): "
			  "No symbol \"NoSuchType\" in current context.");
		CHECK(pgbt_gdb_member(g, "TransamVariablesData", "nosuch", &off, &size, &err) < 0);
		CHECK_STR(err.msg, "gdb cannot answer offsetof(TransamVariablesData, nosuch): "
			  "There is no member named nosuch.");
		CHECK(pgbt_gdb_sizeof(g, "NoSuchType", &size, &err) < 0);
		CHECK(strncmp(err.msg, "gdb cannot answer sizeof(NoSuchType): ", 38) == 0);
		CHECK(pgbt_gdb_var_type(g, "no_such_var", type, sizeof(type), &ptrs, &err) < 0);
		CHECK_STR(err.msg, "gdb cannot answer the type of no_such_var: "
			  "No symbol \"no_such_var\" in current context.");
		CHECK(pgbt_gdb_enumerator(g, "color_global", &v, &err) < 0);
		CHECK(strstr(err.msg, "color_global: not an enumerator") != NULL);
		CHECK(pgbt_gdb_enum(g, "Inner", &list, &nlist, &err) < 0);
		CHECK(strstr(err.msg, "gdb cannot answer enum(Inner): not an enumeration") != NULL);
		/* nothing but names reaches gdb */
		CHECK(pgbt_gdb_member(g, "Inner", "a\nshell id", &off, &size, &err) < 0);
		CHECK(strstr(err.msg, "bad type or member path") != NULL);
	}
	pgbt_gdb_close(g);
}

static void test_no_debug_info(const char *stripped)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_gdb *g = pgbt_gdb_types_open(stripped, &err);
	char want[4200];

	CHECK(g == NULL);
	snprintf(want, sizeof(want), "%s: GNU gdb", stripped);
	CHECK(strncmp(err.msg, want, strlen(want)) == 0);
	CHECK(strstr(err.msg, "finds no debug info for it") != NULL);
	pgbt_gdb_close(g);
}

static void test_no_gdb(const char *bin)
{
	struct pgbt_err err = { .msg = "" };
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	setenv("PATH", "/nonexistent", 1);
	CHECK(pgbt_gdb_types_open(bin, &err) == NULL);
	CHECK_STR(err.msg, "gdb is not installed (no gdb on PATH)");
	if (path)
		setenv("PATH", path, 1);
	free(path);
}

/* One layout fact asked of gdb and of libdw; 1 when they differ. */
static int compare_fact(struct pgbt_gdb *g, struct pgbt_dwarf *dw, const struct pgbt_fact *f,
			char *why, size_t len)
{
	struct pgbt_err eg = { .msg = "" }, ed = { .msg = "" };
	uint64_t go = 0, gs = 0, doff = 0, ds = 0;
	int64_t gv = 0, dv = 0;
	char gt[128] = "", dt[128] = "";
	int gp = -1, dp = -1, rg, rd;
	struct pgbt_enumerator *gl = NULL, *dl = NULL;
	size_t gn = 0, dn = 0;
	bool same;

	switch (f->kind) {
	case FACT_MEMBER:
		rg = pgbt_gdb_member(g, f->type, f->name, &go, &gs, &eg);
		rd = pgbt_dwarf_member(dw, f->type, f->name, &doff, &ds, &ed);
		same = rg == rd && go == doff && gs == ds;
		snprintf(why, len, "member %s.%s: gdb %llu/%llu (%s), libdw %llu/%llu (%s)", f->type,
			 f->name, (unsigned long long)go, (unsigned long long)gs, eg.msg,
			 (unsigned long long)doff, (unsigned long long)ds, ed.msg);
		break;
	case FACT_SIZEOF:
		rg = pgbt_gdb_sizeof(g, f->type, &gs, &eg);
		rd = pgbt_dwarf_sizeof(dw, f->type, &ds, &ed);
		same = rg == rd && gs == ds;
		snprintf(why, len, "sizeof %s: gdb %llu (%s), libdw %llu (%s)", f->type,
			 (unsigned long long)gs, eg.msg, (unsigned long long)ds, ed.msg);
		break;
	case FACT_VAR:
		rg = pgbt_gdb_var_type(g, f->name, gt, sizeof(gt), &gp, &eg);
		rd = pgbt_dwarf_var_type(dw, f->name, dt, sizeof(dt), &dp, &ed);
		same = rg == rd && strcmp(gt, dt) == 0 && gp == dp;
		snprintf(why, len, "var %s: gdb %s %d (%s), libdw %s %d (%s)", f->name, gt, gp,
			 eg.msg, dt, dp, ed.msg);
		break;
	case FACT_ENUMERATOR:
		rg = pgbt_gdb_enumerator(g, f->name, &gv, &eg);
		rd = pgbt_dwarf_enumerator(dw, f->name, &dv, &ed);
		same = rg == rd && gv == dv;
		snprintf(why, len, "enumerator %s: gdb %lld (%s), libdw %lld (%s)", f->name,
			 (long long)gv, eg.msg, (long long)dv, ed.msg);
		break;
	case FACT_ENUM:
		rg = pgbt_gdb_enum(g, f->type, &gl, &gn, &eg);
		rd = pgbt_dwarf_enum(dw, f->type, &dl, &dn, &ed);
		same = rg == rd && gn == dn;
		for (size_t i = 0; same && i < gn; i++)
			same = strcmp(gl[i].name, dl[i].name) == 0 && gl[i].value == dl[i].value;
		snprintf(why, len, "enum %s: gdb %zu names (%s), libdw %zu (%s)", f->type, gn,
			 eg.msg, dn, ed.msg);
		free(gl);
		free(dl);
		break;
	default:
		return 0;   /* labels: pgbt's own words, in neither */
	}
	return !same;
}

/* A PostgreSQL debug build: every fact of its major's built-in layout. */
static void test_postgres(const char *bin)
{
	struct pgbt_target t;
	struct pgbt_layout layout = { 0 };
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw = NULL;
	struct pgbt_gdb *g = NULL;
	char why[1400];
	int bad = 0, asked = 0;

	if (access(bin, X_OK) != 0) {
		snprintf(why, sizeof(why), "gdb against libdw on %s: not built "
			 "(tests/setup/build-postgres.sh)", bin);
		check_skip(why);
		return;
	}
	CHECK(pgbt_target_open_binary(&t, bin, &err) == 0);
	CHECK((dw = pgbt_dwarf_open(bin, &err)) != NULL);
	CHECK((g = pgbt_gdb_types_open(bin, &err)) != NULL);
	CHECK(pgbt_layout_builtin(t.major, pgbt_machine_name(t.machine), &layout, &err) == 0);
	for (size_t i = 0; dw && g && i < layout.n; i++) {
		if (layout.facts[i].kind == FACT_LABEL)
			continue;
		asked++;
		if (compare_fact(g, dw, &layout.facts[i], why, sizeof(why)) && ++bad <= 10)
			fprintf(stderr, "     %s: %s\n", bin, why);
	}
	printf("%s: %d layout facts asked of gdb and libdw, %d differ, %u questions to gdb "
	       "in %ld ms\n", bin, asked, bad, g ? pgbt_gdb_asked(g) : 0,
	       g ? pgbt_gdb_elapsed_ms(g) : 0L);
	CHECK(bad == 0);
	CHECK(asked >= 300);   /* 15's layout: about 340 besides labels */
	if (err.msg[0] && (!dw || !g))
		fprintf(stderr, "     %s\n", err.msg);
	pgbt_layout_free(&layout);
	pgbt_gdb_close(g);
	pgbt_dwarf_close(dw);
	pgbt_target_close(&t);
}

int main(void)
{
	char bin[4200], stripped[4200];

	snprintf(bin, sizeof(bin), "%s", fixture("layouts"));
	snprintf(stripped, sizeof(stripped), "%s", fixture("layouts.stripped"));
	test_no_gdb(bin);
	if (system("gdb --version >/dev/null 2>&1") != 0) {
		check_skip("gdb's answers against the compiler's: gdb is not installed");
		return check_done();
	}
	test_fixture(bin);
	test_no_debug_info(stripped);
	test_postgres("/var/cache/pgbt/pg15/bin/postgres");
	test_postgres("/var/cache/pgbt/pg18/bin/postgres");
	return check_done();
}
