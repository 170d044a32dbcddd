/* Which server to render for: -p, -D, --bin, or the only postmaster. */
#include "cli.h"

int cli_open_target(const struct cli *cli, struct pgbt_target *ret, struct pgbt_err *err)
{
	if (cli->bin)
		return pgbt_target_open_binary(ret, cli->bin, err);
	if (cli->pid)
		return pgbt_target_open_pid(ret, cli->pid, err);
	if (cli->datadir)
		return pgbt_target_open_datadir(ret, cli->datadir, err);
	return pgbt_target_open_default(ret, err);
}
