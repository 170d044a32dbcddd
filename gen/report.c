/* pgbt-gen report: the reader of report/reader.h on stdin, with the
 * scripts' templates (built in or --scripts-dir) for their maps.
 *
 *   pgbt-gen waits | sudo bpftrace -f json - | pgbt-gen report
 *
 * Ctrl-C in a terminal reaches the whole pipeline: the reader ignores it,
 * so that bpftrace's last report (printed as it stops) still comes in. */
#include "cli.h"

#include "report/reader.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static int load_spec(void *ctx, const char *script, struct rp_spec *ret, struct pgbt_err *err)
{
	struct pgbt_template tpl;
	int rc;

	if (cli_load_template(ctx, script, &tpl, err) < 0)
		return -1;
	rc = rp_spec_read(&tpl, ret, err);
	pgbt_template_free(&tpl);
	return rc;
}

int cli_report(const struct cli *cli)
{
	struct rp_options opt = {
		.top = cli->report_top,
		.text = cli->report_format == REPORT_TEXT ? stdout : NULL,
		.json = cli->report_format == REPORT_JSON ? stdout : NULL,
		.textfile_dir = cli->textfile_dir,
		.html_path = cli->html_path,
		.load_spec = load_spec,
		.ctx = (void *)cli,
		.input = "stdin",
	};
	struct pgbt_err err = { .msg = "" };

	signal(SIGINT, SIG_IGN);
	if (isatty(STDIN_FILENO)) {
		fprintf(stderr, "pgbt-gen report: stdin is a terminal: pipe bpftrace -f json into it "
			"(pgbt-gen SCRIPT | sudo bpftrace -f json - | pgbt-gen report)\n");
		return 2;
	}
	if (rp_read_fd(STDIN_FILENO, &opt, &err) < 0) {
		fprintf(stderr, "pgbt-gen report: %s\n", err.msg);
		return 1;
	}
	return 0;
}
