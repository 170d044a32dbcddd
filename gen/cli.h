/* Command line of pgbt-gen: options, and the commands besides rendering. */
#ifndef PGBT_CLI_H
#define PGBT_CLI_H

#include "err.h"
#include "target.h"
#include "template.h"

#include <sys/types.h>

enum cli_command { CMD_RENDER, CMD_LIST, CMD_CHECK_LAYOUTS };

struct cli {
	enum cli_command command;
	const char *script;
	pid_t pid;               /* -p, 0 when not given */
	const char *datadir;     /* -D */
	const char *bin;         /* --bin */
	const char *scripts_dir; /* --scripts-dir: templates from files */
	const char *conninfo;    /* -d: names from the server's catalog (libpq) */
	const char *bpftrace;    /* --bpftrace PATH|VERSION (or $PGBT_BPFTRACE) */
	const char *params[PGBT_MAX_PARAMS * 2];
	int nparams;
};

/* Returns -1 when there is a command to run, else the exit code to
 * return at once (0 after --help/--version, 2 after a usage error). */
int cli_parse(struct cli *cli, int argc, char **argv);

int cli_load_template(const struct cli *cli, const char *name,
		      struct pgbt_template *ret, struct pgbt_err *err);
int cli_open_target(const struct cli *cli, struct pgbt_target *ret, struct pgbt_err *err);

int cli_list(const struct cli *cli);
int cli_check_layouts(const struct cli *cli);

#endif
