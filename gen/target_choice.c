/* Which server to render for: -p, -D, --bin, or the only postmaster;
 * and whether its types come from gdb. */
#include "cli.h"

int cli_open_target(const struct cli *cli, struct pgbt_target *ret, struct pgbt_err *err)
{
	int rc;

	if (cli->bin)
		rc = pgbt_target_open_binary(ret, cli->bin, err);
	else if (cli->pid)
		rc = pgbt_target_open_pid(ret, cli->pid, err);
	else if (cli->datadir)
		rc = pgbt_target_open_datadir(ret, cli->datadir, err);
	else
		rc = pgbt_target_open_default(ret, err);
	ret->types_from_gdb = cli->resolver_gdb;   /* before any type is asked */
	return rc;
}
