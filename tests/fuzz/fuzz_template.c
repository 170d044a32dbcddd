/* libFuzzer target: load a template with its fragments (lib/template/template_include.c),
 * ask its needs, and render it for an offline target (a stripped fixture:
 * types from the built-in layout, no process).
 *
 * Input: the template's text, then each fragment after a line
 * "%%% NAME" (pgbt_template_load asks for fragments by NAME). The
 * template's name is the one its header gives (" * NAME<tab>summary"). */
#include "lib/template/template.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEPARATOR "\n%%% "

static struct pgbt_target target;

struct input {
	const char *data;
	size_t size;
};

/* The fragment section named name: its text up to the next separator. */
static int read_fragment(void *ctx, const char *name, char **ret, size_t *ret_len,
			 struct pgbt_err *err)
{
	const struct input *in = ctx;
	const char *end = in->data + in->size, *p = in->data;
	size_t n = strlen(name);

	while ((p = memmem(p, end - p, SEPARATOR, strlen(SEPARATOR)))) {
		p += strlen(SEPARATOR);
		if ((size_t)(end - p) > n && memcmp(p, name, n) == 0 && p[n] == '\n') {
			const char *text = p + n + 1;
			const char *stop = memmem(text, end - text, SEPARATOR, strlen(SEPARATOR));
			size_t len = (stop ? stop : end) - text;

			*ret = malloc(len + 1);
			if (!*ret)
				return pgbt_fail(err, "out of memory");
			memcpy(*ret, text, len);
			(*ret)[len] = '\0';
			*ret_len = len;
			return 0;
		}
	}
	return pgbt_fail(err, "no fragment %s", name);
}

/* NAME from the first "\n * NAME\t", so that the header check passes. */
static void header_name(const char *text, size_t len, char *ret, size_t size)
{
	const char *p = memmem(text, len, "\n * ", 4), *tab;

	snprintf(ret, size, "fuzz");
	if (!p)
		return;
	p += 4;
	tab = memchr(p, '\t', text + len - p);
	if (tab && (size_t)(tab - p) < size)
		snprintf(ret, size, "%.*s", (int)(tab - p), p);
}

/* {{if watchpoints}} without a perf event per input: the answer alternates. */
static int watchpoints_alternate(struct pgbt_err *err)
{
	static int n;

	if (n++ % 2)
		return 1;
	pgbt_fail(err, "watchpoints do not fire (fuzz)");
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *binary = getenv("PGBT_FUZZ_BINARY");
	struct pgbt_err err;

	(void)argc;
	(void)argv;
	if (!binary || !*binary)
		binary = "build/fixtures/fake_postgres.stripped";
	if (pgbt_target_open_binary(&target, binary, &err) < 0) {
		fprintf(stderr, "fuzz_template: %s (set PGBT_FUZZ_BINARY)\n", err.msg);
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { (const char *)data, size };
	const char *sep = memmem(data, size, SEPARATOR, strlen(SEPARATOR));
	size_t len = sep ? (size_t)(sep - in.data) : size;
	struct pgbt_template tpl;
	struct pgbt_needs needs;
	struct pgbt_err err;
	char name[64], *out = NULL;

	header_name(in.data, len, name, sizeof(name));
	if (pgbt_template_load(name, "fuzz", in.data, len, read_fragment, &in, &tpl, &err) < 0)
		return 0;
	pgbt_template_needs(&tpl, &needs);
	pgbt_template_set_watchpoint_test(&tpl, watchpoints_alternate);
	if (pgbt_template_render(&tpl, &target, &out, &err) == 0)
		free(out);
	pgbt_template_free(&tpl);
	return 0;
}
