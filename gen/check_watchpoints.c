/* pgbt-gen check-watchpoints: whether this machine's hardware watchpoints
 * fire (lib/found/hwbp.c). */
#include "cli.h"

#include "lib/found/hwbp.h"

#include <stdio.h>

int cli_check_watchpoints(void)
{
	struct pgbt_err why = { .msg = "" };
	int fire = pgbt_hw_watchpoints_fire(&why);

	if (fire == 1) {
		printf("hardware watchpoints fire on this machine\n");
		return 0;
	}
	fprintf(stderr, "pgbt-gen: %s\n", why.msg);
	return fire == 0 ? 1 : 2;
}
