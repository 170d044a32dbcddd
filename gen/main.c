/* pgbt-gen: renders a pgbt template into a bpftrace program for the
 * PostgreSQL server in front of it.
 *
 *   pgbt-gen xid-rate | sudo bpftrace -
 *
 * The pipeline: choose the target (options.c) -> read its binary and
 * process (lib/target.c) -> render the template (lib/template.c). On any
 * error nothing reaches stdout, so `| bpftrace -` never runs half a script. */
#include "cli.h"

#include "catalog.h"

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parent of process pid, 0 if unknown. */
static int parent_of(int pid)
{
	char path[64], line[512], *close;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f) && (close = strrchr(line, ')')))
		sscanf(close + 1, " %*c %d", &ppid);
	if (f)
		fclose(f);
	return ppid;
}

/* Whether process pid's PID in its own namespace (NSpid's last) is nspid. */
static bool has_nspid(int pid, int nspid)
{
	char path[64], line[256];
	bool yes = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');
			yes = last && atoi(last + 1) == nspid;
		}
	fclose(f);
	return yes;
}

/* Our catalog connection must be served by the traced server: names from
 * another server's catalog would be wrong, not just missing. The server
 * tells its backend's PID as its own PID namespace sees it (a container's).
 * Called while the connection is open: its backend must still exist. */
static int check_same_server(pid_t backend_pid, const void *arg, struct pgbt_err *err)
{
	const struct pgbt_target *t = arg;
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (!t->pid || parent_of((int)backend_pid) == (int)t->pid)
		return 0;   /* offline: nothing to compare with */
	if ((d = opendir("/proc"))) {
		while (!found && (de = readdir(d)))
			found = isdigit((unsigned char)de->d_name[0]) &&
				parent_of(atoi(de->d_name)) == (int)t->pid &&
				has_nspid(atoi(de->d_name), (int)backend_pid);
		closedir(d);
	}
	if (found)
		return 0;
	return pgbt_fail(err, "-d: the server it reached is not the traced one (its backend PID %d "
			 "is not a child of postmaster %d): connect to the traced server's socket or port",
			 (int)backend_pid, (int)t->pid);
}

static int render_script(const struct cli *cli)
{
	struct pgbt_template tpl;
	struct pgbt_target target;
	struct pgbt_needs needs;
	struct pgbt_catalog catalog = {0};
	struct pgbt_err err = { "" };
	char *out = NULL;
	int rc = 1;

	if (cli_load_template(cli, cli->script, &tpl, &err) < 0)
		goto fail_early;
	for (int i = 0; i < cli->nparams; i++)
		if (pgbt_template_set_param(&tpl, cli->params[i], &err) < 0)
			goto fail_template;
	pgbt_template_needs(&tpl, &needs);
	if (cli->bin && needs.live) {
		pgbt_fail(&err, "%s needs a running server: {{ %s }} is known only from "
			  "the live process; name one with -p PID or -D DATADIR instead of --bin",
			  tpl.name, needs.live_expr);
		goto fail_template;
	}
	if (cli_open_target(cli, &target, &err) < 0)
		goto fail_template;
	if (cli->conninfo &&
	    (pgbt_catalog_read(cli->conninfo, check_same_server, &target, &catalog, &err) < 0 ||
	     pgbt_template_add_rows(&tpl, &catalog.relations, &err) < 0))
		goto fail_target;
	if (pgbt_template_render(&tpl, &target, &out, &err) < 0)
		goto fail_target;
	if (fputs(out, stdout) == EOF || fflush(stdout) == EOF) {
		pgbt_fail(&err, "stdout: write failed");
		goto fail_target;
	}
	rc = 0;
fail_target:
	pgbt_catalog_free(&catalog);
	pgbt_target_close(&target);
fail_template:
	pgbt_template_free(&tpl);
fail_early:
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
	case CMD_CHECK_LAYOUTS:
		return cli_check_layouts(&cli);
	case CMD_RENDER:
		return render_script(&cli);
	}
	return 2;
}
