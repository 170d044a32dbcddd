/* lib/usdt: probes read from .note.stapsdt, checked against the fixture's
 * known probe set and against `readelf -n` (an independent parser), the
 * .stapsdt.base adjustment, and malformed notes. */
#include "check.h"
#include "files.h"
#include "readelf.h"
#include "lib/found/usdt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG15 "/usr/lib/postgresql/15/bin/postgres"

static char tmpdir[] = "/tmp/pgbt-test-usdt.XXXXXX";

/* What tests/unit/fixtures/usdt_probes.c declares. */
static const struct {
	const char *provider, *name;
	int nargs;
	size_t sites;
	int sema;
} expected[] = {
	{ "fixture", "noargs", 0, 1, 0 },
	{ "fixture", "two", 2, 1, 0 },
	{ "fixture", "many", 6, 1, 0 },
	{ "fixture", "guarded", 1, 1, 1 },
	{ "fixture", "inlined", 1, 2, 0 },
	{ "other", "three", 3, 1, 0 },
};
#define N_EXPECTED (sizeof(expected) / sizeof(expected[0]))

static int is_expected(const struct pgbt_usdt_probe *p)
{
	for (size_t i = 0; i < N_EXPECTED; i++)
		if (!strcmp(p->provider, expected[i].provider) &&
		    !strcmp(p->name, expected[i].name))
			return 1;
	return 0;
}

static void check_fixture_probes(const char *path)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	struct pgbt_usdt u = { 0 };
	struct pgbt_sym sema;

	CHECK(elf != NULL);
	if (!elf || pgbt_usdt_read(elf, &u, &err) != 0) {
		fprintf(stderr, "     %s: %s\n", path, err.msg);
		CHECK(0);
		pgbt_elf_close(elf);
		return;
	}
	CHECK_EQ_U(u.n, 7);
	for (size_t i = 0; i < u.n; i++)
		CHECK(is_expected(&u.probes[i]));
	for (size_t i = 0; i < N_EXPECTED; i++) {
		const struct pgbt_usdt_probe *p =
			pgbt_usdt_find(&u, expected[i].provider, expected[i].name);

		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_EQ_U(p->nargs, expected[i].nargs);
		CHECK_EQ_U(pgbt_usdt_count(&u, expected[i].provider, expected[i].name),
			   expected[i].sites);
		CHECK_EQ_U(p->sema != 0, expected[i].sema);
		CHECK(p->pc != 0);
	}
	CHECK_STR(pgbt_usdt_find(&u, "fixture", "noargs")->args, "");
	CHECK(pgbt_usdt_find(&u, "fixture", "nosuch") == NULL);
	CHECK(pgbt_usdt_find(&u, "nosuch", "noargs") == NULL);
	CHECK_EQ_U(pgbt_usdt_count(&u, "fixture", "nosuch"), 0);
	/* The two inlined sites are distinct addresses. */
	for (size_t i = 0, seen = 0; i < u.n; i++)
		if (!strcmp(u.probes[i].name, "inlined") && seen++)
			CHECK(u.probes[i].pc != pgbt_usdt_find(&u, "fixture", "inlined")->pc);

	/* The stripped copy keeps the notes; the semaphore's address comes
	 * from the unstripped file's .symtab. */
	struct pgbt_elf *full = pgbt_elf_open(fixture("usdt_probes"), &err);
	CHECK(full && pgbt_elf_symbol(full, "fixture_guarded_semaphore", &sema, &err) == 0);
	if (full)
		CHECK_EQ_U(pgbt_usdt_find(&u, "fixture", "guarded")->sema, sema.value);
	pgbt_elf_close(full);

	compare_with_readelf(path, &u, section_field(elf, ".stapsdt.base", 0));
	pgbt_usdt_free(&u);
	pgbt_usdt_free(&u); /* idempotent */
	CHECK(u.probes == NULL && u.n == 0);
	pgbt_elf_close(elf);
}

static void test_no_notes(void)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(fixture("symbols"), &err);
	struct pgbt_usdt u = { NULL, 99 };

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK(pgbt_usdt_read(elf, &u, &err) == 0);
	CHECK_EQ_U(u.n, 0);
	CHECK(u.probes == NULL);
	pgbt_usdt_free(&u);
	pgbt_elf_close(elf);
}

/* Copies the fixture to the temp dir and returns the new path. */
static const char *copy_fixture(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	copy_file(fixture("usdt_probes"), path, -1);
	return path;
}

/* File offset of the first note of .note.stapsdt in the fixture. */
static uint64_t first_note_offset(void)
{
	struct pgbt_elf *elf = pgbt_elf_open(fixture("usdt_probes"), NULL);
	uint64_t off = elf ? section_field(elf, ".note.stapsdt", 1) : 0;

	pgbt_elf_close(elf);
	return off;
}

/* Reads the patched copy: must fail with "<path>: .note.stapsdt: <cause>". */
static void expect_read_fails(const char *path, const char *cause)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	struct pgbt_usdt u = { 0 };
	char want[4200];

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK(pgbt_usdt_read(elf, &u, &err) == -1);
	CHECK(u.probes == NULL && u.n == 0);
	snprintf(want, sizeof(want), "%s: .note.stapsdt: %s", path, cause);
	CHECK_STR(err.msg, want);
	pgbt_elf_close(elf);
	unlink(path);
}

static uint32_t read_u32(const char *path, uint64_t off)
{
	FILE *f = fopen(path, "rb");
	uint32_t v = 0;

	if (f) {
		fseek(f, (long)off, SEEK_SET);
		if (fread(&v, sizeof(v), 1, f) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* The first note (a "fixture" probe) is patched: header n_namesz, n_descsz,
 * n_type (12 bytes), "stapsdt\0", then pc, base, sema and the strings. */
static void test_malformed(void)
{
	uint64_t note = first_note_offset(), desc = note + 12 + 8;
	const uint32_t huge = 0xfff0, short_desc = 8;
	uint32_t descsz = read_u32(fixture("usdt_probes"), note + 4);
	char fill[512];
	const char *path;

	CHECK(note != 0);
	CHECK(descsz > 24 && descsz - 24 < sizeof(fill));
	if (!note || descsz <= 24 || descsz - 24 >= sizeof(fill))
		return;
	path = copy_fixture("descsz");
	patch_file(path, (long)note + 4, &huge, sizeof(huge));
	expect_read_fails(path, "truncated note at offset 0");

	path = copy_fixture("short");
	patch_file(path, (long)note + 4, &short_desc, sizeof(short_desc));
	expect_read_fails(path, "note at offset 0: descriptor of 8 bytes is too short");

	/* No NUL anywhere in the strings: reading must stop at the desc end. */
	memset(fill, 'A', sizeof(fill));
	path = copy_fixture("unterminated");
	patch_file(path, (long)desc + 24, fill, descsz - 24);
	expect_read_fails(path, "note at offset 0: provider unterminated");

	/* "fixture\0guarded\0..." becomes "fixture\0\0uarded...": empty name. */
	path = copy_fixture("noname");
	patch_file(path, (long)desc + 24 + 8, "", 1);
	expect_read_fails(path, "note at offset 0: empty provider or name");
}

/* A prelinked file: .stapsdt.base moved by 0x100 after the notes were
 * written, which shows as a recorded base 0x100 below the section. */
static void test_base_adjustment(void)
{
	struct pgbt_err err = { .msg = "" };
	uint64_t note = first_note_offset(), desc = note + 20, base;
	struct pgbt_elf *orig = pgbt_elf_open(fixture("usdt_probes"), &err), *elf;
	struct pgbt_usdt want = { 0 }, got = { 0 };
	const char *path = copy_fixture("prelinked");

	CHECK(orig && pgbt_usdt_read(orig, &want, &err) == 0);
	base = orig ? section_field(orig, ".stapsdt.base", 0) - 0x100 : 0;
	patch_file(path, (long)desc + 8, &base, sizeof(base));
	elf = pgbt_elf_open(path, &err);
	CHECK(elf && pgbt_usdt_read(elf, &got, &err) == 0);
	CHECK_EQ_U(got.n, want.n);
	if (got.n && got.n == want.n) {
		uint64_t sema = want.probes[0].sema;

		CHECK_EQ_U(got.probes[0].pc, want.probes[0].pc + 0x100);
		CHECK_EQ_U(got.probes[0].sema, sema ? sema + 0x100 : 0);
		CHECK_EQ_U(got.probes[1].pc, want.probes[1].pc);
	}
	pgbt_usdt_free(&want);
	pgbt_usdt_free(&got);
	pgbt_elf_close(orig);
	pgbt_elf_close(elf);
	unlink(path);
}

/* Debian's server binary, built with --enable-dtrace. */
static void test_pg15(void)
{
	static const char *const names[] = {
		"transaction__start", "transaction__commit", "query__start",
		"query__done", "lwlock__acquire", "lwlock__wait__start",
		"checkpoint__start", "buffer__read__start",
	};
	struct pgbt_err err = { .msg = "" };
	struct pgbt_usdt u = { 0 };
	struct pgbt_elf *elf;
	size_t distinct = 0, with_sema = 0;

	if (access(PG15, R_OK) != 0) {
		check_skip(PG15 " not present (tests/setup/install-deps.sh)");
		return;
	}
	elf = pgbt_elf_open(PG15, &err);
	CHECK(elf && pgbt_usdt_read(elf, &u, &err) == 0);
	for (size_t i = 0; i < u.n; i++) {
		CHECK_STR(u.probes[i].provider, "postgresql");
		distinct += pgbt_usdt_find(&u, "postgresql", u.probes[i].name) == &u.probes[i];
		with_sema += u.probes[i].sema != 0;
	}
	CHECK(distinct > 40);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(pgbt_usdt_find(&u, "postgresql", names[i]) != NULL);
	CHECK_EQ_U(pgbt_usdt_find(&u, "postgresql", "lwlock__acquire")->nargs, 2);
	CHECK_EQ_U(pgbt_usdt_find(&u, "postgresql", "transaction__start")->nargs, 1);
	if (elf)
		compare_with_readelf(PG15, &u, section_field(elf, ".stapsdt.base", 0));
	printf("pg15: %zu notes, %zu distinct probes, %zu with a semaphore\n",
	       u.n, distinct, with_sema);
	pgbt_usdt_free(&u);
	pgbt_elf_close(elf);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	check_fixture_probes(fixture("usdt_probes"));
	check_fixture_probes(fixture("usdt_probes.stripped"));
	test_no_notes();
	test_malformed();
	test_base_adjustment();
	test_pg15();
	rmdir(tmpdir);
	return check_done();
}
