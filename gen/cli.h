/* Command line of pgbt-gen: options, and the commands besides rendering. */
#ifndef PGBT_CLI_H
#define PGBT_CLI_H

#include "lib/common/err.h"
#include "lib/target/target.h"
#include "lib/template/template.h"

#include <stdbool.h>
#include <sys/types.h>

enum cli_command { CMD_RENDER, CMD_RUN, CMD_LIST, CMD_HELP, CMD_CHECK_LAYOUTS, CMD_CHECK_WATCHPOINTS,
		   CMD_REPORT };
enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_NONE };

struct cli {
	enum cli_command command;
	const char *script;      /* for help and run: the script it is about */
	pid_t pid;               /* -p, 0 when not given */
	const char *datadir;     /* -D */
	const char *bin;         /* --bin */
	const char *scripts_dir; /* --scripts-dir: templates from files */
	const char *conninfo;    /* -d: names from the server's catalog (libpq) */
	const char *bpftrace;    /* --bpftrace PATH|VERSION (or $PGBT_BPFTRACE) */
	bool check_with_gdb;     /* --check-with gdb[-if-able] */
	bool check_strict;       /* every fact must be answered (not -if-able) */
	bool resolver_gdb;       /* --resolver gdb: type facts from gdb, not libdw */
	enum report_format report_format;   /* report: --format */
	const char *textfile_dir;           /* report: --textfile DIR */
	const char *html_path;              /* report: --html FILE */
	int report_top;                     /* report: --top N, 0 each table's */
	const char *params[PGBT_MAX_PARAMS * 2];
	int nparams;
	char **argv;             /* the command line, for the Run line */
	int argc;
	int command_arg;             /* argv's index of the word "run" or "help", or 0 */
};

/* What a rendering says besides its text: how to run it. */
struct cli_rendered {
	pid_t run_pid;           /* bpftrace -p: the process it follows, or 0 */
	bool uprobes_scoped;     /* ... and that bpftrace keeps uprobes to it */
	char command[1024];      /* the pgbt-gen command that renders it */
	char bpftrace[PATH_MAX]; /* the program rendered for, "" if a version */
};

/* Returns -1 when there is a command to run, else the exit code to
 * return at once (0 after --help/--version, 2 after a usage error). */
int cli_parse(struct cli *cli, int argc, char **argv);

int cli_load_template(const struct cli *cli, const char *name,
		      struct pgbt_template *ret, struct pgbt_err *err);
int cli_open_target(const struct cli *cli, struct pgbt_target *ret, struct pgbt_err *err);

/* The script cli->script rendered for the target, into *ret (malloc'd);
 * info (may be NULL) says how to run it (render.c). */
int cli_render(const struct cli *cli, char **ret, struct cli_rendered *info,
	       struct pgbt_err *err);

/* "CMD | sudo bpftrace -p PID -" for info, into out. */
void cli_run_command(const struct cli_rendered *info, char *out, size_t len);

/* pgbt-gen run SCRIPT (run.c): rendered, then bpftrace runs it. */
int cli_run(const struct cli *cli);

int cli_list(const struct cli *cli);
/* "running server, DWARF or layout, ...": what a script needs, for people. */
void cli_needs_text(const struct pgbt_needs *n, char *out, size_t len);
/* pgbt-gen help SCRIPT (help.c). */
int cli_help(const struct cli *cli);
/* The facts the rendering resolved (rs) asked of gdb (check_gdb.c); on
 * success a line saying so joins the provenance block in *text. */
int cli_check_with_gdb(const struct pgbt_target *t, const struct pgbt_resolved *rs, bool strict,
		       char **text, struct pgbt_err *err);
int cli_check_layouts(const struct cli *cli);

/* pgbt-gen check-watchpoints: whether hardware watchpoints fire here (exit
 * 0), do not (1, saying so on stderr), or could not be tested (2)
 * (check_watchpoints.c). */
int cli_check_watchpoints(void);

/* pgbt-gen report: bpftrace -f json on stdin, a report out (report.c). */
int cli_report(const struct cli *cli);

#endif
