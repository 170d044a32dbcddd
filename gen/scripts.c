/* Finding templates (built in, or in --scripts-dir) and listing them. */
#include "cli.h"

#include "buf.h"
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

/* The fragment named by a line "{{include NAME}}" (blanks around it
 * allowed), or 0 when the line is something else. */
static int include_line(const char *line, size_t n, char *name, size_t name_len)
{
	const char *end = line + n;
	size_t k;

	while (line < end && (*line == ' ' || *line == '\t'))
		line++;
	while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end - line < 13 || strncmp(line, "{{include ", 10) != 0 || strncmp(end - 2, "}}", 2) != 0)
		return 0;
	line += 10;
	while (line < end - 2 && *line == ' ')
		line++;
	for (k = 0; line + k < end - 2 && line[k] != ' ' && k + 1 < name_len; k++)
		name[k] = line[k];
	name[k] = '\0';
	return 1;
}

static int load_fragment(const struct cli *cli, const char *name, char **ret,
			 size_t *ret_len, struct pgbt_err *err)
{
	char rel[96], origin[PATH_MAX];

	if (check_name(name, err) < 0)
		return -1;
	snprintf(rel, sizeof(rel), "include/%s.bt", name);
	return read_source(cli, rel, ret, ret_len, origin, sizeof(origin), err);
}

/* Replaces each "{{include NAME}}" line of a template by the text of
 * scripts/include/NAME.bt, so scripts share tables (wait event names)
 * without C changes. Fragments do not include others. */
static int expand_includes(const struct cli *cli, const char *script, const char *text,
			   size_t len, struct pgbt_buf *out, struct pgbt_err *err)
{
	const char *p = text, *end = text + len;
	int line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		char name[64], *part;
		size_t part_len;

		line++;
		if (!include_line(p, nl ? n - 1 : n, name, sizeof(name))) {
			pgbt_buf_add(out, p, n);
		} else if (load_fragment(cli, name, &part, &part_len, err) < 0) {
			char why[sizeof(err->msg)];

			snprintf(why, sizeof(why), "%s", err->msg);
			return pgbt_fail(err, "%s: line %d: {{include %s}}: %s", script, line, name, why);
		} else {
			pgbt_buf_add(out, part, part_len);
			if (part_len && part[part_len - 1] != '\n')
				pgbt_buf_add(out, "\n", 1);
			free(part);
		}
		p += n;
	}
	return out->oom ? pgbt_fail(err, "out of memory") : 0;
}

int cli_load_template(const struct cli *cli, const char *name,
		      struct pgbt_template *ret, struct pgbt_err *err)
{
	char rel[64], origin[PATH_MAX], *text;
	struct pgbt_buf full = { 0 };
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
	rc = expand_includes(cli, name, text, len, &full, err);
	if (rc == 0)
		rc = pgbt_template_parse(name, origin, full.s ? full.s : "", full.len, ret, err);
	free(text);
	pgbt_buf_free(&full);
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
