/* pgbt-gen: renders a pgbt template into a bpftrace program for the
 * PostgreSQL server in front of it.
 *
 *   pgbt-gen xid-rate | sudo bpftrace -
 *
 * The pipeline: parse the options (options.c) -> choose the target
 * (target_choice.c) -> read its binary and process (lib/target/) ->
 * render the template (render.c, lib/template/). On any error nothing
 * reaches stdout, so `| bpftrace -` never runs half a script. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

static int render_script(const struct cli *cli)
{
	struct pgbt_err err = { .msg = "" };
	struct cli_rendered info;
	char *out = NULL, run[2048];
	int rc = 1;

	if (cli_render(cli, &out, &info, &err) < 0)
		goto fail;
	/* One line, as the script's first comment line says too: what a
	 * script that follows one process costs depends on it. */
	if (info.run_pid) {
		cli_run_command(&info, run, sizeof(run));
		fprintf(stderr, "pgbt-gen: %s follows PID %d: run it as  %s  (%s)\n", cli->script,
			(int)info.run_pid, run, info.uprobes_scoped
			? "bpftrace then probes that process alone; without -p every backend traps on its uprobes"
			: "this bpftrace keeps only USDT probes and watchpoints to it; its uprobes trap in every backend: 0.20 and later keep them too");
	}
	if (fputs(out, stdout) == EOF || fflush(stdout) == EOF) {
		pgbt_fail(&err, "stdout: write failed");
		goto fail;
	}
	rc = 0;
fail:
	if (rc)
		fprintf(stderr, "pgbt-gen: %s\n", err.msg);
	free(out);
	return rc;
}

int main(int argc, char **argv)
{
	struct cli cli;
	int rc = cli_parse(&cli, argc, argv);

	if (rc >= 0)
		return rc;   /* --help, --version or a usage error */
	switch (cli.command) {
	case CMD_LIST:
		return cli_list(&cli);
	case CMD_HELP:
		return cli_help(&cli);
	case CMD_CHECK_LAYOUTS:
		return cli_check_layouts(&cli);
	case CMD_CHECK_WATCHPOINTS:
		return cli_check_watchpoints();
	case CMD_REPORT:
		return cli_report(&cli);
	case CMD_RENDER:
		return render_script(&cli);
	case CMD_RUN:
		return cli_run(&cli);
	}
	return 2;
}
