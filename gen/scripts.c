/* Finding templates (built in, or in --scripts-dir) and listing them. */
#include "cli.h"

#include "embedded.h"

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

static int load_file(const char *dir, const char *name, struct pgbt_template *ret,
		     struct pgbt_err *err)
{
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.bt", dir, name);
	f = fopen(path, "r");
	if (!f)
		return pgbt_fail(err, "no script '%s' in %s (see pgbt-gen --scripts-dir %s list)",
				 name, dir, dir);
	text = malloc(1 << 20);
	if (text)
		len = fread(text, 1, 1 << 20, f);
	fclose(f);
	if (!text || len == 1 << 20) {
		free(text);
		return pgbt_fail(err, "%s: unreadable or larger than 1 MiB", path);
	}
	rc = pgbt_template_parse(name, path, text, len, ret, err);
	free(text);
	return rc;
}

int cli_load_template(const struct cli *cli, const char *name,
		      struct pgbt_template *ret, struct pgbt_err *err)
{
	char path[128];

	if (check_name(name, err) < 0)
		return -1;
	if (cli->scripts_dir)
		return load_file(cli->scripts_dir, name, ret, err);
	snprintf(path, sizeof(path), "scripts/%s.bt", name);
	for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++)
		if (strcmp(e->path, path) == 0)
			return pgbt_template_parse(name, "built in", e->data, e->len, ret, err);
	return pgbt_fail(err, "no script '%s' (pgbt-gen list shows them)", name);
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
			if (strncmp(e->path, "scripts/", 8) == 0 && l > 11)
				names[n++] = strndup(e->path + 8, l - 11);
		}
	}
	qsort(names, n, sizeof(*names), compare_names);
	*ret = names;
	*ret_n = n;
	return 0;
}

static void needs_text(const struct pgbt_needs *n, char *out, size_t len)
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
			needs_text(&nd, needs, sizeof(needs));
			printf("%-16s %-48s %s\n", tpl.name, needs, tpl.summary);
			pgbt_template_free(&tpl);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}
