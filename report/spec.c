/* Reads a template's "//@ report" directives into a spec (report/spec.h;
 * the language is in docs/templates.md). Words are blank-separated; a
 * value may be quoted ("on CPU"). Every error names the template's line. */
#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 16

struct words {
	char w[MAX_WORDS][160];
	int n;
};

/* Splits line into words; "..." keeps blanks (KEY="a b" is one word,
 * without the quotes). False when a word is too long or a quote is open. */
static bool split_words(const char *line, struct words *ret)
{
	ret->n = 0;
	while (*line) {
		size_t o = 0;
		bool quoted = false;

		line += strspn(line, " \t");
		if (!*line)
			break;
		if (ret->n == MAX_WORDS)
			return false;
		while (*line && (quoted || (*line != ' ' && *line != '\t'))) {
			if (*line == '"') {
				quoted = !quoted;
				line++;
				continue;
			}
			if (o + 1 >= sizeof(ret->w[0]))
				return false;
			ret->w[ret->n][o++] = *line++;
		}
		if (quoted)
			return false;
		ret->w[ret->n++][o] = '\0';
	}
	return true;
}

/* "KEY=VALUE" with this KEY: its value, else NULL. */
static const char *option(const char *word, const char *key)
{
	size_t n = strlen(key);

	return strncmp(word, key, n) == 0 && word[n] == '=' ? word + n + 1 : NULL;
}

static bool is_name(const char *s, const char *extra)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !strchr(extra, *s))
			return false;
	return true;
}

static bool copy(char *dst, size_t len, const char *src)
{
	return (size_t)snprintf(dst, len, "%s", src) < len;
}

static int key_index(const struct rp_table *t, const char *key)
{
	for (int i = 0; i < t->nkeys; i++)
		if (strcmp(t->keys[i], key) == 0)
			return i;
	return -1;
}

static int table_index(const struct rp_spec *s, const char *name)
{
	for (int i = 0; i < s->ntables; i++)
		if (strcmp(s->tables[i].name, name) == 0)
			return i;
	return -1;
}

static int parse_keys(struct rp_table *t, const char *list)
{
	char buf[160], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		if (t->nkeys == RP_MAX_KEYS || !is_name(k, "") || key_index(t, k) >= 0 ||
		    !copy(t->keys[t->nkeys], sizeof(t->keys[0]), k))
			return -1;
		t->nkeys++;
	}
	return 0;
}

static const char *parse_table(struct rp_spec *s, const struct words *w)
{
	struct rp_table *t;
	char split[32] = "", text[32] = "";

	if (w->n < 2 || !is_name(w->w[1], "-"))
		return "want: table NAME [keys=K,...] [split=K] [sections=N] [text=K] [top=N] "
		       "[idle=V] [total=no] [rate] title=\"...\"";
	if (s->ntables == RP_MAX_TABLES)
		return "too many tables";
	if (table_index(s, w->w[1]) >= 0)
		return "a second table of that name";
	t = &s->tables[s->ntables];
	memset(t, 0, sizeof(*t));
	copy(t->name, sizeof(t->name), w->w[1]);
	t->split = t->text = -1;
	t->top = 10;
	t->total = true;
	for (int i = 2; i < w->n; i++) {
		const char *v;
		char *end;

		if ((v = option(w->w[i], "keys"))) {
			if (parse_keys(t, v) < 0)
				return "keys=: names (letters, digits, _) separated by commas, "
				       "each once, at most 6";
		} else if ((v = option(w->w[i], "split"))) {
			copy(split, sizeof(split), v);
		} else if ((v = option(w->w[i], "text"))) {
			copy(text, sizeof(text), v);
		} else if ((v = option(w->w[i], "top"))) {
			errno = 0;
			t->top = (int)strtol(v, &end, 10);
			if (*end || errno || t->top < 1 || t->top > 1000)
				return "top=: a number of rows, 1 to 1000";
		} else if ((v = option(w->w[i], "sections"))) {
			errno = 0;
			t->sections = (int)strtol(v, &end, 10);
			if (*end || errno || t->sections < 1 || t->sections > 1000)
				return "sections=: a number of sections, 1 to 1000";
		} else if ((v = option(w->w[i], "idle"))) {
			if (!copy(t->idle, sizeof(t->idle), v))
				return "idle=: too long";
		} else if ((v = option(w->w[i], "total"))) {
			if (strcmp(v, "no") != 0 && strcmp(v, "yes") != 0)
				return "total=: yes or no";
			t->total = strcmp(v, "yes") == 0;
		} else if (strcmp(w->w[i], "rate") == 0) {
			t->rate = true;
		} else if ((v = option(w->w[i], "title"))) {
			if (!copy(t->title, sizeof(t->title), v))
				return "title=: too long";
		} else {
			return "unknown word (want keys=, split=, sections=, text=, top=, idle=, total=, "
			       "rate, title=)";
		}
	}
	if (split[0] && (t->split = key_index(t, split)) < 0)
		return "split=: not one of its keys=";
	if (t->sections && t->split < 0)
		return "sections=: only with split=";
	if (text[0] && (t->text = key_index(t, text)) < 0)
		return "text=: not one of its keys=";
	if (!t->title[0])
		return "no title=";
	s->ntables++;
	return NULL;
}

static bool parse_role(struct rp_map *m, const char *word)
{
	static const char *const roles[] = { "sum", "count", "hist", "max", "avg", "value", "samples" };
	static const char *const units[] = { "", "ns", "us", "ms", "bytes" };
	const char *colon = strchr(word, ':');
	size_t rl = colon ? (size_t)(colon - word) : strlen(word);
	bool found = false;

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (strlen(roles[i]) == rl && strncmp(word, roles[i], rl) == 0) {
			m->role = (enum rp_role)i;
			found = true;
		}
	if (!found)
		return false;
	if (!colon)
		return true;
	for (size_t i = 1; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(colon + 1, units[i]) == 0) {
			m->unit = (enum rp_unit)i;
			return m->role != ROLE_COUNT && m->role != ROLE_SAMPLES;
		}
	return false;
}

static const char *parse_map(struct rp_spec *s, const struct words *w)
{
	struct rp_map *m;

	if (w->n < 4 || w->w[1][0] != '@' || !is_name(w->w[1] + 1, ""))
		return "want: map @NAME TABLE ROLE[:UNIT] [row=\"...\"] [metric=NAME] [cumulative]";
	if (s->nmaps == RP_MAX_MAPS)
		return "too many maps";
	if (rp_spec_map(s, w->w[1]))
		return "a second line for that map";
	m = &s->maps[s->nmaps];
	memset(m, 0, sizeof(*m));
	copy(m->name, sizeof(m->name), w->w[1]);
	if ((m->table = table_index(s, w->w[2])) < 0)
		return "no such table (declare it with \"table\" first)";
	if (!parse_role(m, w->w[3]))
		return "ROLE[:UNIT]: sum, count, hist, max, avg, value or samples; unit ns, us, ms "
		       "or bytes (none for count and samples)";
	for (int i = 4; i < w->n; i++) {
		const char *v;

		if ((v = option(w->w[i], "row"))) {
			if (!*v || !copy(m->row, sizeof(m->row), v))
				return "row=: a label, at most 63 bytes";
		} else if ((v = option(w->w[i], "metric"))) {
			if (!is_name(v, ":") || !copy(m->metric, sizeof(m->metric), v))
				return "metric=: a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)";
		} else if (strcmp(w->w[i], "cumulative") == 0) {
			m->cumulative = true;
		} else {
			return "unknown word (want row=, metric=, cumulative)";
		}
	}
	if (m->row[0] && m->role == ROLE_HIST)
		return "row=: a sum, count, max, avg or value (a histogram gets a row of its keys)";
	s->nmaps++;
	return NULL;
}

static const char *parse_names(struct rp_spec *s, const struct words *w)
{
	struct rp_names *n;

	if (w->n != 3 || !is_name(w->w[1], "") || w->w[2][0] != '@' || !is_name(w->w[2] + 1, ""))
		return "want: names KEY @MAP";
	if (s->nnames == RP_MAX_NAMES)
		return "too many names lines";
	n = &s->names[s->nnames++];
	copy(n->key, sizeof(n->key), w->w[1]);
	copy(n->map, sizeof(n->map), w->w[2]);
	return NULL;
}

static const char *parse_value(struct rp_spec *s, const struct words *w)
{
	struct rp_value *v;
	char *end;

	if (w->n != 4 || !is_name(w->w[1], ""))
		return "want: value KEY NUMBER \"NAME\"";
	if (s->nvalues == RP_MAX_VALUES)
		return "too many value lines";
	v = &s->values[s->nvalues];
	copy(v->key, sizeof(v->key), w->w[1]);
	errno = 0;
	v->number = strtoll(w->w[2], &end, 10);
	if (!w->w[2][0] || *end || errno)
		return "value: NUMBER is not an integer";
	if (!w->w[3][0] || !copy(v->name, sizeof(v->name), w->w[3]))
		return "value: NAME empty or longer than 63 bytes";
	s->nvalues++;
	return NULL;
}

int rp_spec_read(const struct pgbt_template *tpl, struct rp_spec *ret, struct pgbt_err *err)
{
	memset(ret, 0, sizeof(*ret));
	copy(ret->script, sizeof(ret->script), tpl->name);
	if (!tpl->nreport)
		return pgbt_fail(err, "%s: no report (it has no \"//@ report\" lines: "
				 "read its own output, without pgbt-gen report)", tpl->name);
	for (size_t i = 0; i < tpl->nreport; i++) {
		struct words w;
		const char *why;
		char where[96];

		pgbt_template_where(tpl, tpl->report_lines[i], where, sizeof(where));
		if (!split_words(tpl->report[i], &w) || w.n == 0)
			why = "a word too long, or a quote not closed";
		else if (strcmp(w.w[0], "table") == 0)
			why = parse_table(ret, &w);
		else if (strcmp(w.w[0], "map") == 0)
			why = parse_map(ret, &w);
		else if (strcmp(w.w[0], "names") == 0)
			why = parse_names(ret, &w);
		else if (strcmp(w.w[0], "value") == 0)
			why = parse_value(ret, &w);
		else
			why = "want table, map, names or value";
		if (why)
			return pgbt_fail(err, "%s: bad report line: %s", where, why);
	}
	for (int i = 0; i < ret->ntables; i++) {
		bool used = false;
		for (int k = 0; k < ret->nmaps; k++)
			used = used || (ret->maps[k].table == i && !ret->maps[k].row[0]);
		if (!used)
			return pgbt_fail(err, "%s: report table %s has no map (but row= ones)",
					 tpl->name, ret->tables[i].name);
	}
	return 0;
}

const struct rp_map *rp_spec_map(const struct rp_spec *s, const char *name)
{
	for (int i = 0; i < s->nmaps; i++)
		if (strcmp(s->maps[i].name, name) == 0)
			return &s->maps[i];
	return NULL;
}

const char *rp_spec_names_map(const struct rp_spec *s, const char *key)
{
	for (int i = 0; i < s->nnames; i++)
		if (strcmp(s->names[i].key, key) == 0)
			return s->names[i].map;
	return NULL;
}

bool rp_spec_is_names_map(const struct rp_spec *s, const char *name)
{
	for (int i = 0; i < s->nnames; i++)
		if (strcmp(s->names[i].map, name) == 0)
			return true;
	return false;
}

const char *rp_spec_value_name(const struct rp_spec *s, const char *key, long long number)
{
	for (int i = 0; i < s->nvalues; i++)
		if (strcmp(s->values[i].key, key) == 0 && s->values[i].number == number)
			return s->values[i].name;
	return NULL;
}

int rp_spec_value_rank(const struct rp_spec *s, const char *key, const char *value)
{
	int rank = 0;

	for (int i = 0; i < s->nvalues; i++) {
		if (strcmp(s->values[i].key, key) != 0)
			continue;
		if (strcmp(s->values[i].name, value) == 0)
			return rank;
		rank++;
	}
	return rank;
}

int rp_map_nkeys(const struct rp_spec *s, const struct rp_map *m)
{
	const struct rp_table *t = &s->tables[m->table];

	if (m->row[0])
		return t->split >= 0 ? 1 : 0;
	return t->nkeys;
}

const char *rp_unit_name(enum rp_unit u)
{
	static const char *const names[] = { "", "ns", "us", "ms", "bytes" };
	return names[u];
}

double rp_unit_scale(enum rp_unit u)
{
	switch (u) {
	case UNIT_NS: return 1e-9;
	case UNIT_US: return 1e-6;
	case UNIT_MS: return 1e-3;
	default: return 1;
	}
}

bool rp_unit_is_time(enum rp_unit u)
{
	return u == UNIT_NS || u == UNIT_US || u == UNIT_MS;
}
