/* lib/elfimg: symbols, build-id, reads by address, the PostgreSQL version
 * string, and clean failures on files that are not ELF or are damaged.
 * Fixtures come from $PGBT_FIXTURES (default build/fixtures); expected
 * build-ids come from readelf, a parser independent of libelf. */
#include "check.h"
#include "files.h"
#include "lib/found/elfimg.h"
#include "readelf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PG15 "/usr/lib/postgresql/15/bin/postgres"

static char tmpdir[] = "/tmp/pgbt-test-elf.XXXXXX";

static const char *tmpfile_path(const char *name)
{
	static char path[8][4096];
	static int slot;
	char *p = path[slot++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}


/* Opening must fail with a message "<path>: <cause...>". */
static void expect_open_fails(const char *path, const char *cause)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	char want[4200];

	CHECK(elf == NULL);
	pgbt_elf_close(elf);
	snprintf(want, sizeof(want), "%s: %s", path, cause);
	CHECK(starts_with(err.msg, want));
	if (!starts_with(err.msg, want))
		fprintf(stderr, "     got \"%s\", want \"%s...\"\n", err.msg, want);
}

static void test_symbols_fixture(void)
{
	const char *path = fixture("symbols");
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	char want_id[256], want_msg[4200], version[256];
	struct pgbt_sym sym;
	int data[4] = { 0 }, major = 0;
	long bss = 0;

	CHECK(elf != NULL);
	if (!elf) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK_STR(pgbt_elf_path(elf), path);
	CHECK(pgbt_elf_handle(elf) != NULL);
	CHECK(pgbt_elf_is_pie(elf));
	CHECK(pgbt_elf_has_debug_info(elf));
	CHECK_EQ_U(pgbt_elf_load_vaddr(elf), 0);
	readelf_build_id(path, want_id, sizeof(want_id));
	CHECK(strlen(want_id) == 40);
	CHECK_STR(pgbt_elf_build_id(elf), want_id);

	CHECK(pgbt_elf_symbol(elf, "fixture_data", &sym, &err) == 0);
	CHECK_STR(sym.table, ".symtab");
	CHECK_EQ_U(sym.type, STT_OBJECT);
	CHECK_EQ_U(sym.size, sizeof(data));
	CHECK(pgbt_elf_read(elf, sym.value, data, sizeof(data), &err) == 0);
	CHECK_EQ_U(data[0], 0x11223344);
	CHECK_EQ_U(data[2], 3);
	CHECK(data[3] == -1);
	/* An address inside the object, not only its start. */
	CHECK(pgbt_elf_read(elf, sym.value + 4, data, 4, &err) == 0);
	CHECK_EQ_U(data[0], 2);

	CHECK(pgbt_elf_symbol(elf, "fixture_func", &sym, &err) == 0);
	CHECK_EQ_U(sym.type, STT_FUNC);
	CHECK(sym.size > 0);

	CHECK(pgbt_elf_symbol(elf, "fixture_bss", &sym, &err) == 0);
	CHECK_EQ_U(sym.size, 512 * sizeof(long));
	CHECK(pgbt_elf_read(elf, sym.value, &bss, sizeof(bss), &err) == -1);
	CHECK(strstr(err.msg, "not backed by file contents") != NULL);
	CHECK(pgbt_elf_read(elf, 0xdead00000000ull, &bss, sizeof(bss), &err) == -1);
	CHECK(strstr(err.msg, "in no PT_LOAD segment") != NULL);

	/* Undefined (imported) symbols do not count, nor do unknown names. */
	CHECK(pgbt_elf_symbol(elf, "printf", &sym, &err) == -1);
	CHECK(pgbt_elf_symbol(elf, "no_such_symbol", &sym, &err) == -1);
	snprintf(want_msg, sizeof(want_msg),
		 "%s: no symbol 'no_such_symbol' in .symtab or .dynsym", path);
	CHECK_STR(err.msg, want_msg);
	CHECK(err.code == PGBT_ENOTFOUND);

	CHECK(pgbt_elf_pg_version(elf, version, sizeof(version), &major, &err) == 0);
	CHECK_STR(version, "PostgreSQL 17.11 on x86_64-pc-linux-gnu, compiled by gcc "
		  "(Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit");
	CHECK_EQ_U(major, 17);
	/* A short buffer gets a truncated, terminated copy. */
	CHECK(pgbt_elf_pg_version(elf, version, 16, &major, &err) == 0);
	CHECK_STR(version, "PostgreSQL 17.1");
	pgbt_elf_close(elf);
}

static void test_stripped_fixture(void)
{
	const char *path = fixture("symbols.stripped");
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	char want_id[256], want_msg[4200], version[256];
	struct pgbt_sym sym;
	int major = 0;

	CHECK(elf != NULL);
	if (!elf) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK(!pgbt_elf_has_debug_info(elf));
	readelf_build_id(fixture("symbols"), want_id, sizeof(want_id));
	CHECK_STR(pgbt_elf_build_id(elf), want_id);
	CHECK(pgbt_elf_symbol(elf, "fixture_data", &sym, &err) == -1);
	snprintf(want_msg, sizeof(want_msg),
		 "%s: no symbol 'fixture_data' in .symtab or .dynsym", path);
	CHECK_STR(err.msg, want_msg);
	/* Only undefined entries remain in .dynsym. */
	CHECK(pgbt_elf_symbol(elf, "printf", &sym, &err) == -1);
	CHECK(pgbt_elf_pg_version(elf, version, sizeof(version), &major, &err) == 0);
	CHECK_EQ_U(major, 17);
	pgbt_elf_close(elf);
}

static void test_no_version(void)
{
	const char *path = fixture("usdt_probes");
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf = pgbt_elf_open(path, &err);
	char want[4200], version[64];
	int major = -1;

	CHECK(elf != NULL);
	if (!elf)
		return;
	CHECK(pgbt_elf_pg_version(elf, version, sizeof(version), &major, &err) == -1);
	snprintf(want, sizeof(want), "%s: no PostgreSQL version string; not a "
		 "PostgreSQL server binary?", path);
	CHECK_STR(err.msg, want);
	CHECK(major == -1);
	pgbt_elf_close(elf);
}

/* Header fields of the (64-bit, little-endian) fixture, for patching. */
static uint64_t read_u64(const char *path, long off)
{
	FILE *f = fopen(path, "rb");
	unsigned char b[8] = { 0 };
	uint64_t v = 0;

	if (f) {
		fseek(f, off, SEEK_SET);
		if (fread(b, 1, 8, f) != 8)
			memset(b, 0, sizeof(b));
		fclose(f);
	}
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static void test_corrupt_files(void)
{
	const char *src = fixture("symbols");
	const char *text = tmpfile_path("text"), *empty = tmpfile_path("empty");
	const char *half = tmpfile_path("half"), *shoff = tmpfile_path("shoff");
	const char *phoff = tmpfile_path("phoff"), *scn = tmpfile_path("scn");
	const char *tiny = tmpfile_path("tiny");
	const unsigned char garbage[8] = { 0xef, 0xbe, 0xad, 0xde, 0xff, 0, 0, 0 };
	long size = file_size(src);
	uint64_t sh_table;

	expect_open_fails(tmpfile_path("missing"), "No such file or directory");
	expect_open_fails(tmpdir, "not a regular file");
	write_text(text, "#!/bin/sh\necho this is not an ELF file\n");
	expect_open_fails(text, "not an ELF file");
	write_text(empty, "");
	expect_open_fails(empty, "not an ELF file");

	CHECK(size > 0);
	copy_file(src, tiny, 40);
	expect_open_fails(tiny, "corrupt ELF: truncated ELF header");
	CHECK_EQ_U(copy_file(src, half, size / 2), size / 2);
	expect_open_fails(half, "corrupt ELF: section headers at ");

	copy_file(src, shoff, -1);
	patch_file(shoff, offsetof(Elf64_Ehdr, e_shoff), garbage, sizeof(garbage));
	expect_open_fails(shoff, "corrupt ELF: section headers at 0xffdeadbeef");

	copy_file(src, phoff, -1);
	patch_file(phoff, offsetof(Elf64_Ehdr, e_phoff), garbage, sizeof(garbage));
	expect_open_fails(phoff, "corrupt ELF: program headers at 0xffdeadbeef");

	/* Section 1's contents moved far past the end of the file. */
	copy_file(src, scn, -1);
	sh_table = read_u64(scn, offsetof(Elf64_Ehdr, e_shoff));
	patch_file(scn, (long)(sh_table + sizeof(Elf64_Shdr) +
			       offsetof(Elf64_Shdr, sh_offset)),
		   garbage, sizeof(garbage));
	expect_open_fails(scn, "corrupt ELF: section 1 (");

	/* Every other cut point must fail cleanly too, never crash. */
	for (long cut = 1; cut < size; cut += size / 37 + 1) {
		copy_file(src, half, cut);
		expect_open_fails(half, cut < SELFMAG ? "not an ELF file" : "corrupt ELF: ");
	}
	const char *files[] = { text, empty, half, shoff, phoff, scn, tiny };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
}

/* The distribution's server binary: stripped, symbols only in .dynsym. */
static void test_pg15(void)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_elf *elf;
	char version[256], want_id[256];
	struct pgbt_sym sym;
	int major = 0;
	long v;

	if (access(PG15, R_OK) != 0) {
		check_skip(PG15 " not present (tests/setup/install-deps.sh)");
		return;
	}
	elf = pgbt_elf_open(PG15, &err);
	CHECK(elf != NULL);
	if (!elf) {
		fprintf(stderr, "     %s\n", err.msg);
		return;
	}
	CHECK(pgbt_elf_is_pie(elf));
	CHECK(!pgbt_elf_has_debug_info(elf));
	readelf_build_id(PG15, want_id, sizeof(want_id));
	CHECK_STR(pgbt_elf_build_id(elf), want_id);
	CHECK(pgbt_elf_pg_version(elf, version, sizeof(version), &major, &err) == 0);
	CHECK_EQ_U(major, 15);
	CHECK(starts_with(version, "PostgreSQL 15."));
	CHECK(strstr(version, " on ") != NULL);
	printf("pg15: %s\n", version);

	CHECK(pgbt_elf_symbol(elf, "ShmemVariableCache", &sym, &err) == 0);
	CHECK_STR(sym.table, ".dynsym");
	CHECK_EQ_U(sym.type, STT_OBJECT);
	CHECK_EQ_U(sym.size, 8);
	/* A pointer in .bss: nothing to read from the file. */
	CHECK(pgbt_elf_read(elf, sym.value, &v, sizeof(v), &err) == -1);
	CHECK(pgbt_elf_symbol(elf, "MyProc", &sym, &err) == 0);
	CHECK_STR(sym.table, ".dynsym");
	CHECK(pgbt_elf_symbol(elf, "PostgresMain", &sym, &err) == 0);
	CHECK_EQ_U(sym.type, STT_FUNC);
	CHECK(pgbt_elf_symbol(elf, "TransamVariables", &sym, &err) == -1);
	pgbt_elf_close(elf);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_symbols_fixture();
	test_stripped_fixture();
	test_no_version();
	test_corrupt_files();
	test_pg15();
	rmdir(tmpdir);
	return check_done();
}
