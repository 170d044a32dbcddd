/* pgbt-gen report: reads bpftrace's "-f json" output of a pgbt script and
 * writes a report at each of the script's reports and at the end (text,
 * JSON lines, a Prometheus textfile). The script says who it is in its
 * first line ({{ report }}: "pgbt SCRIPT PARAMS: postmaster PID, port N,
 * data directory DIR"), and its template's "//@ report" lines say what its
 * maps mean. A report is the maps bpftrace prints together: it ends at a
 * time() (an interval probe's first word), when a map comes again, when
 * the input pauses, or ends. The HTML page is written at each report and
 * at the end, and left in place (unlike the textfile: a page to read
 * after the trace). Text just before a map (the script's own
 * heading) is left out; other text passes. */
#ifndef PGBT_REPORT_READER_H
#define PGBT_REPORT_READER_H

#include "history.h"
#include "ident.h"
#include "spec.h"
#include "store.h"

#include "lib/common/buf.h"
#include "lib/common/err.h"

#include <stdio.h>

typedef int rp_spec_loader(void *ctx, const char *script, struct rp_spec *ret,
			   struct pgbt_err *err);

struct rp_options {
	int top;                      /* rows per table section: 0 each table's top= */
	FILE *text;                   /* the report for people, or NULL */
	FILE *json;                   /* JSON lines (docs/report.md), or NULL */
	const char *textfile_dir;     /* Prometheus textfile directory, or NULL */
	const char *html_path;        /* the HTML page (report/html.h), or NULL */
	rp_spec_loader *load_spec;
	void *ctx;
	const char *input;            /* the input's name, for messages */
	double (*clock)(void);        /* seconds, for how long a report covers */
};

struct rp_reader {
	const struct rp_options *opt;
	struct rp_ident id;
	bool have_id;
	struct rp_spec spec;
	struct rp_store frame, total;
	bool frame_open;              /* maps seen since the last report */
	int reports;                  /* printed so far */
	char when[64];                /* the last time() printed */
	struct pgbt_buf pending;      /* text not yet known to be a heading */
	double since;                 /* clock at the last report (or the id) */
	double seconds;               /* covered by the reports so far */
	double lost;                  /* events bpftrace said it lost */
	long line;
	char prom_path[4200];         /* the textfile, once written */
	struct rp_history history;    /* the reports, for the HTML page's charts */
};

int rp_reader_init(struct rp_reader *r, const struct rp_options *opt);
/* One line of input (without its newline). */
int rp_reader_line(struct rp_reader *r, const char *line, size_t len, struct pgbt_err *err);
/* Nothing came for a while: what was read is complete (a report, text). */
int rp_reader_quiet(struct rp_reader *r, struct pgbt_err *err);
/* The end of input: the last report, and one for the whole trace. */
int rp_reader_end(struct rp_reader *r, struct pgbt_err *err);
/* Drops what is pending, and the textfile (its series end). */
void rp_reader_free(struct rp_reader *r);

/* The whole loop over fd, as pgbt-gen report runs it: lines of at most
 * 256 MiB, a report written as soon as its maps are all in. */
int rp_read_fd(int fd, const struct rp_options *opt, struct pgbt_err *err);

#endif
