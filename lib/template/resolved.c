/* The facts of one rendering: see resolved.h. */
#include "resolved.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool holds_throughout(enum pgbt_resolved_kind k)
{
	return k == PGBT_RESOLVED_ADDRESS || k == PGBT_RESOLVED_POINTER || k == PGBT_RESOLVED_OFFSET ||
	       k == PGBT_RESOLVED_SIZE || k == PGBT_RESOLVED_ENUMERATOR;
}

static const struct pgbt_resolved_fact *find(const struct pgbt_resolved *f, const char *expr)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].expr, expr) == 0)
			return &f->v[i];
	return NULL;
}

const char *pgbt_resolved_value(const struct pgbt_resolved *f, const char *expr, pid_t pid)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct pgbt_resolved_fact *x = &f->v[i];
		if (holds_throughout(x->kind) && x->pid == pid && strcmp(x->expr, expr) == 0)
			return x->value;
	}
	return NULL;
}

static struct pgbt_resolved_fact *append(struct pgbt_resolved *f)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 32;
		struct pgbt_resolved_fact *v = realloc(f->v, cap * sizeof(*v));
		if (!v) {
			f->oom = true;
			return NULL;
		}
		f->v = v;
		f->cap = cap;
	}
	return &f->v[f->n];
}

static void keep(struct pgbt_resolved *f, enum pgbt_resolved_kind kind, const char *expr,
		 const char *value, const char *how, pid_t pid, char *line)
{
	struct pgbt_resolved_fact *x = append(f);

	if (x && line) {
		*x = (struct pgbt_resolved_fact){ .kind = kind, .pid = pid, .line = line,
					 .expr = strdup(expr), .value = strdup(value),
					 .how = strdup(how) };
		if (x->expr && x->value && x->how) {
			f->n++;
			return;
		}
		free(x->expr);
		free(x->value);
		free(x->how);
	}
	free(line);
	f->oom = true;
}

void pgbt_resolved_add(struct pgbt_resolved *f, enum pgbt_resolved_kind kind, const char *expr,
		    const char *value, const char *how, pid_t pid, const char *detail)
{
	char *line = NULL, in_pid[48];
	size_t len = 0;
	FILE *m;

	/* a second reading of the same spelling (in another process) keeps
	   its value for rendering, but the block says each spelling once */
	if (find(f, expr) && !(holds_throughout(kind) && !pgbt_resolved_value(f, expr, pid)))
		return;
	if (!how[0] && pid) {
		snprintf(in_pid, sizeof(in_pid), "read in backend PID %d", (int)pid);
		how = in_pid;
	}
	if (!(m = open_memstream(&line, &len))) {
		f->oom = true;
		return;
	}
	if (!find(f, expr)) {
		fprintf(m, "//   %s = %s", expr, value);
		if (how[0])
			fprintf(m, " (%s)", how);
		fprintf(m, "\n%s", detail ? detail : "");
	}
	fclose(m);
	keep(f, kind, expr, value, how, pid, line);
}

void pgbt_resolved_add_line(struct pgbt_resolved *f, enum pgbt_resolved_kind kind, const char *expr,
			 const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	keep(f, kind, expr, "", "", 0, line);
}

void pgbt_resolved_write(const struct pgbt_resolved *f, struct pgbt_buf *out)
{
	for (size_t i = 0; i < f->n; i++)
		pgbt_buf_add(out, f->v[i].line, strlen(f->v[i].line));
}

void pgbt_resolved_free(struct pgbt_resolved *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].expr);
		free(f->v[i].value);
		free(f->v[i].how);
		free(f->v[i].line);
	}
	free(f->v);
	*f = (struct pgbt_resolved){0};
}
