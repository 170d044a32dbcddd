/* The reader's loop (report/reader.h): messages in, reports out. */
#include "reader.h"

#include "html.h"
#include "input.h"
#include "jsonl.h"
#include "prom.h"
#include "text.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QUIET_MS 250
#define MAX_LINE (256u << 20)

static double wall_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int rp_reader_init(struct rp_reader *r, const struct rp_options *opt)
{
	memset(r, 0, sizeof(*r));
	r->opt = opt;
	return 0;
}

static double now(const struct rp_reader *r)
{
	return r->opt->clock ? r->opt->clock() : wall_clock();
}

static int write_out(FILE *f, const struct pgbt_buf *b, const char *what, struct pgbt_err *err)
{
	if (b->oom)
		return pgbt_fail(err, "out of memory");
	if (b->len && (fwrite(b->s, 1, b->len, f) != b->len || fflush(f) == EOF))
		return pgbt_fail(err, "%s: write failed: %s", what, strerror(errno));
	return 0;
}

/* Text that was not a heading goes out as it came (text output only). */
static int flush_pending(struct rp_reader *r, struct pgbt_err *err)
{
	int rc = 0;

	if (r->opt->text && r->pending.len)
		rc = write_out(r->opt->text, &r->pending, "stdout", err);
	r->pending.len = 0;
	return rc;
}

/* "report 3, 2.0 s" or "the whole trace, 61.0 s", with the script's time. */
static void heading(const struct rp_reader *r, bool whole, double seconds, char *out, size_t len)
{
	char secs[32] = "";

	if (seconds >= 0.05)
		snprintf(secs, sizeof(secs), ", %.1f s", seconds);
	if (whole && !r->reports)
		snprintf(out, len, "== %s: the whole trace%s ==", r->id.script, secs);
	else if (whole)
		snprintf(out, len, "== %s: the whole trace (%d reports%s) ==", r->id.script,
			 r->reports, secs);
	else
		snprintf(out, len, "== %s%s%s: report %d%s ==", r->when, r->when[0] ? " " : "",
			 r->id.script, r->reports, secs);
}

/* How long the report now ending covers: the script's interval when it
 * printed it, else the time since the last one. */
static double covered(const struct rp_reader *r, bool at_end)
{
	const char *iv = rp_ident_param(&r->id, "interval");
	double t = now(r) - r->since;

	if (!at_end && iv && atoi(iv) > 0)
		return atoi(iv);
	return t > 0 ? t : 0;
}

static int write_report(struct rp_reader *r, const struct rp_store *store, bool whole,
			double seconds, struct pgbt_err *err)
{
	struct pgbt_buf b = {0};
	char head[256];
	int rc = 0;

	heading(r, whole, seconds, head, sizeof(head));
	if (r->opt->text) {
		if (rp_text_report(&b, &r->spec, store, &r->total, head, seconds, r->opt->top) < 0)
			rc = pgbt_fail(err, "out of memory");
		if (!rc && r->lost > 0)
			pgbt_buf_printf(&b, "(bpftrace lost %.0f events so far: figures are low)\n",
					r->lost);
		if (!rc)
			rc = write_out(r->opt->text, &b, "stdout", err);
	}
	pgbt_buf_free(&b);
	if (!rc && r->opt->json)
		rc = rp_jsonl_write(r->opt->json, &r->id, &r->spec, store, &r->total, r->reports,
				    whole, r->when, seconds, err);
	return rc;
}

/* The page, from the whole trace so far and the reports kept for its
 * charts; seconds: what they cover. */
static int write_html(struct rp_reader *r, bool done, double seconds, struct pgbt_err *err)
{
	struct rp_page p = {
		.id = &r->id, .spec = &r->spec, .total = &r->total, .history = &r->history,
		.reports = r->reports, .seconds = seconds, .lost = r->lost, .top = r->opt->top,
		.done = done,
	};

	return rp_html_write(r->opt->html_path, &p, err);
}

/* The maps read since the last report make one: written, added to the
 * totals, and the textfile rewritten from them. */
static int end_report(struct rp_reader *r, bool at_end, struct pgbt_err *err)
{
	double seconds = covered(r, at_end);

	if (!r->frame_open)
		return 0;
	r->reports++;
	if (rp_store_merge(&r->total, &r->frame, &r->spec) < 0)
		return pgbt_fail(err, "out of memory");
	r->seconds += seconds;
	if (write_report(r, &r->frame, false, seconds, err) < 0)
		return -1;
	if (r->opt->textfile_dir &&
	    rp_prom_write(r->opt->textfile_dir, &r->id, &r->spec, &r->total, &r->frame,
			  r->prom_path, sizeof(r->prom_path), err) < 0)
		return -1;
	if (r->opt->html_path) {
		if (rp_history_add(&r->history, &r->spec, &r->frame, &r->total, r->reports, r->when,
				   seconds) < 0)
			return pgbt_fail(err, "out of memory");
		if (write_html(r, false, r->seconds, err) < 0)
			return -1;
	}
	rp_store_free(&r->frame);
	r->frame_open = false;
	r->when[0] = '\0';
	r->since = now(r);
	return 0;
}

/* Text: a heading when maps follow (left out), else passed on. A time()
 * starts a report (interval probes print one first): what came before it
 * is complete. */
static int on_text(struct rp_reader *r, const struct rp_msg *m, struct pgbt_err *err)
{
	struct rp_ident id;

	if (m->kind == RP_MSG_TIME) {
		size_t n = strspn(m->text, "\n ");
		if (r->frame_open && end_report(r, false, err) < 0)
			return -1;
		if (flush_pending(r, err) < 0)
			return -1;
		snprintf(r->when, sizeof(r->when), "%s", m->text + n);
		r->when[strcspn(r->when, "\n")] = '\0';
		while (r->when[0] && r->when[strlen(r->when) - 1] == ' ')
			r->when[strlen(r->when) - 1] = '\0';
	}
	if (!r->have_id && rp_ident_parse(m->text, &id)) {
		if (r->opt->load_spec(r->opt->ctx, id.script, &r->spec, err) < 0)
			return -1;
		r->id = id;
		r->have_id = true;
		r->since = now(r);
	}
	pgbt_buf_add(&r->pending, m->text, strlen(m->text));
	return 0;
}

/* The last line of text before a map is its heading (time() and printf
 * make one line): left out; the lines before it pass. */
static int drop_heading(struct rp_reader *r, struct pgbt_err *err)
{
	struct pgbt_buf *p = &r->pending;
	size_t end = p->len;

	while (end && p->s[end - 1] == '\n')
		end--;
	while (end && p->s[end - 1] != '\n')
		end--;
	p->len = end;
	return flush_pending(r, err);
}

static int on_map(struct rp_reader *r, const struct rp_msg *m, struct pgbt_err *err)
{
	if (!r->have_id)
		return pgbt_fail(err, "%s before the script's first line (\"pgbt SCRIPT ...: "
				 "postmaster ...\"): pipe the JSON of a script pgbt-gen rendered, "
				 "from its start", m->map);
	/* the same map again: a new report, without a time() */
	if (r->frame_open && rp_store_map(&r->frame, m->map) &&
	    !rp_spec_is_names_map(&r->spec, m->map) && end_report(r, false, err) < 0)
		return -1;
	if (drop_heading(r, err) < 0)
		return -1;
	if (rp_msg_to_store(m, &r->spec, &r->frame, err) < 0)
		return -1;
	r->frame_open = true;
	return 0;
}

int rp_reader_line(struct rp_reader *r, const char *line, size_t len, struct pgbt_err *err)
{
	struct rp_msg m;
	int rc = 0;

	r->line++;
	if (rp_msg_parse(line, len, &m, err) < 0)
		return pgbt_fail_prefix(err, "%s:%ld", r->opt->input, r->line);
	switch (m.kind) {
	case RP_MSG_NONE:
		break;
	case RP_MSG_TEXT:
	case RP_MSG_TIME:
		rc = on_text(r, &m, err);
		break;
	case RP_MSG_MAP:
		rc = on_map(r, &m, err);
		break;
	case RP_MSG_LOST:
		r->lost += m.lost;
		break;
	case RP_MSG_PROBLEM:
		fprintf(stderr, "pgbt-gen report: %s\n", m.text);
		break;
	}
	rp_msg_free(&m);
	if (rc < 0)
		return pgbt_fail_prefix(err, "%s:%ld", r->opt->input, r->line);
	return 0;
}

int rp_reader_quiet(struct rp_reader *r, struct pgbt_err *err)
{
	if (r->frame_open && end_report(r, false, err) < 0)
		return -1;
	return flush_pending(r, err);
}

int rp_reader_end(struct rp_reader *r, struct pgbt_err *err)
{
	if (r->frame_open && end_report(r, true, err) < 0)
		return -1;
	if (flush_pending(r, err) < 0)
		return -1;
	if (!r->have_id)
		return pgbt_fail(err, "%s: no report: no line \"pgbt SCRIPT ...: postmaster ...\": "
				 "not the bpftrace -f json of a script with a report "
				 "(pgbt-gen help SCRIPT says whether it has one)", r->opt->input);
	if (r->reports > 1 && write_report(r, &r->total, true, r->seconds, err) < 0)
		return -1;
	if (r->reports == 0 && write_report(r, &r->total, true, covered(r, true), err) < 0)
		return -1;      /* nothing seen, said so */
	if (r->opt->html_path &&
	    write_html(r, true, r->reports ? r->seconds : covered(r, true), err) < 0)
		return -1;
	return 0;
}

void rp_reader_free(struct rp_reader *r)
{
	if (r->prom_path[0])
		unlink(r->prom_path);
	rp_store_free(&r->frame);
	rp_store_free(&r->total);
	rp_history_free(&r->history);
	pgbt_buf_free(&r->pending);
}

/* ---- the loop over a file descriptor -------------------------------------- */

int rp_read_fd(int fd, const struct rp_options *opt, struct pgbt_err *err)
{
	struct rp_reader r;
	char *buf = NULL;
	size_t len = 0, cap = 0, start;
	int rc = -1;

	rp_reader_init(&r, opt);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *nl;

		if (poll(&p, 1, QUIET_MS) == 0) {
			if (rp_reader_quiet(&r, err) < 0)
				goto out;
			continue;
		}
		if (len + 65536 > cap) {
			char *nb;
			if (cap >= MAX_LINE) {
				pgbt_fail(err, "%s:%ld: a line longer than 256 MiB", opt->input, r.line + 1);
				goto out;
			}
			cap = cap ? cap * 2 : 1 << 20;
			if (!(nb = realloc(buf, cap))) {
				pgbt_fail(err, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pgbt_fail(err, "%s: %s", opt->input, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		start = 0;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			if (rp_reader_line(&r, buf + start, (size_t)(nl - buf) - start, err) < 0)
				goto out;
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	if (len && rp_reader_line(&r, buf, len, err) < 0)
		goto out;
	rc = rp_reader_end(&r, err);
out:
	free(buf);
	rp_reader_free(&r);
	return rc;
}
