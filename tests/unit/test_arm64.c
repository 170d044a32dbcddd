/* Debian's arm64 server binaries (stripped, USDT notes), unpacked by
 * tests/setup/debian-arm64.sh under $PGBT_CACHE/arm64 (default
 * /var/cache/pgbt): what pgbt reads from an aarch64 ELF file here, on
 * x86-64, checked against readelf; the machine it names; the layout it
 * picks; and what it refuses there. Running on arm64 is not tested here. */
#include "check.h"
#include "lib/found/machine.h"
#include "readelf.h"
#include "lib/target/target.h"
#include "lib/template/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The binary of one major, or NULL after a named skip. */
static const char *binary(int major)
{
	static char path[4096];
	char why[512] = "", file[4200];
	const char *cache = getenv("PGBT_CACHE");
	FILE *f;

	cache = cache && *cache ? cache : "/var/cache/pgbt";
	snprintf(path, sizeof(path), "%s/arm64/pg%d/bin/postgres", cache, major);
	if (access(path, R_OK) == 0)
		return path;
	snprintf(file, sizeof(file), "%s/arm64/pg%d.unavailable", cache, major);
	if ((f = fopen(file, "r"))) {
		if (fgets(why, sizeof(why), f))
			why[strcspn(why, "\n")] = '\0';
		fclose(f);
	}
	printf("skip: arm64 PostgreSQL %d: %s\n", major,
	       why[0] ? why : "not unpacked (tests/setup/debian-arm64.sh)");
	check_skipped++;
	return NULL;
}

/* Every argument spec has one '@', whatever the machine writes after it. */
static int count_at(const char *args)
{
	int n = 0;

	for (; *args; args++)
		n += *args == '@';
	return n;
}

static void test_elf(int major, const char *path, struct pgbt_elf *elf)
{
	const char *var = major >= 17 ? "TransamVariables" : "ShmemVariableCache";
	const char *names[] = { var, "MyProc", "PostgresMain", "pgstat_report_activity" };
	struct pgbt_err err = { .msg = "" };
	char version[256], want_id[256];
	unsigned long long value, size;
	struct pgbt_sym sym;
	int got_major = 0;

	CHECK_EQ_U(pgbt_elf_machine(elf), EM_AARCH64);
	CHECK_STR(pgbt_machine_name(pgbt_elf_machine(elf)), "aarch64");
	CHECK(pgbt_elf_is_pie(elf));
	CHECK(!pgbt_elf_has_debug_info(elf));
	readelf_build_id(path, want_id, sizeof(want_id));
	CHECK(strlen(want_id) == 40);
	CHECK_STR(pgbt_elf_build_id(elf), want_id);
	CHECK(pgbt_elf_pg_version(elf, version, sizeof(version), &got_major, &err) == 0);
	CHECK_EQ_U(got_major, major);
	CHECK(strstr(version, " on aarch64-") != NULL);
	printf("arm64 %d: %s\n", major, version);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int found = readelf_dynsym(path, names[i], &value, &size);

		CHECK(found);
		CHECK(pgbt_elf_symbol(elf, names[i], &sym, &err) == 0);
		if (!found)
			continue;
		CHECK_STR(sym.table, ".dynsym");
		CHECK_EQ_U(sym.value, value);
		CHECK_EQ_U(sym.size, size);
	}
	/* 13 keeps it static: no symbol for pgbt to take */
	CHECK((pgbt_elf_symbol(elf, "MyBEEntry", &sym, &err) == 0) == (major >= 14));
}

/* Notes one for one with readelf, and aarch64's operands ("-4@[x19, 72]",
 * a space inside) counted as one argument each. */
static void test_usdt(int major, const char *path, struct pgbt_elf *elf)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_usdt u = { 0 };
	const struct pgbt_usdt_probe *p;
	size_t bracketed = 0;

	CHECK(pgbt_usdt_read(elf, &u, &err) == 0);
	CHECK(u.n > 50);
	compare_with_readelf(path, &u, section_field(elf, ".stapsdt.base", 0));
	for (size_t i = 0; i < u.n; i++) {
		CHECK_EQ_U(u.probes[i].nargs, count_at(u.probes[i].args));
		bracketed += strchr(u.probes[i].args, '[') != NULL;
	}
	CHECK(bracketed > 0);
	/* arities from src/backend/utils/probes.d */
	CHECK((p = pgbt_usdt_find(&u, "postgresql", "checkpoint__done")) && p->nargs == 5);
	CHECK((p = pgbt_usdt_find(&u, "postgresql", "lwlock__acquire")) && p->nargs == 2);
	CHECK((p = pgbt_usdt_find(&u, "postgresql", "transaction__start")) && p->nargs == 1);
	printf("arm64 %d: %zu USDT notes, %zu with a memory operand\n", major, u.n, bracketed);
	pgbt_usdt_free(&u);
}

/* A template's machine and registers, rendered for the arm64 target. */
static void test_template(struct pgbt_target *t)
{
	static const char text[] = "/*\n * t\tA test template.\n */\n"
		"{{machine}} {{caller}} {{ip}} {{if machine == aarch64}}a{{else}}x{{end}}\n";
	struct pgbt_err err = { .msg = "" };
	struct pgbt_template tpl;
	char *out = NULL;

	CHECK(pgbt_template_load("t", "test", text, strlen(text), NULL, NULL, &tpl, &err) == 0);
	CHECK(pgbt_template_render(&tpl, t, &out, &err) == 0);
	CHECK(out && strstr(out, "\naarch64 reg(\"r30\") reg(\"pc\") a\n"));
	free(out);
	pgbt_template_free(&tpl);
}

/* The target takes the machine from the binary and the layout's offsets
 * for it; what pgbt can only do on x86-64 is refused, saying so. */
static void test_target(int major, const char *path)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_target t;
	uint64_t off, size, addr;
	char how[PGBT_HOW_LEN], origin[1024];

	if (pgbt_target_open_binary(&t, path, &err) < 0) {
		CHECK(!"open the arm64 binary");
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK_EQ_U(t.machine, EM_AARCH64);
	CHECK(pgbt_target_member(&t, major >= 17 ? "TransamVariablesData" : "VariableCacheData",
				 major == 13 ? "nextFullXid" : "nextXid", &off, &size, how,
				 &err) == 0);
	CHECK_EQ_U(off, 8);
	pgbt_target_types_origin(&t, origin, sizeof(origin));
	CHECK(strstr(origin, "built-in layout for PostgreSQL") && strstr(origin, " on aarch64 ("));
	test_template(&t);
	if (major == 13) {
		/* no symbol: found in code, which pgbt reads for x86-64 only */
		CHECK(pgbt_target_symbol_addr(&t, "MyBEEntry", &addr, how, &err) < 0);
		CHECK(strstr(err.msg, "x86-64 code only, not in aarch64 code") != NULL);
	}
	pgbt_target_close(&t);
}

int main(void)
{
	static const int majors[] = { 13, 15, 17, 18 };

	for (size_t i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		struct pgbt_err err = { .msg = "" };
		const char *path = binary(majors[i]);
		struct pgbt_elf *elf;

		if (!path)
			continue;
		if (!(elf = pgbt_elf_open(path, &err))) {
			CHECK(!"open the arm64 binary");
			fprintf(stderr, "     %s\n", err.msg);
			continue;
		}
		test_elf(majors[i], path, elf);
		test_usdt(majors[i], path, elf);
		pgbt_elf_close(elf);
		test_target(majors[i], path);
	}
	return check_done();
}
