/* Parses pgbt-gen's command line. */
#include "cli.h"

#include "lib/types/layout.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
"Usage: pgbt-gen [TARGET] SCRIPT [NAME=VALUE...]   render SCRIPT to stdout\n"
"       pgbt-gen [TARGET] run SCRIPT [NAME=VALUE...]\n"
"                                                  render SCRIPT and run bpftrace\n"
"                                                  on it (with -p PID for a\n"
"                                                  script that follows one backend)\n"
"       pgbt-gen list                              the scripts and what they need\n"
"       pgbt-gen [TARGET] help SCRIPT              what SCRIPT shows, its parameters,\n"
"                                                  what it needs (with a TARGET:\n"
"                                                  whether it renders there)\n"
"       pgbt-gen check-layouts --bin PATH          compare the built-in layout\n"
"                                                  with the DWARF of PATH\n"
"       pgbt-gen check-watchpoints                 whether this machine's hardware\n"
"                                                  watchpoints fire (scripts on\n"
"                                                  them are refused where not)\n"
"       pgbt-gen report [REPORT OPTIONS]           read bpftrace -f json of a script\n"
"                                                  on stdin, write a report\n"
"\n"
"Renders a bpftrace program fitted to one PostgreSQL server: struct offsets\n"
"from DWARF (or a built-in layout), USDT probes, symbols and live addresses.\n"
"\n"
"TARGET (default: the only running postmaster):\n"
"  -p, --pid PID          the postmaster or any of its children\n"
"  -D, --datadir DIR      the server whose data directory is DIR\n"
"      --bin PATH         offline, from the binary alone (scripts that need\n"
"                         no live address)\n"
"Other options:\n"
"  -d, --conninfo CONN    names of relations from the server's catalog,\n"
"                         read once with libpq (CONN: 'dbname=app user=x',\n"
"                         a URI or a database name); without it the lock\n"
"                         scripts print database/relation OIDs\n"
"      --bpftrace PATH|VERSION\n"
"                         the bpftrace the script will run on (default:\n"
"                         $PGBT_BPFTRACE, else bpftrace on PATH, else the\n"
"                         oldest supported, 0.17): newer ones get cheaper code\n"
"      --scripts-dir DIR  read templates from DIR instead of the built-in ones\n"
"      --layouts-dir DIR  read layouts (MAJOR*.layout) from DIR instead of\n"
"                         the built-in ones\n"
"      --check-with gdb   ask gdb, attached for a moment to the server's\n"
"                         processes, for every address, offset, size and\n"
"                         enumerator the script uses; any difference, or\n"
"                         a fact gdb cannot answer, fails (gdb-if-able: only\n"
"                         differences fail)\n"
"      --resolver gdb     take offsets, sizes, types and enumerators from gdb\n"
"                         instead of libdw, for debug info libdw cannot read\n"
"                         (slower: gdb reads it all first; default: libdw)\n"
"Report options (docs/report.md):\n"
"      --format text|json|none\n"
"                         stdout: tables for people (default), JSON lines\n"
"                         (schema pgbt-report/1), or nothing\n"
"      --textfile DIR     also write DIR/pgbt_SCRIPT_PORT.prom for\n"
"                         node_exporter's textfile collector, replaced\n"
"                         whole at each report\n"
"      --html FILE        also write FILE, one HTML page (charts over the\n"
"                         reports, the whole trace's tables), replaced\n"
"                         whole at each report\n"
"      --top N            rows per table (default: each table's own)\n"
"  -h, --help             this text\n"
"  -V, --version          pgbt-gen's version\n"
"\n"
"Examples:\n"
"  pgbt-gen list\n"
"  pgbt-gen xid-rate | sudo bpftrace -\n"
"  pgbt-gen -D /var/lib/postgresql/15/main xid-events > xid.bt\n"
"  pgbt-gen -p 4242 oid-consumers interval=10 | sudo bpftrace -\n"
"  pgbt-gen -d 'dbname=app user=postgres' lock-waits | sudo bpftrace -\n"
"  sudo pgbt-gen run lock-events pid=4243   (bpftrace -p 4243: that backend alone)\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "pgbt-gen: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see pgbt-gen --help\n");
	return 2;
}

/* --html FILE is replaced through a temporary file beside it: its
 * directory must take one, and FILE must not be a directory. */
static bool html_path_bad(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (slash && !slash[1])
		return true;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) + 1, path);
	else
		snprintf(dir, sizeof(dir), ".");
	return access(dir, W_OK) != 0 || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

static int parse_pid(const char *s, pid_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v <= 0 || v > 4194304)
		return -1;
	*ret = (pid_t)v;
	return 0;
}

int cli_parse(struct cli *cli, int argc, char **argv)
{
	enum { OPT_BIN = 256, OPT_SCRIPTS_DIR, OPT_BPFTRACE, OPT_LAYOUTS_DIR, OPT_CHECK_WITH,
	       OPT_RESOLVER, OPT_FORMAT, OPT_TEXTFILE, OPT_HTML, OPT_TOP };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "datadir", required_argument, NULL, 'D' },
		{ "bin", required_argument, NULL, OPT_BIN },
		{ "scripts-dir", required_argument, NULL, OPT_SCRIPTS_DIR },
		{ "bpftrace", required_argument, NULL, OPT_BPFTRACE },
		{ "layouts-dir", required_argument, NULL, OPT_LAYOUTS_DIR },
		{ "check-with", required_argument, NULL, OPT_CHECK_WITH },
		{ "resolver", required_argument, NULL, OPT_RESOLVER },
		{ "conninfo", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "textfile", required_argument, NULL, OPT_TEXTFILE },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, targets = 0, report_opts = 0;

	memset(cli, 0, sizeof(*cli));
	cli->argv = argv;
	cli->argc = argc;
	if (getenv("PGBT_BPFTRACE") && *getenv("PGBT_BPFTRACE"))
		cli->bpftrace = getenv("PGBT_BPFTRACE");
	while ((c = getopt_long(argc, argv, "p:D:d:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &cli->pid) < 0)
				return usage_error("-p '%s': not a process ID", optarg);
			targets++;
			break;
		case 'D':
			cli->datadir = optarg;
			targets++;
			break;
		case OPT_BIN:
			cli->bin = optarg;
			targets++;
			break;
		case 'd':
			cli->conninfo = optarg;
			break;
		case OPT_SCRIPTS_DIR:
			cli->scripts_dir = optarg;
			break;
		case OPT_LAYOUTS_DIR:
			pgbt_layout_set_dir(optarg);
			break;
		case OPT_CHECK_WITH:
			if (strcmp(optarg, "gdb") != 0 && strcmp(optarg, "gdb-if-able") != 0)
				return usage_error("--check-with '%s': want gdb or gdb-if-able", optarg);
			cli->check_with_gdb = true;
			cli->check_strict = strcmp(optarg, "gdb") == 0;
			break;
		case OPT_RESOLVER:
			if (strcmp(optarg, "gdb") != 0 && strcmp(optarg, "libdw") != 0)
				return usage_error("--resolver '%s': want gdb or libdw", optarg);
			cli->resolver_gdb = strcmp(optarg, "gdb") == 0;
			break;
		case OPT_BPFTRACE:
			if (!*optarg)
				return usage_error("%s", "--bpftrace: empty");
			cli->bpftrace = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				cli->report_format = REPORT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				cli->report_format = REPORT_JSON;
			else if (strcmp(optarg, "none") == 0)
				cli->report_format = REPORT_NONE;
			else
				return usage_error("--format '%s': want text, json or none", optarg);
			report_opts++;
			break;
		case OPT_TEXTFILE:
			if (!*optarg)
				return usage_error("%s", "--textfile: empty");
			cli->textfile_dir = optarg;
			report_opts++;
			break;
		case OPT_HTML:
			if (!*optarg)
				return usage_error("%s", "--html: empty");
			cli->html_path = optarg;
			report_opts++;
			break;
		case OPT_TOP: {
			char *end;
			errno = 0;
			long n = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || n < 1 || n > 1000)
				return usage_error("--top '%s': want a number of rows, 1 to 1000", optarg);
			cli->report_top = (int)n;
			report_opts++;
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("pgbt-gen %s\n", PGBT_VERSION);
			return 0;
		default:
			return 2;   /* getopt said why */
		}
	}
	if (targets > 1)
		return usage_error("%s", "-p, -D and --bin choose the target: give one");
	/* The script is the first word that is not NAME=VALUE, so parameters
	 * may come before or after it. */
	for (; optind < argc; optind++) {
		if (!cli->script && !strchr(argv[optind], '=')) {
			cli->script = argv[optind];
			cli->command_arg = optind;    /* if it is "run" or "help" */
			continue;
		}
		if (cli->command == CMD_RENDER && !strchr(argv[optind], '=') &&
		    (strcmp(cli->script, "help") == 0 || strcmp(cli->script, "run") == 0)) {
			cli->command = strcmp(cli->script, "help") == 0 ? CMD_HELP : CMD_RUN;
			cli->script = argv[optind];
			continue;
		}
		if (!cli->script && strchr(argv[optind], '=') == argv[optind])
			return usage_error("'%s': not NAME=VALUE", argv[optind]);
		if (cli->nparams == (int)(sizeof(cli->params) / sizeof(cli->params[0])))
			return usage_error("%s", "too many parameters");
		cli->params[cli->nparams++] = argv[optind];
	}
	if (!cli->script)
		return usage_error("%s", "no script named (pgbt-gen list shows them)");
	if (cli->command != CMD_RUN && cli->command != CMD_HELP)
		cli->command_arg = 0;
	if (cli->command == CMD_HELP || cli->command == CMD_RUN)
		;   /* cli->script is the script it is about */
	else if (strcmp(cli->script, "help") == 0 || strcmp(cli->script, "run") == 0)
		return usage_error(strcmp(cli->script, "help") == 0
				   ? "%s: which script? (pgbt-gen help SCRIPT; pgbt-gen list names them)"
				   : "%s: which script? (pgbt-gen run SCRIPT; pgbt-gen list names them)",
				   cli->script);
	else if (strcmp(cli->script, "list") == 0)
		cli->command = CMD_LIST;
	else if (strcmp(cli->script, "check-layouts") == 0)
		cli->command = CMD_CHECK_LAYOUTS;
	else if (strcmp(cli->script, "check-watchpoints") == 0)
		cli->command = CMD_CHECK_WATCHPOINTS;
	else if (strcmp(cli->script, "report") == 0)
		cli->command = CMD_REPORT;
	if (report_opts && cli->command != CMD_REPORT)
		return usage_error("%s", "--format, --textfile, --html and --top are options of report");
	if (cli->command == CMD_REPORT && (targets || cli->conninfo))
		return usage_error("%s", "report reads its server from the script's output: "
				   "no -p, -D, --bin or -d");
	if (cli->command == CMD_REPORT && cli->textfile_dir &&
	    access(cli->textfile_dir, W_OK) != 0)
		return usage_error("--textfile %s: not a directory we can write to", cli->textfile_dir);
	if (cli->command == CMD_REPORT && cli->html_path && html_path_bad(cli->html_path))
		return usage_error("--html %s: not a file in a directory we can write to",
				   cli->html_path);
	if ((cli->command == CMD_LIST || cli->command == CMD_CHECK_LAYOUTS ||
	     cli->command == CMD_CHECK_WATCHPOINTS || cli->command == CMD_REPORT) && cli->nparams)
		return usage_error("'%s': this command takes no parameters", cli->params[0]);
	if (cli->command == CMD_CHECK_LAYOUTS && !cli->bin)
		return usage_error("%s", "check-layouts needs --bin PATH");
	return -1;
}
