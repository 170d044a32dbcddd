/* Finding templates (built in, or in --scripts-dir) and listing them. */
#include "cli.h"

#include "lib/common/embedded.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Script names are file names: keep them to [a-z0-9-] so a name can never
 * reach outside the scripts directory. */
static int check_name(const char *name, struct pgbt_err *err)
{
	size_t n = strlen(name);

	if (n && n < 48 && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == n)
		return 0;
	return pgbt_fail(err, "'%s': not a script name (see pgbt-gen list)", name);
}

/* The text of scripts/REL ("xid-rate.bt", "include/wait-event-names.bt"):
 * from --scripts-dir when given, else built in. *ret is malloc'ed and
 * NUL-terminated; origin says where it came from. */
static int read_source(const struct cli *cli, const char *rel, char **ret, size_t *ret_len,
		       char *origin, size_t origin_len, struct pgbt_err *err)
{
	char path[PATH_MAX], *text;
	size_t len;
	FILE *f;

	if (!cli->scripts_dir) {
		snprintf(path, sizeof(path), "scripts/%s", rel);
		for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++) {
			if (strcmp(e->path, path) != 0)
				continue;
			if (!(*ret = strndup(e->data, e->len)))
				return pgbt_fail(err, "out of memory");
			*ret_len = e->len;
			snprintf(origin, origin_len, "built in");
			return 0;
		}
		return pgbt_fail(err, "no %s built in", path);
	}
	snprintf(path, sizeof(path), "%s/%s", cli->scripts_dir, rel);
	if (!(f = fopen(path, "r")))
		return pgbt_fail(err, "no %s in %s", rel, cli->scripts_dir);
	text = malloc(1 << 20);
	len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (!text || len == (1 << 20) - 1) {
		free(text);
		return pgbt_fail(err, "%s: unreadable or larger than 1 MiB", path);
	}
	text[len] = '\0';
	*ret = text;
	*ret_len = len;
	snprintf(origin, origin_len, "%s", path);
	return 0;
}

/* scripts/include/NAME.bt, for {{include NAME}} (pgbt_template_load). */
static int load_fragment(void *ctx, const char *name, char **ret, size_t *ret_len,
			 struct pgbt_err *err)
{
	const struct cli *cli = ctx;
	char rel[96], origin[PATH_MAX];

	if (check_name(name, err) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "include/%s.bt", name);
	return read_source(cli, rel, ret, ret_len, origin, sizeof(origin), err);
}

int cli_load_template(const struct cli *cli, const char *name,
		      struct pgbt_template *ret, struct pgbt_err *err)
{
	char rel[64], origin[PATH_MAX], *text;
	size_t len;
	int rc;

	if (check_name(name, err) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "%s.bt", name);
	if (read_source(cli, rel, &text, &len, origin, sizeof(origin), err) < 0) {
		if (cli->scripts_dir)
			return pgbt_fail(err, "no script '%s' in %s (see pgbt-gen --scripts-dir %s list)",
					 name, cli->scripts_dir, cli->scripts_dir);
		return pgbt_fail(err, "no script '%s' (pgbt-gen list shows them)", name);
	}
	rc = pgbt_template_load(name, origin, text, len, load_fragment, (void *)cli, ret, err);
	free(text);
	return rc;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names of every script, sorted. */
static int script_names(const struct cli *cli, char ***ret, size_t *ret_n)
{
	char **names = calloc(256, sizeof(*names));
	size_t n = 0;

	if (!names)
		return -1;
	if (cli->scripts_dir) {
		DIR *d = opendir(cli->scripts_dir);
		struct dirent *de;
		if (!d) {
			free(names);
			return -1;
		}
		while ((de = readdir(d)) && n < 256) {
			size_t l = strlen(de->d_name);
			if (l > 3 && strcmp(de->d_name + l - 3, ".bt") == 0)
				names[n++] = strndup(de->d_name, l - 3);
		}
		closedir(d);
	} else {
		for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path && n < 256; e++) {
			size_t l = strlen(e->path);
			/* scripts/NAME.bt, not the fragments of scripts/include/ */
			if (strncmp(e->path, "scripts/", 8) == 0 && l > 11 &&
			    !strchr(e->path + 8, '/'))
				names[n++] = strndup(e->path + 8, l - 11);
		}
	}
	qsort(names, n, sizeof(*names), compare_names);
	*ret = names;
	*ret_n = n;
	return 0;
}

void cli_needs_text(const struct pgbt_needs *n, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s%s",
		 n->live ? "running server" : "binary only",
		 n->types ? ", DWARF or layout" : "",
		 n->usdt ? ", USDT if built" : "", "");
}

int cli_list(const struct cli *cli)
{
	char **names, needs[128];
	size_t n;
	int rc = 0;

	if (script_names(cli, &names, &n) < 0) {
		fprintf(stderr, "pgbt-gen: %s: cannot read the scripts directory\n", cli->scripts_dir);
		return 1;
	}
	printf("%-16s %-48s %s\n", "SCRIPT", "NEEDS", "SUMMARY");
	for (size_t i = 0; i < n; i++) {
		struct pgbt_template tpl;
		struct pgbt_needs nd;
		struct pgbt_err err;

		if (cli_load_template(cli, names[i], &tpl, &err) < 0) {
			fprintf(stderr, "pgbt-gen: %s\n", err.msg);
			rc = 1;
		} else {
			pgbt_template_needs(&tpl, &nd);
			cli_needs_text(&nd, needs, sizeof(needs));
			printf("%-16s %-48s %s\n", tpl.name, needs, tpl.summary);
			pgbt_template_free(&tpl);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}
