/* File helpers for unit tests: where a built fixture is, and for tests
 * that damage copies of fixtures: copy, overwrite bytes at an offset,
 * write a small text file. */
#ifndef PGBT_TEST_FILES_H
#define PGBT_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Path of a fixture built by the Makefile ($PGBT_FIXTURES or
 * build/fixtures); four slots so a call can use a few at once. */
static inline const char *fixture(const char *name)
{
	static char path[4][4096];
	static int slot;
	const char *dir = getenv("PGBT_FIXTURES");
	char *p = path[slot++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir && *dir ? dir : "build/fixtures", name);
	return p;
}

/* Copies the first len bytes of src (all of it when len < 0) to dst and
 * returns how many it copied. */
static inline long copy_file(const char *src, const char *dst, long len)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	long n = 0;
	int c;

	while (in && out && (len < 0 || n < len) && (c = getc(in)) != EOF) {
		putc(c, out);
		n++;
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return n;
}

/* Overwrites n bytes at file offset off. */
static inline void patch_file(const char *path, long off, const void *bytes, size_t n)
{
	FILE *f = fopen(path, "r+b");

	if (!f)
		return;
	fseek(f, off, SEEK_SET);
	fwrite(bytes, 1, n, f);
	fclose(f);
}

static inline void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static inline long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

#endif
