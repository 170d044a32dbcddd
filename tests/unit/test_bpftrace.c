/* The bpftrace a script is rendered for (lib/found/bpftrace.c) and the
 * cache of its --version answers (lib/found/bpftrace_cache.c), on fake
 * bpftraces: shell scripts that print a version and count their runs.
 * An answer holds while the file keeps its size and mtime; a corrupt,
 * foreign or unwritable cache is passed over, never an error. */
#include "check.h"
#include "lib/found/bpftrace.h"
#include "lib/found/bpftrace_cache.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/pgbt-bpftrace-XXXXXX";
static char prog[PATH_MAX], runs[PATH_MAX], cache_file[PATH_MAX];

/* The fake bpftrace, answering "bpftrace VERSION" (its mtime: now). */
static void write_fake(const char *version)
{
	FILE *f = fopen(prog, "w");

	if (!f) {
		CHECK(!"write the fake bpftrace");
		return;
	}
	fprintf(f, "#!/bin/sh\necho run >>%s\necho 'bpftrace %s'\n", runs, version);
	fclose(f);
	chmod(prog, 0755);
}

static void set_mtime(long sec)
{
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	CHECK(utimensat(AT_FDCWD, prog, t, 0) == 0);
}

/* How many times the fake ran so far. */
static int ran(void)
{
	FILE *f = fopen(runs, "r");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* pgbt_bpftrace_find on the fake: its version, and how many runs it took. */
static void expect_find(const char *what, int major, int minor, int patch, int runs_after)
{
	struct pgbt_bpftrace bt;
	struct pgbt_err err = { .msg = "" };
	char how[PATH_MAX + 64];

	if (pgbt_bpftrace_find(prog, &bt, &err) < 0) {
		CHECK(!"pgbt_bpftrace_find");
		fprintf(stderr, "     %s: %s\n", what, err.msg);
		return;
	}
	CHECK_EQ_U(bt.version[0], major);
	CHECK_EQ_U(bt.version[1], minor);
	CHECK_EQ_U(bt.version[2], patch);
	/* the same words whether asked or remembered */
	snprintf(how, sizeof(how), "v%d.%d.%d (%s --version)", major, minor, patch, prog);
	CHECK_STR(bt.how, how);
	CHECK_STR(bt.program, prog);
	if (ran() != runs_after)
		fprintf(stderr, "     %s:\n", what);
	CHECK_EQ_U(ran(), runs_after);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
	CHECK(f != NULL);
}

static void test_cache_dir(void)
{
	char got[PATH_MAX];

	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	pgbt_cache_dir(got, sizeof(got));
	CHECK_STR(got, "/x/cache/pgbt");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	pgbt_cache_dir(got, sizeof(got));
	CHECK_STR(got, "/home/u/.cache/pgbt");
	/* a relative XDG_CACHE_HOME is not one (the spec says to ignore it) */
	setenv("XDG_CACHE_HOME", "rel", 1);
	pgbt_cache_dir(got, sizeof(got));
	CHECK_STR(got, "/home/u/.cache/pgbt");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	pgbt_cache_dir(got, sizeof(got));
	CHECK_STR(got, "");
}

int main(void)
{
	char xdg[PATH_MAX], home[PATH_MAX], line[256], path[PATH_MAX + 64];
	struct stat st;
	int n = 0;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return check_done();
	}
	snprintf(prog, sizeof(prog), "%s/bpftrace", dir);
	snprintf(runs, sizeof(runs), "%s/runs", dir);
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(cache_file, sizeof(cache_file), "%s/pgbt/bpftrace-versions", xdg);
	test_cache_dir();
	setenv("XDG_CACHE_HOME", xdg, 1);

	/* asked once, then remembered */
	write_fake("v0.23.2");
	set_mtime(1000000000);
	expect_find("first asking", 0, 23, 2, ++n);
	CHECK(stat(cache_file, &st) == 0 && S_ISREG(st.st_mode));
	expect_find("remembered", 0, 23, 2, n);
	expect_find("remembered again", 0, 23, 2, n);

	/* a new file: another size */
	write_fake("v0.20.10");
	set_mtime(1000000000);
	expect_find("size changed", 0, 20, 10, ++n);
	expect_find("size changed, remembered", 0, 20, 10, n);
	/* the same size, another mtime */
	write_fake("v0.21.10");
	set_mtime(1000000001);
	expect_find("mtime changed", 0, 21, 10, ++n);
	expect_find("mtime changed, remembered", 0, 21, 10, n);
	/* ... down to the nanosecond */
	write_fake("v0.22.10");
	{
		struct timespec t[2] = { { 1000000001, 5 }, { 1000000001, 5 } };
		CHECK(utimensat(AT_FDCWD, prog, t, 0) == 0);
	}
	expect_find("mtime's nanoseconds changed", 0, 22, 10, ++n);

	/* the cache as the cache file says, through the API */
	CHECK(pgbt_bpftrace_cache_get(xdg, prog, line, sizeof(line)) < 0);   /* not the dir */
	snprintf(path, sizeof(path), "%s/pgbt", xdg);
	CHECK(pgbt_bpftrace_cache_get(path, prog, line, sizeof(line)) == 0);
	CHECK_STR(line, "bpftrace v0.22.10");

	/* a corrupt file is passed over, then replaced by a good one */
	write_file(cache_file, "garbage\n\t\t\t\t\n1\tnot-a-path\t1\t1.0\tbpftrace v9.9.9\n"
		   "1\t/x\tabc\t1.0\tbpftrace v9.9.9\n\x01\x02\n");
	expect_find("corrupt cache", 0, 22, 10, ++n);
	expect_find("rewritten cache", 0, 22, 10, n);
	/* a line for this file as it is, with a tab too many: not ours */
	{
		char bad[PATH_MAX * 2];
		char real[PATH_MAX];
		CHECK(realpath(prog, real) != NULL);
		CHECK(stat(prog, &st) == 0);
		snprintf(bad, sizeof(bad), "1\t%s\t%lld\t1000000001.000000005\tbpftrace\tv1.2.3\n",
			 real, (long long)st.st_size);
		write_file(cache_file, bad);
		expect_find("a line with a tab too many", 0, 22, 10, ++n);
		/* a cut line (no newline at the end of a file) still parses */
		snprintf(bad, sizeof(bad), "1\t%s\t%lld\t1000000001.000000005\tbpftrace v0.22.10",
			 real, (long long)st.st_size);
		write_file(cache_file, bad);
		expect_find("a last line without newline", 0, 22, 10, n);
	}
	/* a file others may write is not trusted */
	chmod(cache_file, 0666);
	expect_find("group/other-writable cache", 0, 22, 10, ++n);
	CHECK(stat(cache_file, &st) == 0 && !(st.st_mode & 0022));
	/* another user's file is not trusted (root can make one) */
	if (geteuid() == 0) {
		CHECK(chown(cache_file, 65534, 65534) == 0);
		expect_find("another user's cache", 0, 22, 10, ++n);
		CHECK(stat(cache_file, &st) == 0 && st.st_uid == 0);
	} else {
		check_skip("a cache file of another user: needs root to make one");
	}

	/* an unwritable cache directory: asked every time, no error */
	snprintf(path, sizeof(path), "%s/file", dir);
	write_file(path, "not a directory\n");
	setenv("XDG_CACHE_HOME", path, 1);
	expect_find("cache under a file", 0, 22, 10, ++n);
	expect_find("cache under a file, again", 0, 22, 10, ++n);

	/* no XDG_CACHE_HOME: $HOME/.cache/pgbt, made with its parent */
	unsetenv("XDG_CACHE_HOME");
	snprintf(home, sizeof(home), "%s/home", dir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	expect_find("HOME's cache", 0, 22, 10, ++n);
	expect_find("HOME's cache, remembered", 0, 22, 10, n);
	snprintf(path, sizeof(path), "%s/.cache/pgbt/bpftrace-versions", home);
	CHECK(stat(path, &st) == 0);
	/* nowhere to keep it: asked */
	unsetenv("HOME");
	expect_find("no cache dir", 0, 22, 10, ++n);

	/* a failing program is an error, and nothing is remembered of it */
	setenv("HOME", home, 1);
	{
		struct pgbt_bpftrace bt;
		struct pgbt_err err = { .msg = "" };
		FILE *f = fopen(prog, "w");
		if (f) {
			fprintf(f, "#!/bin/sh\necho run >>%s\necho 'not bpftrace'\n", runs);
			fclose(f);
		}
		CHECK(pgbt_bpftrace_find(prog, &bt, &err) < 0);
		CHECK(strstr(err.msg, "is not a bpftrace version") != NULL);
		CHECK(pgbt_bpftrace_find(prog, &bt, &err) < 0);
		CHECK_EQ_U(ran(), n + 2);
	}

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_done();
}
