/* lib/types/dwarf.c against the compiler: build/fixtures/layouts --print lists
 * offsetof/sizeof/enumerator values as gcc computed them, and every line
 * must match what the DWARF gives. Then the ways debug info is found
 * (separate file by .gnu_debuglink and by build-id, none at all), and a
 * PostgreSQL 17 build when one exists, with timings. */
#include "check.h"
#include "lib/types/dwarf.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A debug build of 17 or later (TransamVariables), whichever is here. */
static const char *const PG17PLUS[] = { "/var/cache/pgbt/pg17/bin/postgres",
					"/var/cache/pgbt/pg18/bin/postgres" };
#define FIXTURE_SRC "tests/unit/fixtures/layouts.c"

static char fixture[PATH_MAX];
static char tmpdir[] = "/tmp/pgbt-dwarf-XXXXXX";

/* Runs a shell command built printf-style; true when it exits 0. */
__attribute__((format(printf, 1, 2)))
static int sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A fixture line checked: the line itself names the failure. */
static void line_ok(int ok, const char *line, const struct pgbt_err *err)
{
	check_one(ok, line, __FILE__, __LINE__);
	if (!ok && err->msg[0])
		fprintf(stderr, "     error: %s\n", err->msg);
}

struct counts {
	int member, size, var, enumr, enumtype, bitfield;
};

static void check_member_line(struct pgbt_dwarf *dw, const char *line,
			      struct counts *n)
{
	char type[128], member[128];
	unsigned long long off, size;
	uint64_t got_off = ~0ull, got_size = ~0ull;
	struct pgbt_err err = { .msg = "" };
	int rc;

	if (sscanf(line, "%127s %127s %llu %llu", type, member, &off, &size) != 4) {
		line_ok(0, line, &err);
		return;
	}
	rc = pgbt_dwarf_member(dw, type, member, &got_off, &got_size, &err);
	line_ok(rc == 0 && got_off == off && got_size == size, line, &err);
	if (rc == 0 && (got_off != off || got_size != size))
		fprintf(stderr, "     got offset %llu size %llu\n",
			(unsigned long long)got_off, (unsigned long long)got_size);
	n->member++;
}

static void check_sizeof_line(struct pgbt_dwarf *dw, char *line,
			      struct counts *n)
{
	char *sp = strrchr(line, ' ');
	struct pgbt_err err = { .msg = "" };
	uint64_t got = ~0ull;
	unsigned long long want;
	int rc;

	*sp = '\0';     /* "sizeof long int 8": the type may have spaces */
	want = strtoull(sp + 1, NULL, 10);
	rc = pgbt_dwarf_sizeof(dw, line + 7, &got, &err);
	*sp = ' ';
	line_ok(rc == 0 && got == want, line, &err);
	n->size++;
}

static void check_var_line(struct pgbt_dwarf *dw, const char *line,
			   struct counts *n)
{
	char var[128], type[128], got[128] = "";
	struct pgbt_err err = { .msg = "" };
	int ptrs = -1, got_ptrs = -1, rc;

	if (sscanf(line, "var %127s %127s %d", var, type, &ptrs) != 3) {
		line_ok(0, line, &err);
		return;
	}
	rc = pgbt_dwarf_var_type(dw, var, got, sizeof(got), &got_ptrs, &err);
	line_ok(rc == 0 && strcmp(got, type) == 0 && got_ptrs == ptrs, line, &err);
	if (rc == 0 && (strcmp(got, type) != 0 || got_ptrs != ptrs))
		fprintf(stderr, "     got %s, %d pointers\n", got, got_ptrs);
	n->var++;
}

/* "enumtype T N" starts a group: the next N "enum" lines are T's
 * enumerators in order, checked against pgbt_dwarf_enum too. */
struct enum_group {
	struct pgbt_enumerator *list;
	size_t n, next;
};

static void check_enumtype_line(struct pgbt_dwarf *dw, const char *line,
				struct enum_group *g, struct counts *n)
{
	char type[128];
	size_t want = 0;
	struct pgbt_err err = { .msg = "" };
	int rc;

	free(g->list);
	*g = (struct enum_group){ 0 };
	if (sscanf(line, "enumtype %127s %zu", type, &want) != 2) {
		line_ok(0, line, &err);
		return;
	}
	rc = pgbt_dwarf_enum(dw, type, &g->list, &g->n, &err);
	line_ok(rc == 0 && g->n == want, line, &err);
	if (rc != 0)
		*g = (struct enum_group){ 0 };
	n->enumtype++;
}

static void check_enum_line(struct pgbt_dwarf *dw, const char *line,
			    struct enum_group *g, struct counts *n)
{
	char name[128];
	long long want;
	int64_t got = 0;
	struct pgbt_err err = { .msg = "" };
	int rc;

	if (sscanf(line, "enum %127s %lld", name, &want) != 2) {
		line_ok(0, line, &err);
		return;
	}
	rc = pgbt_dwarf_enumerator(dw, name, &got, &err);
	line_ok(rc == 0 && got == want, line, &err);
	if (g->next < g->n) {
		const struct pgbt_enumerator *e = &g->list[g->next++];

		line_ok(strcmp(e->name, name) == 0 && e->value == want, line, &err);
	}
	n->enumr++;
}

static void check_bitfield_line(struct pgbt_dwarf *dw, const char *line,
				struct counts *n)
{
	char type[128], member[128];
	uint64_t off, size;
	struct pgbt_err err = { .msg = "" };
	int rc = -1;

	if (sscanf(line, "bitfield %127s %127s", type, member) == 2)
		rc = pgbt_dwarf_member(dw, type, member, &off, &size, &err);
	line_ok(rc < 0 && strstr(err.msg, "bit-field"), line, &err);
	n->bitfield++;
}

/* Runs BIN --print and checks every line it prints against DW. */
static void check_printed(struct pgbt_dwarf *dw, const char *bin)
{
	char cmd[PATH_MAX + 32], line[512];
	struct enum_group g = { 0 };
	struct counts n = { 0 };
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --print", bin);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "sizeof ", 7) == 0)
			check_sizeof_line(dw, line, &n);
		else if (strncmp(line, "var ", 4) == 0)
			check_var_line(dw, line, &n);
		else if (strncmp(line, "enumtype ", 9) == 0)
			check_enumtype_line(dw, line, &g, &n);
		else if (strncmp(line, "enum ", 5) == 0)
			check_enum_line(dw, line, &g, &n);
		else if (strncmp(line, "bitfield ", 9) == 0)
			check_bitfield_line(dw, line, &n);
		else
			check_member_line(dw, line, &n);
	}
	free(g.list);
	CHECK(pclose(f) == 0);
	/* An empty or cut-short listing must not pass quietly. */
	CHECK(n.member >= 40 && n.size >= 15 && n.var >= 10 && n.enumr >= 9 &&
	      n.enumtype >= 3 && n.bitfield >= 2);
}

/* --- the fixture itself --------------------------------------------------- */

static void expect_fail(int rc, const struct pgbt_err *err, const char *want)
{
	check_one(rc < 0 && strcmp(err->msg, want) == 0, want, __FILE__, __LINE__);
	if (!(rc < 0 && strcmp(err->msg, want) == 0))
		fprintf(stderr, "     got rc %d: %s\n", rc, err->msg);
}

static void expect_fail_has(int rc, const struct pgbt_err *err, const char *want)
{
	check_one(rc < 0 && strstr(err->msg, want), want, __FILE__, __LINE__);
	if (!(rc < 0 && strstr(err->msg, want)))
		fprintf(stderr, "     got rc %d: %s\n", rc, err->msg);
}

static void test_errors(struct pgbt_dwarf *dw)
{
	struct pgbt_err err = { .msg = "" };
	char want[PATH_MAX + 128], type[64];
	uint64_t off, off2, size;
	int64_t v;
	int ptrs, rc;
	struct pgbt_enumerator *list = NULL;
	size_t n;

	rc = pgbt_dwarf_member(dw, "NoSuchType", "a", &off, &size, &err);
	snprintf(want, sizeof(want), "no type 'NoSuchType' in the DWARF of %s", fixture);
	expect_fail(rc, &err, want);
	CHECK(err.code == PGBT_ENOTFOUND);
	rc = pgbt_dwarf_member(dw, "TransamVariablesData", "nosuch", &off, &size, &err);
	snprintf(want, sizeof(want),
		 "TransamVariablesData has no member 'nosuch' (DWARF from %s)", fixture);
	expect_fail(rc, &err, want);
	CHECK(err.code == PGBT_ENOTFOUND);
	rc = pgbt_dwarf_member(dw, "TransamVariablesData", "nextXid.nosuch", &off, &size, &err);
	snprintf(want, sizeof(want),
		 "TransamVariablesData has no member 'nextXid.nosuch' (DWARF from %s)", fixture);
	expect_fail(rc, &err, want);
	rc = pgbt_dwarf_member(dw, "Outer", "arr[4]", &off, &size, &err);
	expect_fail_has(rc, &err, "Outer.arr[4]: index 4 out of range (4 elements)");
	rc = pgbt_dwarf_member(dw, "Outer", "matrix[1][5]", &off, &size, &err);
	expect_fail_has(rc, &err, "index 5 out of range (5 elements)");
	rc = pgbt_dwarf_member(dw, "Outer", "tag.x", &off, &size, &err);
	expect_fail_has(rc, &err, "Outer.tag.x: not a struct or union");
	rc = pgbt_dwarf_member(dw, "Outer", "ptr.a", &off, &size, &err);
	expect_fail_has(rc, &err, "Outer.ptr.a: not a struct or union");
	rc = pgbt_dwarf_member(dw, "Outer", "arr.b", &off, &size, &err);
	expect_fail_has(rc, &err, "not a struct or union");
	rc = pgbt_dwarf_member(dw, "Outer", "tag[0]", &off, &size, &err);
	expect_fail_has(rc, &err, "Outer.tag[0]: not an array");
	rc = pgbt_dwarf_member(dw, "FlexArr", "items[99999999999999999999]", &off, &size, &err);
	expect_fail_has(rc, &err, "index too large");
	/* A flexible array member: where items[0] is, and no bytes. */
	CHECK(pgbt_dwarf_member(dw, "FlexArr", "items[0]", &off2, &size, &err) == 0);
	rc = pgbt_dwarf_member(dw, "FlexArr", "items", &off, &size, &err);
	CHECK(rc == 0 && off == off2 && size == 0);
	rc = pgbt_dwarf_member(dw, "WaitEventTimeout", "a", &off, &size, &err);
	expect_fail_has(rc, &err, "'WaitEventTimeout' is not a struct or union");
	for (const char *const *p = (const char *const[]){ "", "a..b", "[1]", "arr[",
			"arr[x]", "arr[1]x", ".tag", "tag.", NULL }; *p; p++) {
		rc = pgbt_dwarf_member(dw, "Outer", *p, &off, &size, &err);
		expect_fail_has(rc, &err, "bad member path");
	}
	rc = pgbt_dwarf_sizeof(dw, "NoSuchType", &size, &err);
	expect_fail_has(rc, &err, "no type 'NoSuchType'");
	rc = pgbt_dwarf_var_type(dw, "no_such_var", type, sizeof(type), &ptrs, &err);
	expect_fail_has(rc, &err, "no variable 'no_such_var' in the DWARF of");
	rc = pgbt_dwarf_var_type(dw, "TransamVariables", type, 4, &ptrs, &err);
	expect_fail_has(rc, &err, "too long");
	rc = pgbt_dwarf_enumerator(dw, "NO_SUCH_ENUMERATOR", &v, &err);
	expect_fail_has(rc, &err, "no enumerator 'NO_SUCH_ENUMERATOR' in the DWARF of");
	rc = pgbt_dwarf_enum(dw, "Inner", &list, &n, &err);
	expect_fail_has(rc, &err, "'Inner' is not an enumeration");
	rc = pgbt_dwarf_enum(dw, "NoSuchEnum", &list, &n, &err);
	expect_fail_has(rc, &err, "no type 'NoSuchEnum'");
}

/* The same answers twice: the second comes from the cache. */
static void test_cache(struct pgbt_dwarf *dw)
{
	uint64_t o1, s1, o2, s2;

	CHECK(pgbt_dwarf_member(dw, "Outer", "arr[3].b", &o1, &s1, NULL) == 0);
	CHECK(pgbt_dwarf_member(dw, "Outer", "arr[3].b", &o2, &s2, NULL) == 0);
	CHECK(o1 == o2 && s1 == s2);
}

static void test_fixture(void)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw = pgbt_dwarf_open(fixture, &err);

	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK_STR(pgbt_dwarf_source(dw), fixture);
	check_printed(dw, fixture);
	test_errors(dw);
	test_cache(dw);
	pgbt_dwarf_close(dw);
}

/* --- where the DWARF comes from ------------------------------------------ */

static void expect_no_dwarf(const char *path, const char *dirs, const char *dinfod)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw = pgbt_dwarf_open(path, &err);
	char want[2 * PATH_MAX];

	snprintf(want, sizeof(want),
		 "%s: no DWARF debug info (looked in the file, by build-id and "
		 ".gnu_debuglink under %s; debuginfod: %s)", path, dirs, dinfod);
	CHECK(dw == NULL);
	CHECK_STR(err.msg, want);
	CHECK(err.code == PGBT_ENODEBUG);
	pgbt_dwarf_close(dw);
}

static void test_stripped(void)
{
	char path[PATH_MAX + 16], cache[PATH_MAX];
	struct pgbt_err err = { .msg = "" };

	snprintf(path, sizeof(path), "%s.stripped", fixture);
	expect_no_dwarf(path, ":.debug:/usr/lib/debug", "off");
	setenv("PGBT_DEBUGINFO_PATH", "/nonexistent", 1);
	expect_no_dwarf(path, "/nonexistent", "off");
	unsetenv("PGBT_DEBUGINFO_PATH");
	/* A server nobody listens on, and a private cache: no network, no
	 * files in $HOME; only the message is checked. */
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache", tmpdir);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9/", 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	expect_no_dwarf(path, ":.debug:/usr/lib/debug", "on");
	unsetenv("DEBUGINFOD_URLS");

	CHECK(pgbt_dwarf_open("/nonexistent/postgres", &err) == NULL);
	CHECK(strncmp(err.msg, "/nonexistent/postgres: dwfl_report_offline: ", 44) == 0);
	CHECK(pgbt_dwarf_open(FIXTURE_SRC, &err) == NULL);
	CHECK(strstr(err.msg, "dwfl_report_offline: ") != NULL);
}

/* Opens BIN, expects its DWARF from DEBUGFILE, and checks every line. */
static void expect_debugfile(const char *bin, const char *debugfile)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw = pgbt_dwarf_open(bin, &err);
	char *real = realpath(debugfile, NULL);

	CHECK(dw != NULL);
	if (dw) {
		/* libdwfl resolves symlinks of a build-id path: compare real paths */
		char *src = realpath(pgbt_dwarf_source(dw), NULL);

		CHECK_STR(src, real);
		check_printed(dw, bin);
		free(src);
	} else {
		fprintf(stderr, "     %s\n", err.msg);
	}
	free(real);
	pgbt_dwarf_close(dw);
}

/* objcopy --only-keep-debug, strip, objcopy --add-gnu-debuglink. */
static int split_debug(const char *bin, const char *debugfile, int link)
{
	if (!sh("objcopy --only-keep-debug '%s' '%s'", fixture, debugfile) ||
	    !sh("strip -o '%s' '%s'", bin, fixture))
		return 0;
	return !link || sh("objcopy --add-gnu-debuglink='%s' '%s'", debugfile, bin);
}

static void test_debuglink(void)
{
	char bin[PATH_MAX], dbg[PATH_MAX], dir[PATH_MAX];

	/* Next to the binary: found with the default path. */
	snprintf(bin, sizeof(bin), "%s/same/layouts", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/same/layouts.debug", tmpdir);
	CHECK(sh("mkdir -p '%s/same'", tmpdir));
	CHECK(split_debug(bin, dbg, 1));
	expect_debugfile(bin, dbg);

	/* Elsewhere: only through PGBT_DEBUGINFO_PATH. */
	snprintf(bin, sizeof(bin), "%s/bin/layouts", tmpdir);
	snprintf(dir, sizeof(dir), "%s/dbg", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/layouts.debug", dir);
	CHECK(sh("mkdir -p '%s/bin' '%s'", tmpdir, dir));
	CHECK(split_debug(bin, dbg, 1));
	expect_no_dwarf(bin, ":.debug:/usr/lib/debug", "off");
	setenv("PGBT_DEBUGINFO_PATH", dir, 1);
	expect_debugfile(bin, dbg);
	unsetenv("PGBT_DEBUGINFO_PATH");
}

/* The fixture's build-id as hex, from readelf -n. */
static int build_id(char *out, size_t len)
{
	char cmd[PATH_MAX + 32], line[256], hex[256];
	FILE *f;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", fixture);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "Build ID: ");

		if (p && sscanf(p + 10, "%255s", hex) == 1 && strlen(hex) < len &&
		    strlen(hex) > 2) {
			snprintf(out, len, "%s", hex);
			found = 1;
		}
	}
	pclose(f);
	return found;
}

static void test_build_id(void)
{
	char id[129], bin[PATH_MAX], dbg[2 * PATH_MAX], dir[PATH_MAX];

	CHECK(build_id(id, sizeof(id)));
	snprintf(dir, sizeof(dir), "%s/bid", tmpdir);
	snprintf(bin, sizeof(bin), "%s/bin-nolink", dir);
	snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", dir, id, id + 2);
	CHECK(sh("mkdir -p '%s/.build-id/%.2s'", dir, id));
	CHECK(split_debug(bin, dbg, 0));
	expect_no_dwarf(bin, ":.debug:/usr/lib/debug", "off");
	setenv("PGBT_DEBUGINFO_PATH", dir, 1);
	expect_debugfile(bin, dbg);
	unsetenv("PGBT_DEBUGINFO_PATH");
}

/* --- a struct declared in one unit, defined in another ------------------- */

/* Listed first on the command line, this unit only declares what the
 * fixture defines, so a lookup meets the declarations first and must
 * complete them from the fixture's unit. */
static const char decl_c[] =
	"typedef struct TransamVariablesData TransamVariablesData;\n"
	"struct Outer;\n"
	"extern TransamVariablesData *TransamVariables;\n"
	"TransamVariablesData *decl_transam;\n"
	"struct Outer *decl_outer;\n"
	"TransamVariablesData *decl_get(void) { return TransamVariables; }\n";

static void test_declaration_first(void)
{
	char dir[PATH_MAX], src[PATH_MAX + 8], bin[PATH_MAX + 8];
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw;
	FILE *f;

	if (access(FIXTURE_SRC, R_OK) != 0) {
		check_skip("declaration-first: no " FIXTURE_SRC " here");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/two", tmpdir);
	snprintf(src, sizeof(src), "%s/decl.c", dir);
	snprintf(bin, sizeof(bin), "%s/two", dir);
	CHECK(sh("mkdir -p '%s'", dir));
	f = fopen(src, "w");
	CHECK(f && fputs(decl_c, f) >= 0 && fclose(f) == 0);
	if (!sh("${CC:-cc} -std=gnu11 -O1 -g -o '%s' '%s' '%s'", bin, src, FIXTURE_SRC)) {
		check_skip("declaration-first: cannot compile with ${CC:-cc}");
		return;
	}
	dw = pgbt_dwarf_open(bin, &err);
	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	check_printed(dw, bin);
	pgbt_dwarf_close(dw);
}

/* --- dwz: types moved to partial units of a shared alternate file ------ */

/* Debian's -dbgsym packages are dwz-compressed like this: their units
 * import partial units from a file named by .gnu_debugaltlink. */
static void test_dwz(void)
{
	char dir[PATH_MAX], a[PATH_MAX + 8];
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw;

	if (!sh("command -v dwz >/dev/null")) {
		check_skip("dwz: not installed (tests/setup/install-deps.sh)");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/dwz", tmpdir);
	snprintf(a, sizeof(a), "%s/a", dir);
	CHECK(sh("mkdir -p '%s' && cp '%s' '%s/a' && cp '%s' '%s/b'", dir, fixture,
		 dir, fixture, dir));
	CHECK(sh("cd '%s' && dwz -m '%s/common.debug' a b", dir, dir));
	CHECK(sh("readelf -S '%s' | grep -q gnu_debugaltlink", a));
	dw = pgbt_dwarf_open(a, &err);
	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	check_printed(dw, a);
	pgbt_dwarf_close(dw);
}

/* --- PostgreSQL 17+ --------------------------------------------------------- */

static void test_pg17(void)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_dwarf *dw;
	uint64_t off = 0, size = 0;
	int64_t v = 0;
	char type[128] = "";
	int ptrs = -1;
	double t0, t1, t2, t3;

	const char *pg = NULL;

	for (size_t i = 0; i < sizeof(PG17PLUS) / sizeof(PG17PLUS[0]) && !pg; i++)
		if (access(PG17PLUS[i], R_OK) == 0)
			pg = PG17PLUS[i];
	if (!pg) {
		check_skip("no debug build of PostgreSQL 17 or 18 (tests/setup/build-postgres.sh 18)");
		return;
	}
	t0 = now_ms();
	dw = pgbt_dwarf_open(pg, &err);
	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK(pgbt_dwarf_member(dw, "TransamVariablesData", "nextOid", &off, &size, &err) == 0);
	t1 = now_ms();
	CHECK_EQ_U(off, 0);
	CHECK_EQ_U(size, 4);
	t2 = now_ms();
	CHECK(pgbt_dwarf_member(dw, "TransamVariablesData", "oidCount", &off, &size, &err) == 0);
	t3 = now_ms();
	CHECK_EQ_U(off, 4);
	CHECK_EQ_U(size, 4);
	CHECK(pgbt_dwarf_member(dw, "TransamVariablesData", "nextXid", &off, &size, &err) == 0);
	CHECK_EQ_U(off, 8);
	CHECK_EQ_U(size, 8);
	CHECK(pgbt_dwarf_var_type(dw, "TransamVariables", type, sizeof(type), &ptrs, &err) == 0);
	CHECK_STR(type, "TransamVariablesData");
	CHECK(ptrs == 1);
	CHECK(pgbt_dwarf_enumerator(dw, "WAIT_EVENT_PG_SLEEP", &v, &err) == 0);
	CHECK_EQ_U(v, 0x09000002);
	printf("%s: open + TransamVariablesData.nextOid %.1f ms, cached oidCount %.3f ms, "
	       "var_type + enumerator %.1f ms\n", pg, t1 - t0, t3 - t2, now_ms() - t3);
	pgbt_dwarf_close(dw);
	/* For comparison: pahole reads every unit to print one struct. */
	t0 = now_ms();
	if (sh("pahole -C TransamVariablesData %s >/dev/null 2>&1", pg))
		printf("%s: pahole -C TransamVariablesData %.1f ms\n", pg, now_ms() - t0);
}

int main(void)
{
	const char *dir = getenv("PGBT_FIXTURES");

	/* The test decides where debug info may come from. */
	unsetenv("PGBT_DEBUGINFO_PATH");
	unsetenv("DEBUGINFOD_URLS");
	snprintf(fixture, sizeof(fixture), "%s/layouts", dir && *dir ? dir : "build/fixtures");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_fixture();
	test_stripped();
	test_debuglink();
	test_build_id();
	test_declaration_first();
	test_dwz();
	test_pg17();
	sh("rm -rf '%s'", tmpdir);
	return check_done();
}
