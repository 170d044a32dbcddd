#include "gdb.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* gdb reads a big build's debug info before its first answer. */
#define ANSWER_TIMEOUT_MS (300 * 1000)

struct pgbt_gdb {
	pid_t child;
	int to, from;           /* its stdin, its stdout */
	char buf[1 << 17];      /* what it wrote and we have not read yet */
	char line[1 << 17];     /* one record of it (an enum's ptype is one) */
	size_t have;
	unsigned asked;         /* MI tokens used */
	unsigned before;        /* of those, at start */
	bool gone;              /* exited or stopped answering: ask no more */
	struct timespec start;
	char version[128];
};

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

/* One line of gdb's output into line (cut to len), without the newline;
 * -1 at its end or after the timeout. */
static int read_line(struct pgbt_gdb *g, char *line, size_t len)
{
	for (;;) {
		char *nl = memchr(g->buf, '\n', g->have);
		struct pollfd p = { .fd = g->from, .events = POLLIN };
		ssize_t n;

		if (nl || g->have == sizeof(g->buf)) {
			size_t used = nl ? (size_t)(nl - g->buf) + 1 : g->have;
			size_t keep = used - (nl ? 1 : 0);
			snprintf(line, len, "%.*s", (int)(keep < len ? keep : len - 1), g->buf);
			memmove(g->buf, g->buf + used, g->have - used);
			g->have -= used;
			return 0;
		}
		if (poll(&p, 1, ANSWER_TIMEOUT_MS) <= 0)
			return -1;
		n = read(g->from, g->buf + g->have, sizeof(g->buf) - g->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		g->have += (size_t)n;
	}
}

/* Appends MI c-string s (after its opening quote) to out, unescaped. */
static void unquote(const char *s, char *out, size_t len)
{
	size_t o = strlen(out);

	for (; *s && *s != '"' && o + 1 < len; s++) {
		char c = *s;
		if (c == '\\' && s[1]) {
			c = *++s;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c >= '0' && c <= '7') {
				int v = 0;
				for (int i = 0; i < 3 && *s >= '0' && *s <= '7'; i++)
					v = v * 8 + (*s++ - '0');
				s--;
				c = (char)v;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
}

static int send_line(struct pgbt_gdb *g, const char *line)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	size_t len = strlen(line), off = 0;
	int rc = 0;

	/* a gdb that died must give an error here, not kill pgbt-gen */
	sigaction(SIGPIPE, &ign, &old);
	while (off < len) {
		ssize_t n = write(g->to, line + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		off += (size_t)n;
	}
	sigaction(SIGPIPE, &old, NULL);
	return rc;
}

/* Sends MI command cmd with a token and collects its console output in
 * ret (NULL: dropped) up to its result; -1 with gdb's message on error. */
static int mi(struct pgbt_gdb *g, const char *cmd, char *ret, size_t len, struct pgbt_err *err)
{
	char *line = g->line, *tokened = NULL, tok[16];
	size_t toklen;
	unsigned token = ++g->asked;
	bool done = false;

	if (ret)
		ret[0] = '\0';
	if (g->gone)
		return pgbt_fail(err, "gdb exited or stopped answering");
	toklen = (size_t)snprintf(tok, sizeof(tok), "%u^", token);
	if (asprintf(&tokened, "%u%s\n", token, cmd) < 0)
		return pgbt_fail(err, "out of memory");
	if (send_line(g, tokened) < 0) {
		free(tokened);
		g->gone = true;
		return pgbt_fail(err, "gdb exited");
	}
	free(tokened);
	while (read_line(g, line, sizeof(g->line)) == 0) {
		if (line[0] == '~' && line[1] == '"' && ret) {
			unquote(line + 2, ret, len);
			continue;
		}
		if (strncmp(line, tok, toklen) != 0)
			continue;
		if (strncmp(line + toklen, "done", 4) == 0) {
			done = true;
			break;
		}
		if (strncmp(line + toklen, "error,msg=\"", 11) == 0) {
			char msg[sizeof(err->msg)] = "";
			unquote(line + toklen + 11, msg, sizeof(msg));
			/* gdb's words for a name it does not know */
			if (strncmp(msg, "No symbol \"", 11) == 0 || strstr(msg, " type named "))
				return pgbt_fail_code(err, PGBT_ENOTFOUND, "%s", msg);
			return pgbt_fail(err, "%s", msg);
		}
		return pgbt_fail(err, "gdb answered %.200s", line);
	}
	if (!done) {
		g->gone = true;
		return pgbt_fail(err, "gdb exited or gave no answer in %d s", ANSWER_TIMEOUT_MS / 1000);
	}
	if (ret && (len = strlen(ret)) && ret[len - 1] == '\n')
		ret[len - 1] = '\0';
	return 0;
}

int pgbt_gdb_ask(struct pgbt_gdb *g, const char *command, char *ret, size_t len,
		 struct pgbt_err *err)
{
	char quoted[1024], cmd[1100];
	size_t q = 0;

	for (const char *s = command; *s && q + 3 < sizeof(quoted); s++) {
		if (*s == '"' || *s == '\\')
			quoted[q++] = '\\';
		quoted[q++] = *s == '\n' ? ' ' : *s;   /* one MI command a line */
	}
	quoted[q] = '\0';
	snprintf(cmd, sizeof(cmd), "-interpreter-exec console \"%s\"", quoted);
	return mi(g, cmd, ret, len, err);
}

int pgbt_gdb_number(struct pgbt_gdb *g, const char *format, const char *expr,
		    long long *ret, struct pgbt_err *err)
{
	char cmd[600], out[256], *end;
	const char *v;

	snprintf(cmd, sizeof(cmd), "print%s %s", format, expr);
	if (pgbt_gdb_ask(g, cmd, out, sizeof(out), err) < 0)
		return -1;
	/* "$1 = 42", "$2 = -3", "$3 = 0x10", "$4 = (T *) 0x10" */
	v = strstr(out, " = ");
	if (!v || out[0] != '$')
		return pgbt_fail(err, "%.200s", out);
	v += 3;
	if (*v == '(' && strstr(v, ") "))
		v = strstr(v, ") ") + 2;
	errno = 0;
	*ret = *v == '-' ? strtoll(v, &end, 0) : (long long)strtoull(v, &end, 0);
	if (end == v || *end || errno)
		return pgbt_fail(err, "%.200s", out);
	return 0;
}

/* "set debug-file-directory" for $PGBT_DEBUGINFO_PATH: its absolute
 * directories (elfutils' syntax also has relative ones, which gdb
 * searches next to the binary anyway). */
static void debug_dirs(char *ret, size_t len)
{
	const char *path = getenv("PGBT_DEBUGINFO_PATH");
	char *copy, *save = NULL;

	ret[0] = '\0';
	if (!path || !*path || !(copy = strdup(path)))
		return;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if (d[0] == '/')
			snprintf(ret + strlen(ret), len - strlen(ret), "%s%s", ret[0] ? ":" : "", d);
	free(copy);
}

static pid_t spawn(char *const argv[], int *to, int *from)
{
	int in[2], out[2];
	pid_t child;

	if (pipe2(in, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	if ((child = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (child < 0) {
		close(in[1]);
		close(out[0]);
		return -1;
	}
	*to = in[1];
	*from = out[0];
	return child;
}

struct pgbt_gdb *pgbt_gdb_start(const char *path, pid_t pid, struct pgbt_err *err)
{
	struct pgbt_gdb *g = calloc(1, sizeof(*g));
	char dirs[2048], setdirs[2100], pidbuf[16], out[4096];
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *argv[16];
	int n = 0;

	if (!g)
		return pgbt_fail(err, "out of memory"), NULL;
	clock_gettime(CLOCK_MONOTONIC, &g->start);
	argv[n++] = "gdb";
	argv[n++] = "--interpreter=mi2";
	argv[n++] = "-q";
	argv[n++] = "-nx";
	argv[n++] = "-iex";
	argv[n++] = urls && *urls ? "set debuginfod enabled on" : "set debuginfod enabled off";
	argv[n++] = "-iex";
	argv[n++] = "set confirm off";
	debug_dirs(dirs, sizeof(dirs));
	if (dirs[0]) {
		snprintf(setdirs, sizeof(setdirs), "set debug-file-directory %s", dirs);
		argv[n++] = "-iex";
		argv[n++] = setdirs;
	}
	if (path) {
		argv[n++] = (char *)path;
	} else {
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
		argv[n++] = "-p";
		argv[n++] = pidbuf;
	}
	argv[n] = NULL;
	g->to = g->from = -1;
	if ((g->child = spawn(argv, &g->to, &g->from)) < 0) {
		pgbt_fail(err, "gdb: %s", strerror(errno));
		free(g);
		return NULL;
	}
	/* The first answer: gdb runs and has read the binary (what it said
	 * meanwhile is dropped); then who it is. */
	if (mi(g, "-gdb-set width 0", NULL, 0, err) < 0 ||
	    pgbt_gdb_ask(g, "show version", out, sizeof(out), err) < 0) {
		int status = 0;
		close(g->to);
		g->to = -1;
		if (waitpid(g->child, &status, 0) == g->child && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 127)
			pgbt_fail(err, "gdb is not installed (no gdb on PATH)");
		else
			pgbt_fail_prefix(err, "gdb");
		g->child = 0;
		pgbt_gdb_close(g);
		return NULL;
	}
	snprintf(g->version, sizeof(g->version), "%.*s", (int)strcspn(out, "\n"), out);
	if (!path) {
		char want[32];
		struct pgbt_err e;
		snprintf(want, sizeof(want), "process %d\n", (int)pid);
		if (pgbt_gdb_ask(g, "info proc", out, sizeof(out), &e) < 0 ||
		    strncmp(out, want, strlen(want) - 1) != 0) {
			pgbt_fail(err, "gdb could not attach to process %d (is ptrace allowed? "
				  "kernel.yama.ptrace_scope, CAP_SYS_PTRACE)", (int)pid);
			pgbt_gdb_close(g);
			return NULL;
		}
	}
	g->before = g->asked;
	return g;
}

void pgbt_gdb_close(struct pgbt_gdb *g)
{
	if (!g)
		return;
	if (g->to >= 0) {
		/* detaches from an attached process: it runs on */
		send_line(g, "-gdb-exit\n");
		close(g->to);
	}
	if (g->from >= 0)
		close(g->from);
	/* a gdb stuck detaching gets 5 s */
	for (int i = 0; g->child > 0 && i < 50; i++) {
		if (waitpid(g->child, NULL, WNOHANG) != 0)
			g->child = 0;
		else
			usleep(100 * 1000);
	}
	if (g->child > 0) {
		kill(g->child, SIGKILL);
		waitpid(g->child, NULL, 0);
	}
	free(g);
}

int pgbt_gdb_installed_version(char *ret, size_t len, struct pgbt_err *err)
{
	char *argv[] = { "gdb", "--version", NULL };
	struct pgbt_gdb *g = calloc(1, sizeof(*g));
	int status = 0, rc;

	if (!g)
		return pgbt_fail(err, "out of memory");
	if ((g->child = spawn(argv, &g->to, &g->from)) < 0) {
		free(g);
		return pgbt_fail(err, "gdb: %s", strerror(errno));
	}
	close(g->to);
	rc = read_line(g, ret, len);
	close(g->from);
	waitpid(g->child, &status, 0);
	free(g);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return pgbt_fail(err, "gdb is not installed (no gdb on PATH)");
	return rc < 0 ? pgbt_fail(err, "gdb --version said nothing") : 0;
}

const char *pgbt_gdb_version(const struct pgbt_gdb *g)
{
	return g->version;
}

unsigned pgbt_gdb_asked(const struct pgbt_gdb *g)
{
	return g->asked - g->before;
}

long pgbt_gdb_elapsed_ms(const struct pgbt_gdb *g)
{
	return ms_since(&g->start);
}
