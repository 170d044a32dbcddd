/* --check-with gdb: every fact the rendering resolved (live addresses,
 * enumerators, member offsets, type sizes: its provenance block) asked of gdb
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

/* A fact the rendering resolved (&G->m, *G, backend($p, EXPR), and the
 * offsets, sizes and enumerators DWARF gave) as one to ask gdb; false for
 * those gdb cannot check (built-in layout facts: it has no types for them;
 * sums and the builtins: derived from facts it checks). */
static bool fact_of(const struct pgbt_resolved_fact *x, pid_t postmaster, struct fact *f)
{
	const char *e = x->expr, *nl = strchr(x->line, '\n');
	char t[192], m[96];

	memset(f, 0, sizeof(*f));
	if (!nl || strncmp(x->line, "//   ", 5) != 0)
		return false;   /* said once, under an earlier reading */
	snprintf(f->line, sizeof(f->line), "%.*s", (int)(nl - x->line - 5), x->line + 5);
	f->want = strtoull(x->value, NULL, 0);
	f->pid = x->pid ? x->pid : postmaster;
	switch (x->kind) {
	case PGBT_RESOLVED_IN_BACKEND: {
		const char *comma = strchr(e, ','), *close = strrchr(e, ')');
		if (!comma || !close || close < comma)
			return false;
		comma += 1 + strspn(comma + 1, " ");
		snprintf(t, sizeof(t), "%.*s", (int)(close - comma), comma);
		add_exprs(f, t[0] == '*' ? t + 1 : t);
		return true;
	}
	case PGBT_RESOLVED_ADDRESS:
	case PGBT_RESOLVED_POINTER:
		/* pgbt's *G is the pointer stored in G: gdb's G */
		add_exprs(f, e[0] == '*' ? e + 1 : e);
		return true;
	case PGBT_RESOLVED_OFFSET:
	case PGBT_RESOLVED_SIZE:
	case PGBT_RESOLVED_ENUMERATOR:
		if (strcmp(x->how, "DWARF") != 0)
			return false;
		break;
	default:
		return false;
	}
	if (sscanf(e, "offsetof(%95[^,], %95[^)])", t, m) == 2) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "(long)&((%s *)0)->%s", t, m);
		snprintf(f->expr[1], sizeof(f->expr[1]), "(long)&((struct %s *)0)->%s", t, m);
		f->nexpr = 2;
		return true;
	}
	if (sscanf(e, "sizeof(%95[^)])", t) == 1) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "sizeof(%s)", t);
		snprintf(f->expr[1], sizeof(f->expr[1]), "sizeof(struct %s)", t);
		f->nexpr = 2;
		return true;
	}
	if (isupper((unsigned char)e[0]) && strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
	    strlen(e)) {
		snprintf(f->expr[0], sizeof(f->expr[0]), "(long)%s", e);
		f->nexpr = 1;
		return true;
	}
	return false;
}

/* The facts of the rendering to ask gdb, each once. */
static int collect(const struct pgbt_resolved *rs, pid_t postmaster, struct facts *ret,
		   struct pgbt_err *err)
{
	ret->v = calloc(MAX_FACTS, sizeof(*ret->v));
	ret->n = 0;
	if (!ret->v)
		return pgbt_fail(err, "out of memory");
	for (size_t i = 0; i < rs->n; i++) {
		struct fact f;
		bool dup = false;

		if (!fact_of(&rs->v[i], postmaster, &f))
			continue;
		for (int j = 0; j < ret->n && !dup; j++)
			dup = strcmp(ret->v[j].line, f.line) == 0;
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

int cli_check_with_gdb(const struct pgbt_target *t, const struct pgbt_resolved *rs, bool strict,
		       char **text, struct pgbt_err *err)
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
	if (collect(rs, t->pid, &fs, err) < 0)
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
