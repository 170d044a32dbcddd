/* pgbt-gen SCRIPT and its kin (run, help's "renders here?"): the script
 * rendered for the target the options name, with what its rendering asks
 * besides (relation names, the gdb check, the watchpoint refusals). */
#include "cli.h"

#include "lib/common/buf.h"
#include "lib/found/catalog.h"
#include "lib/found/hwbp.h"
#include "lib/found/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Our catalog connection must be served by the traced server: names from
 * another server's catalog would be wrong, not just missing. The server
 * tells its backend's PID as its own PID namespace sees it (a container's).
 * Called while the connection is open: its backend must still exist. */
static int check_same_server(pid_t backend_pid, const void *arg, struct pgbt_err *err)
{
	const struct pgbt_target *t = arg;
	pid_t ours, parent = 0;

	if (!t->pid)
		return 0;   /* offline: nothing to compare with */
	if (!t->other_pidns && pgbt_proc_ppid(backend_pid, &parent, NULL) == 0 &&
	    parent == t->pid)
		return 0;
	if (t->other_pidns && pgbt_proc_child_by_nspid(t->pid, backend_pid, &ours, NULL) == 0)
		return 0;
	return pgbt_fail(err, "-d: the server it reached is not the traced one (its backend PID %d "
			 "is not a child of postmaster %d): connect to the traced server's socket or port",
			 (int)backend_pid, (int)t->pid);
}

/* A script on a hardware watchpoint would print zeros where the debug
 * registers do not fire: refuse it there, unless told to render anyway (to
 * read it, or to run it on another machine). Where we cannot tell, render. */
static int check_watchpoints(const char *script, const char *out, struct pgbt_err *err)
{
	const char *check = getenv("PGBT_WATCHPOINT_CHECK");
	struct pgbt_err why = { .msg = "" };

	if (strncmp(out, "watchpoint:", 11) != 0 && !strstr(out, "\nwatchpoint:"))
		return 0;
	if (check && strcmp(check, "off") == 0)
		return 0;
	if (pgbt_hw_watchpoints_fire(&why) != 0)
		return 0;
	return pgbt_fail(err, "%s: %s, so its counts would all be 0 here "
			 "(PGBT_WATCHPOINT_CHECK=off renders it anyway)", script, why.msg);
}

/* The command line as a shell reads it back, without the word "run" or
 * "help":
 * what renders the script to stdout. */
static void command_line(const struct cli *cli, char *out, size_t len)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-./=:,+@%";
	struct pgbt_buf b = {0};

	for (int i = 0; i < cli->argc; i++) {
		const char *a = cli->argv[i];

		if (i && i == cli->command_arg)
			continue;
		if (b.len)
			pgbt_buf_add(&b, " ", 1);
		if (*a && strspn(a, safe) == strlen(a)) {
			pgbt_buf_add(&b, a, strlen(a));
			continue;
		}
		pgbt_buf_add(&b, "'", 1);
		for (; *a; a++)
			pgbt_buf_add(&b, *a == '\'' ? "'\\''" : a, *a == '\'' ? 4 : 1);
		pgbt_buf_add(&b, "'", 1);
	}
	snprintf(out, len, "%s", b.s && !b.oom ? b.s : "pgbt-gen ...");
	pgbt_buf_free(&b);
}

void cli_run_command(const struct cli_rendered *info, char *out, size_t len)
{
	snprintf(out, len, "%s | %s%s -p %d -", info->command, geteuid() == 0 ? "" : "sudo ",
		 info->bpftrace[0] ? info->bpftrace : "bpftrace", (int)info->run_pid);
}

int cli_render(const struct cli *cli, char **ret, struct cli_rendered *info,
	       struct pgbt_err *err)
{
	struct cli_rendered unused;
	struct pgbt_template tpl;
	struct pgbt_target target;
	struct pgbt_needs needs;
	struct pgbt_bpftrace bt;
	struct pgbt_catalog catalog = {0};
	struct pgbt_resolved resolved = {0};
	char *out = NULL;
	int rc = -1;

	*ret = NULL;
	if (!info)
		info = &unused;
	memset(info, 0, sizeof(*info));
	command_line(cli, info->command, sizeof(info->command));
	if (cli_load_template(cli, cli->script, &tpl, err) < 0)
		return -1;
	pgbt_template_set_command(&tpl, info->command, geteuid() == 0);
	for (int i = 0; i < cli->nparams; i++)
		if (pgbt_template_set_param(&tpl, cli->params[i], err) < 0)
			goto fail_template;
	pgbt_template_needs(&tpl, &needs);
	if (cli->bin && needs.live) {
		pgbt_fail(err, "%s needs a running server: {{ %s }} is known only from "
			  "the live process; name one with -p PID or -D DATADIR instead of --bin",
			  tpl.name, needs.live_expr);
		goto fail_template;
	}
	if (pgbt_bpftrace_find(cli->bpftrace, &bt, err) < 0)
		goto fail_template;
	pgbt_template_set_bpftrace(&tpl, &bt);
	snprintf(info->bpftrace, sizeof(info->bpftrace), "%s", bt.program);
	info->uprobes_scoped = pgbt_bpftrace_scopes_uprobes(&bt);
	if (cli_open_target(cli, &target, err) < 0)
		goto fail_template;
	if (pgbt_template_resolve_backends(&tpl, &target, err) < 0)
		goto fail_target;
	if (cli->conninfo &&
	    (pgbt_catalog_read(cli->conninfo, check_same_server, &target, &catalog, err) < 0 ||
	     pgbt_template_add_rows(&tpl, &catalog.relations, err) < 0))
		goto fail_target;
	if (pgbt_template_run_pid(&tpl, &target, &info->run_pid, err) < 0 ||
	    pgbt_template_render_resolved(&tpl, &target, &out, &resolved, err) < 0)
		goto fail_target;
	if (cli->check_with_gdb &&
	    cli_check_with_gdb(&target, &resolved, cli->check_strict, &out, err) < 0)
		goto fail_target;
	if (pgbt_machine_check_watchpoints(target.machine, tpl.name, out, err) < 0 ||
	    check_watchpoints(tpl.name, out, err) < 0)
		goto fail_target;
	*ret = out;
	out = NULL;
	rc = 0;
fail_target:
	pgbt_resolved_free(&resolved);
	pgbt_catalog_free(&catalog);
	pgbt_target_close(&target);
fail_template:
	pgbt_template_free(&tpl);
	free(out);
	return rc;
}
