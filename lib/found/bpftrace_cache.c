#include "bpftrace_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_FILE "bpftrace-versions"
#define MAX_ENTRIES 32
/* "1 TAB path TAB size TAB sec.nsec TAB line": a path, 3 numbers, a line */
#define ENTRY_MAX (PATH_MAX + 512)

/* What an answer is remembered under: the file as it is now. */
struct key {
	char path[PATH_MAX];
	uint64_t size;
	int64_t sec;
	long nsec;
};

static bool key_of(const char *prog, struct key *k)
{
	struct stat st;

	if (!realpath(prog, k->path) || stat(k->path, &st) < 0)
		return false;
	k->size = (uint64_t)st.st_size;
	k->sec = (int64_t)st.st_mtim.tv_sec;
	k->nsec = st.st_mtim.tv_nsec;
	return true;
}

/* A version line as bpftrace prints it: printable ASCII, no tab. */
static bool plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/* Splits one line of the file (newline dropped) into its key and answer;
 * false for anything that is not a whole entry of ours. */
static bool parse_entry(char *s, struct key *k, const char **answer)
{
	char *f[5], *end;
	int n = 0;

	for (char *p = s; n < 5; n++) {
		f[n] = p;
		if (n == 4)
			break;
		if (!(p = strchr(p, '\t')))
			return false;
		*p++ = '\0';
	}
	if (strcmp(f[0], "1") != 0 || f[1][0] != '/' || strlen(f[1]) >= sizeof(k->path) ||
	    !plain(f[4]) || strchr(f[4], '\t'))
		return false;
	snprintf(k->path, sizeof(k->path), "%s", f[1]);
	errno = 0;
	if (f[2][0] < '0' || f[2][0] > '9')
		return false;
	k->size = strtoull(f[2], &end, 10);
	if (errno || *end)
		return false;
	if ((f[3][0] < '0' || f[3][0] > '9') && f[3][0] != '-')
		return false;
	k->sec = strtoll(f[3], &end, 10);
	if (errno || *end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	k->nsec = strtol(end + 1, &end, 10);
	if (errno || *end || k->nsec < 0 || k->nsec > 999999999)
		return false;
	*answer = f[4];
	return true;
}

/* The cache file, when it is ours alone to write: another user's, or one
 * others may write, could name any version. */
static FILE *open_cache(const char *dir)
{
	char path[PATH_MAX + 32];
	struct stat st;
	FILE *f;

	if (!dir || !*dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/" CACHE_FILE, dir);
	if (!(f = fopen(path, "r")))
		return NULL;
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		fclose(f);
		return NULL;
	}
	return f;
}

/* The next line of f into buf, newline dropped; a line too long for buf
 * is skipped whole and comes back as "". false at the end. */
static bool next_line(FILE *f, char *buf, size_t len)
{
	size_t l;

	if (!fgets(buf, (int)len, f))
		return false;
	l = strlen(buf);
	if (l && buf[l - 1] == '\n') {
		buf[l - 1] = '\0';
		return true;
	}
	if (!feof(f)) {
		int c;
		while ((c = getc(f)) != EOF && c != '\n')
			;
		buf[0] = '\0';
	}
	return true;
}

void pgbt_cache_dir(char *ret, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		snprintf(ret, len, "%s/pgbt", xdg);
	else if (home && home[0] == '/')
		snprintf(ret, len, "%s/.cache/pgbt", home);
	else if (len)
		ret[0] = '\0';
}

int pgbt_bpftrace_cache_get(const char *dir, const char *prog, char *line, size_t len)
{
	char buf[ENTRY_MAX];
	struct key want, k;
	const char *answer;
	FILE *f;
	int rc = -1;

	if (!key_of(prog, &want) || !(f = open_cache(dir)))
		return -1;
	while (rc < 0 && next_line(f, buf, sizeof(buf)))
		if (parse_entry(buf, &k, &answer) && strcmp(k.path, want.path) == 0 &&
		    k.size == want.size && k.sec == want.sec && k.nsec == want.nsec &&
		    strlen(answer) < len) {
			snprintf(line, len, "%s", answer);
			rc = 0;
		}
	fclose(f);
	return rc;
}

/* mkdir -p for the last two levels ($HOME/.cache/pgbt): private. */
static void make_dir(const char *dir)
{
	char parent[PATH_MAX];
	char *slash;

	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return;
	snprintf(parent, sizeof(parent), "%s", dir);
	if ((slash = strrchr(parent, '/')) && slash != parent) {
		*slash = '\0';
		mkdir(parent, 0700);
	}
	mkdir(dir, 0700);
}

void pgbt_bpftrace_cache_put(const char *dir, const char *prog, const char *line)
{
	char buf[ENTRY_MAX];
	char tmp[PATH_MAX + 32], path[PATH_MAX + 32];
	struct key want, k;
	const char *answer;
	int fd, kept = 0;
	bool ok;
	FILE *old, *out;

	if (!dir || !*dir || !plain(line) || strchr(line, '\t') || !key_of(prog, &want) ||
	    strchr(want.path, '\t') || strchr(want.path, '\n'))
		return;
	make_dir(dir);
	snprintf(tmp, sizeof(tmp), "%s/." CACHE_FILE ".XXXXXX", dir);
	snprintf(path, sizeof(path), "%s/" CACHE_FILE, dir);
	if ((fd = mkstemp(tmp)) < 0)
		return;
	if (!(out = fdopen(fd, "w"))) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(out, "1\t%s\t%" PRIu64 "\t%" PRId64 ".%09ld\t%s\n", want.path, want.size,
		want.sec, want.nsec, line);
	/* the other programs' answers that still parse, newest first */
	if ((old = open_cache(dir))) {
		while (kept < MAX_ENTRIES - 1 && next_line(old, buf, sizeof(buf))) {
			char copy[ENTRY_MAX];

			snprintf(copy, sizeof(copy), "%s", buf);
			if (parse_entry(copy, &k, &answer) && strcmp(k.path, want.path) != 0) {
				fprintf(out, "%s\n", buf);
				kept++;
			}
		}
		fclose(old);
	}
	ok = fflush(out) == 0 && !ferror(out);
	if (fclose(out) != 0 || !ok || rename(tmp, path) < 0)
		unlink(tmp);
}
