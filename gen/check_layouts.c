/* check-layouts: compares pgbt's built-in layout for a binary's major and
 * machine with the binary's own DWARF. The tests run it on a debug build of
 * every major that has a layout (for aarch64, on a file cross-compiled from
 * its headers); a developer adding a fact runs it the same way. */
#include "cli.h"

#include "lib/found/machine.h"

#include <stdio.h>
#include <string.h>

int cli_check_layouts(const struct cli *cli)
{
	struct pgbt_target t;
	struct pgbt_dwarf *dw = NULL;
	struct pgbt_layout layout = {0};
	struct pgbt_err err = { .msg = "" };
	const char *machine;
	static char report[1 << 16];
	size_t checked = 0;
	int bad = -1, rc;

	if (pgbt_target_open_binary(&t, cli->bin, &err) < 0)
		goto out;
	dw = pgbt_dwarf_open(t.path, &err);
	if (!dw)
		goto out_target;
	/* the facts for the binary's machine: its offsets and sizes, and the
	   source's facts that hold for every machine */
	machine = pgbt_machine_name(t.machine);
	rc = pgbt_layout_builtin(t.major, machine, &layout, &err);
	if (rc == 0 && !layout.n_abi) {
		pgbt_layout_free(&layout);
		rc = 1;
	}
	if (rc != 0) {
		if (rc > 0)
			pgbt_fail(&err, "%s: pgbt has no built-in layout for PostgreSQL %d on %s",
				  cli->bin, t.major, machine);
		goto out_dwarf;
	}
	bad = pgbt_layout_check(&layout, dw, report, sizeof(report), &checked, &err);
	fputs(report, stdout);
	printf("built-in layout for PostgreSQL %d on %s: %zu facts checked against %s, "
	       "%d mismatch%s\n", t.major, machine, checked, pgbt_dwarf_source(dw), bad,
	       bad == 1 ? "" : "es");
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
