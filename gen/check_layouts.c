/* check-layouts: compares pgbt's built-in layout for a binary's major with
 * the binary's own DWARF. The tests run it on a debug build of every major
 * that has a layout; a developer adding a fact runs it the same way. */
#include "cli.h"

#include "embedded.h"

#include <stdio.h>
#include <string.h>

int cli_check_layouts(const struct cli *cli)
{
	struct pgbt_target t;
	struct pgbt_dwarf *dw = NULL;
	struct pgbt_layout layout = {0};
	struct pgbt_err err = { "" };
	char name[64], report[16384];
	size_t checked = 0;
	int bad = -1;

	if (pgbt_target_open_binary(&t, cli->bin, &err) < 0)
		goto out;
	dw = pgbt_dwarf_open(t.path, &err);
	if (!dw)
		goto out_target;
	snprintf(name, sizeof(name), "lib/layouts/%d.layout", t.major);
	for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++)
		if (strcmp(e->path, name) == 0 &&
		    pgbt_layout_parse(name, e->data, e->len, &layout, &err) == 0)
			bad = 0;
	if (bad < 0) {
		if (!err.msg[0])
			pgbt_fail(&err, "%s: pgbt has no built-in layout for PostgreSQL %d",
				  cli->bin, t.major);
		goto out_dwarf;
	}
	bad = pgbt_layout_check(&layout, dw, report, sizeof(report), &checked, &err);
	fputs(report, stdout);
	printf("%s: %zu facts checked against %s, %d mismatch%s\n", name, checked,
	       pgbt_dwarf_source(dw), bad, bad == 1 ? "" : "es");
	pgbt_layout_free(&layout);
out_dwarf:
	pgbt_dwarf_close(dw);
out_target:
	pgbt_target_close(&t);
out:
	if (bad < 0)
		fprintf(stderr, "pgbt-gen: %s\n", err.msg);
	return bad == 0 ? 0 : 1;
}
