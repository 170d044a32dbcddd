/* A minimal test harness for the unit tests: CHECK() records a pass or a
 * failure with its location, check_skip() a check that cannot run here;
 * check_done() prints the closing line "N passed, N failed, N skipped"
 * that tests/run adds up, and gives the exit code. */
#ifndef PGBT_CHECK_H
#define PGBT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed, check_skipped;

#define CHECK(cond) check_one(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_EQ_U(a, b) check_eq_u((unsigned long long)(a), (unsigned long long)(b), #a " == " #b, __FILE__, __LINE__)
#define CHECK_STR(a, b) check_str((a), (b), #a " == " #b, __FILE__, __LINE__)

static inline void check_one(int ok, const char *what, const char *file, int line)
{
	if (ok) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
	}
}

static inline void check_eq_u(unsigned long long a, unsigned long long b, const char *what,
			      const char *file, int line)
{
	check_one(a == b, what, file, line);
	if (a != b)
		fprintf(stderr, "     got %llu (0x%llx), want %llu (0x%llx)\n", a, a, b, b);
}

static inline void check_str(const char *a, const char *b, const char *what, const char *file, int line)
{
	int ok = a && b && strcmp(a, b) == 0;

	check_one(ok, what, file, line);
	if (!ok)
		fprintf(stderr, "     got \"%s\", want \"%s\"\n", a ? a : "(null)", b ? b : "(null)");
}

/* A check that cannot run here: named on stdout, counted, never a pass. */
static inline void check_skip(const char *why)
{
	check_skipped++;
	printf("skip: %s\n", why);
}

static inline int check_done(void)
{
	printf("%d passed, %d failed, %d skipped\n", check_passed, check_failed, check_skipped);
	return check_failed ? 1 : 0;
}

#endif
