/* pgbt-gen help SCRIPT: what a script shows (its header comment, the
 * bpftrace tools' kind: summary, usage, what it shows and misses, its
 * cost line, a short example, its page under docs/scripts/), its
 * parameters with type, default and meaning, what it needs, how to run
 * one that follows a backend; with a target, whether it renders for that
 * server (and the command that runs it) and why not. */
#include "cli.h"

#include "report/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The header comment's lines, without " * ", up to its end. */
static void print_header(const char *text)
{
	const char *p = strstr(text, "/*"), *end = p ? strstr(p, "*/") : NULL;

	if (!p || !end)
		return;
	p = strchr(p, '\n');
	while (p && p < end) {
		const char *line = p + 1, *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (line >= end)
			break;
		if (strncmp(line, " * ", 3) == 0)
			printf("%.*s\n", (int)len - 3, line + 3);
		else if (strncmp(line, " *", 2) == 0 && len == 2)
			putchar('\n');
		p = nl;
	}
}

static void print_param(const struct pgbt_param *p)
{
	char type[300];

	switch (p->type) {
	case PARAM_INT:
		snprintf(type, sizeof(type), "integer %ld..%ld", p->min, p->max);
		break;
	case PARAM_CHOICE:
		snprintf(type, sizeof(type), "one of %s", p->choices);
		break;
	case PARAM_IDENT:
		snprintf(type, sizeof(type), "a name (letters, digits, _)");
		break;
	case PARAM_BACKEND:
		snprintf(type, sizeof(type), "a backend's PID (0: none)");
		break;
	}
	printf("  %-15s %s, default %s: %s\n", p->name, type, p->def, p->desc);
}

/* The tables pgbt-gen report makes of its output, if any. */
static void print_report(const struct pgbt_template *tpl)
{
	struct rp_spec spec;
	struct pgbt_err err;

	if (!tpl->nreport)
		return;
	if (rp_spec_read(tpl, &spec, &err) < 0) {
		printf("\nReport: none: %s\n", err.msg);
		return;
	}
	printf("\nReport (pgbt-gen %s | sudo bpftrace -f json - | pgbt-gen report):\n", tpl->name);
	for (int i = 0; i < spec.ntables; i++)
		printf("  %s\n", spec.tables[i].title);
}

int cli_help(const struct cli *cli)
{
	struct pgbt_template tpl;
	struct pgbt_needs needs;
	struct pgbt_err err = { .msg = "" };
	struct cli_rendered info;
	char needs_line[128], run[2048], *out = NULL;

	if (cli_load_template(cli, cli->script, &tpl, &err) < 0) {
		fprintf(stderr, "pgbt-gen: help: %s\n", err.msg);
		return 1;
	}
	print_header(tpl.text);
	printf("\nParameters (NAME=VALUE, before or after the script's name):\n");
	if (!tpl.nparams)
		printf("  none\n");
	for (size_t i = 0; i < tpl.nparams; i++)
		print_param(&tpl.params[i]);
	pgbt_template_needs(&tpl, &needs);
	cli_needs_text(&needs, needs_line, sizeof(needs_line));
	printf("\nNeeds: %s.\n", needs_line);
	print_report(&tpl);
	if (tpl.run_param[0])
		printf("\nRun: with %s=PID, give bpftrace -p and that backend's PID on this host\n"
		       "(pgbt-gen prints the command on stderr and in the script's first line, or\n"
		       "pgbt-gen run %s %s=PID runs it): bpftrace 0.20 and later then attach\n"
		       "every probe to that process alone; 0.17 only its USDT probes and\n"
		       "watchpoints, its uprobes trap in every backend. bpftrace stops when\n"
		       "that process exits.\n", tpl.run_param, tpl.name, tpl.run_param);
	pgbt_template_free(&tpl);
	if (!cli->pid && !cli->datadir && !cli->bin)
		return 0;
	/* The target given: does it render there, with these parameters? */
	if (cli_render(cli, &out, &info, &err) < 0) {
		printf("On this server: it does not render: %s\n", err.msg);
		return 1;
	}
	if (info.run_pid) {
		cli_run_command(&info, run, sizeof(run));
		printf("On this server: it renders; run it as  %s\n", run);
	} else {
		printf("On this server: it renders (pgbt-gen with the same options and %s | sudo bpftrace -).\n",
		       cli->script);
	}
	free(out);
	return 0;
}
