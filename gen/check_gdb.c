/* --check-with gdb: every fact in a rendered script's provenance block
 * (live addresses, enumerators, member offsets, type sizes) asked of gdb
 * attached to the process it was read from, one batch per process, and
 * compared. gdb is a second, independent reader of the same debug info
 * and memory: a user about to put a watchpoint on a production server can
 * see that both agree before running anything. */
#include "cli.h"

#include "lib/types/gdb.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FACTS 512
#define MAX_ALTS 4

struct fact {
	char line[256];               /* the provenance line, without "//   " */
	char expr[MAX_ALTS][192];     /* what to print in gdb, in order of preference */
	int nexpr;
	uint64_t want;
	pid_t pid;                    /* the process to ask */
	bool answered;
	uint64_t got;
};

struct facts {
	struct fact *v;
	int n;
};

/* Every spelling of e with each "(A|B)" group replaced by one of its
 * names ("&(T|S)->(x|y)": four), in order of preference; prefix is what
 * is spelled so far. At most MAX_ALTS; e itself when it has no group. */
static void expand(struct fact *f, const char *prefix, const char *e)
{
	const char *open = strstr(e, "("), *bar = open ? strchr(open, '|') : NULL;
	const char *close = bar ? strchr(bar, ')') : NULL;
	char next[192];

	if (!close || memchr(open, ')', (size_t)(bar - open))) {
		if (f->nexpr < MAX_ALTS)
			snprintf(f->expr[f->nexpr++], sizeof(f->expr[0]), "%s%s", prefix, e);
		return;
	}
	for (const char *a = open + 1; a < close;) {
		const char *end = memchr(a, '|', (size_t)(close - a));

		if (!end)
			end = close;
		snprintf(next, sizeof(next), "%s%.*s%.*s", prefix, (int)(open - e), e,
			 (int)(end - a), a);
		expand(f, next, close + 1);
		a = end + 1;
	}
}

static void add_exprs(struct fact *f, const char *e)
{
	f->nexpr = 0;
	expand(f, "", e);
}

/* One provenance line ("&G->m = 0x..", "NAME = 0x.. (DWARF)",
 * "offsetof(T, m) = N (DWARF)", "sizeof(T) = N (DWARF)",
 * "backend($pid, *G) = 0x.. (read in backend PID N)", and "*G = 0x.. (read
 * in backend PID N)" inside it) as a fact to ask;
 * false for lines that state no such fact. */
static bool parse_fact(const char *line, pid_t postmaster, struct fact *f)
{
	char lhs[192], rhs[64], rest[96] = "", t[192], m[96];
	const char *eq = strstr(line, " = ");
	int pid;

	if (!eq || (size_t)(eq - line) >= sizeof(lhs))
		return false;
	memset(f, 0, sizeof(*f));
	snprintf(f->line, sizeof(f->line), "%s", line);
	snprintf(lhs, sizeof(lhs), "%.*s", (int)(eq - line), line);
	if (sscanf(eq + 3, "%63s %95[^\n]", rhs, rest) < 1)
		return false;
	f->want = strtoull(rhs, NULL, 0);
	f->pid = postmaster;
	if (sscanf(lhs, "backend($pid, %191[^\n]", t) == 1 &&
	    sscanf(rest, "(read in backend PID %d)", &pid) == 1) {
		t[strlen(t) - 1] = '\0';         /* the closing ')' */
		f->pid = pid;
		add_exprs(f, t[0] == '*' ? t + 1 : t);
		return true;
	}
	if ((rest[0] == '\0' || sscanf(rest, "(read in backend PID %d)", &pid) == 1) &&
	    (lhs[0] == '&' || lhs[0] == '*')) {
		/* pgbt's *G is the pointer stored in G: gdb's G; read inside
		   backend(), it is that process's */
		if (rest[0])
			f->pid = pid;
		add_exprs(f, lhs[0] == '*' ? lhs + 1 : lhs);
		return true;
	}
	if (strcmp(rest, "(DWARF)") != 0)
		return false;   /* layout facts: gdb has no types to check them with */
	if (sscanf(lhs, "offsetof(%95[^,], %95[^)])", t, m) == 2) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "(long)&((%s *)0)->%s", t, m);
		snprintf(f->expr[1], sizeof(f->expr[1]), "(long)&((struct %s *)0)->%s", t, m);
		f->nexpr = 2;
		return true;
	}
	if (sscanf(lhs, "sizeof(%95[^)])", t) == 1) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "sizeof(%s)", t);
		snprintf(f->expr[1], sizeof(f->expr[1]), "sizeof(struct %s)", t);
		f->nexpr = 2;
		return true;
	}
	if (isupper((unsigned char)lhs[0]) && strspn(lhs, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
	    strlen(lhs)) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "(long)%s", lhs);
		f->nexpr = 1;
		return true;
	}
	return false;
}

/* The facts of text's provenance lines ("//   " and a fact, not the
 * indented detail lines under them), each once. */
static int collect(const char *text, pid_t postmaster, struct facts *ret, struct pgbt_err *err)
{
	ret->v = calloc(MAX_FACTS, sizeof(*ret->v));
	ret->n = 0;
	if (!ret->v)
		return pgbt_fail(err, "out of memory");
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *nl = strchr(p, '\n');
		char line[300];
		struct fact f;
		bool dup = false;

		if (strncmp(p, "//   ", 5) != 0 || p[5] == ' ')
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)((nl ? nl : p + strlen(p)) - p - 5), p + 5);
		if (!parse_fact(line, postmaster, &f))
			continue;
		for (int i = 0; i < ret->n && !dup; i++)
			dup = strcmp(ret->v[i].line, f.line) == 0;
		if (dup)
			continue;
		if (ret->n == MAX_FACTS)
			return pgbt_fail(err, "--check-with gdb: more than %d facts", MAX_FACTS);
		ret->v[ret->n++] = f;
	}
	return 0;
}

/* Asks gdb, attached to pid, every fact of fs for that process: each
 * spelling in turn until one is answered. */
static int ask_gdb(pid_t pid, struct facts *fs, char *version, size_t vlen,
		   struct pgbt_err *err)
{
	struct pgbt_gdb *g = pgbt_gdb_start(NULL, pid, err);

	if (!g)
		return pgbt_fail_prefix(err, "--check-with gdb");
	if (!version[0])
		snprintf(version, vlen, "%s", pgbt_gdb_version(g));
	for (int i = 0; i < fs->n; i++) {
		struct fact *f = &fs->v[i];
		for (int a = 0; a < f->nexpr && f->pid == pid && !f->answered; a++) {
			long long v;
			struct pgbt_err refused;
			if (pgbt_gdb_number(g, "/x", f->expr[a], &v, &refused) == 0) {
				f->got = (uint64_t)v;
				f->answered = true;
			}
		}
	}
	pgbt_gdb_close(g);
	return 0;
}

/* Inserts line after the last line of text's provenance block. */
static int add_provenance_line(char **text, const char *line, struct pgbt_err *err)
{
	char *first = strstr(*text, "\n//   "), *at, *out;

	if (!first)
		return pgbt_fail(err, "--check-with gdb: the script has no provenance block");
	at = first + 1;
	while (strncmp(at, "//", 2) == 0 && strchr(at, '\n'))
		at = strchr(at, '\n') + 1;
	if (asprintf(&out, "%.*s%s\n%s", (int)(at - *text), *text, line, at) < 0)
		return pgbt_fail(err, "out of memory");
	free(*text);
	*text = out;
	return 0;
}

int cli_check_with_gdb(const struct pgbt_target *t, bool strict, char **text,
		       struct pgbt_err *err)
{
	struct facts fs;
	struct timespec t0, t1;
	char version[128] = "", line[300], *report = NULL;
	size_t rlen = 0;
	int differ = 0, unanswered = 0, rc = -1;
	FILE *r;

	if (!t->pid)
		return pgbt_fail(err, "--check-with gdb needs a running server (-p or -D), not --bin");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (collect(*text, t->pid, &fs, err) < 0)
		goto out;
	for (int i = 0; i < fs.n; i++) {
		bool asked = false;
		for (int j = 0; j < i && !asked; j++)
			asked = fs.v[j].pid == fs.v[i].pid;
		if (!asked && ask_gdb(fs.v[i].pid, &fs, version, sizeof(version), err) < 0)
			goto out;
	}
	if (!version[0] && pgbt_gdb_installed_version(version, sizeof(version), err) < 0) {
		pgbt_fail_prefix(err, "--check-with gdb");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!(r = open_memstream(&report, &rlen))) {
		pgbt_fail(err, "out of memory");
		goto out;
	}
	/* The first few, one a line (the error message holds about 1 kB). */
	for (int i = 0, shown = 0; i < fs.n; i++) {
		bool bad = !fs.v[i].answered ? strict : fs.v[i].got != fs.v[i].want;
		if (!fs.v[i].answered)
			unanswered++;
		else if (fs.v[i].got != fs.v[i].want)
			differ++;
		if (!bad || ++shown > 6)
			continue;
		if (!fs.v[i].answered)
			fprintf(r, "\n  %.120s: gdb gave no answer", fs.v[i].line);
		else
			fprintf(r, "\n  %.120s: pgbt-gen 0x%" PRIx64 ", gdb 0x%" PRIx64, fs.v[i].line,
				fs.v[i].want, fs.v[i].got);
	}
	if (differ + (strict ? unanswered : 0) > 6)
		fprintf(r, "\n  and %d more", differ + (strict ? unanswered : 0) - 6);
	fclose(r);
	if (differ || (strict && unanswered)) {
		pgbt_fail(err, "--check-with gdb: %d of %d facts differ from gdb's answers%s%s",
			  differ, fs.n, strict && unanswered ? " or have none" : "", report);
		goto out;
	}
	snprintf(line, sizeof(line), "//   checked with %s: %d facts equal its answers, "
		 "%d it could not answer (no debug info), in %ld ms", version, fs.n - unanswered,
		 unanswered, (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	rc = add_provenance_line(text, line, err);
out:
	free(report);
	free(fs.v);
	return rc;
}
