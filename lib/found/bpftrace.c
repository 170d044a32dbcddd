#include "bpftrace.h"

#include "bpftrace_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int pgbt_bpftrace_parse_version(const char *s, int ret[3])
{
	int n = 0, v[3] = {0, 0, 0};

	if (*s == 'v')
		s++;
	while (n < 3) {
		char *end;
		long x;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		x = strtol(s, &end, 10);
		if (errno || x > 9999)
			return -1;
		v[n++] = (int)x;
		s = end;
		if (*s != '.')
			break;
		s++;
	}
	/* "0.23" at least; a suffix such as "-rc1" or "+git" is allowed */
	if (n < 2 || (*s && *s != '-' && *s != '+' && *s != '~'))
		return -1;
	memcpy(ret, v, sizeof(v));
	return 0;
}

int pgbt_bpftrace_cmp(const struct pgbt_bpftrace *bt, const int v[3])
{
	for (int i = 0; i < 3; i++)
		if (bt->version[i] != v[i])
			return bt->version[i] < v[i] ? -1 : 1;
	return 0;
}

bool pgbt_bpftrace_scopes_uprobes(const struct pgbt_bpftrace *bt)
{
	static const int v0_20[3] = { 0, 20, 0 };

	return bt && pgbt_bpftrace_cmp(bt, v0_20) >= 0;
}

/* Whether path names an executable file, searching PATH for a bare name
 * ("bpftrace"); the full path in ret. */
static bool find_program(const char *name, char *ret, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(ret, len, "%s", name);
		return access(ret, X_OK) == 0;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(ret, len, "%.*s/%s", (int)n, n ? p : ".", name);
		if (access(ret, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* The first line of "PROGRAM --version", run without a shell. */
static int ask_version(const char *prog, char *line, size_t len, struct pgbt_err *err)
{
	int fds[2], status;
	pid_t child;
	ssize_t n;
	size_t got = 0;

	if (pipe(fds) < 0)
		return pgbt_fail(err, "%s: pipe: %s", prog, strerror(errno));
	child = fork();
	if (child < 0) {
		close(fds[0]);
		close(fds[1]);
		return pgbt_fail(err, "%s: fork: %s", prog, strerror(errno));
	}
	if (child == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "r", stdin))
			_exit(127);
		execl(prog, prog, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got + 1 < len && (n = read(fds[0], line + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return pgbt_fail(err, "%s --version failed (exit status %d): not a runnable bpftrace",
				 prog, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

int pgbt_bpftrace_find(const char *spec, struct pgbt_bpftrace *ret, struct pgbt_err *err)
{
	char prog[PATH_MAX], line[256], cache[PATH_MAX];
	const char *v;
	bool cached;

	memset(ret, 0, sizeof(*ret));
	if (spec && pgbt_bpftrace_parse_version(spec, ret->version) == 0) {
		snprintf(ret->how, sizeof(ret->how), "v%d.%d.%d, as asked (--bpftrace %s)",
			 ret->version[0], ret->version[1], ret->version[2], spec);
		return 0;
	}
	if (!spec && !find_program("bpftrace", prog, sizeof(prog))) {
		pgbt_bpftrace_parse_version(PGBT_BPFTRACE_OLDEST, ret->version);
		snprintf(ret->how, sizeof(ret->how), "none on PATH: rendered for v%s and later",
			 PGBT_BPFTRACE_OLDEST);
		return 0;
	}
	if (spec && !find_program(spec, prog, sizeof(prog)))
		return pgbt_fail(err, "--bpftrace %s: no such program (give a path to bpftrace "
				 "or a version such as 0.23)", spec);
	/* its answer as remembered for this file, else asked (and remembered
	   when it is a version) */
	pgbt_cache_dir(cache, sizeof(cache));
	cached = pgbt_bpftrace_cache_get(cache, prog, line, sizeof(line)) == 0;
	if (!cached && ask_version(prog, line, sizeof(line), err) < 0)
		return -1;
	/* "bpftrace v0.23.2" */
	v = strncmp(line, "bpftrace ", 9) == 0 ? line + 9 : NULL;
	if (!v || pgbt_bpftrace_parse_version(v, ret->version) < 0)
		return pgbt_fail(err, "%s --version: '%.60s' is not a bpftrace version", prog, line);
	if (!cached)
		pgbt_bpftrace_cache_put(cache, prog, line);
	snprintf(ret->how, sizeof(ret->how), "%s (%s --version)", v, prog);
	snprintf(ret->program, sizeof(ret->program), "%s", spec ? spec : "bpftrace");
	return 0;
}
