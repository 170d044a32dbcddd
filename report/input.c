/* bpftrace JSON messages (report/input.h). The message types are those of
 * bpftrace's json output from 0.17 to 0.27 (src/output.cpp, later
 * src/output/json.cpp); an unknown one is an error, as its meaning is. */
#include "input.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ignored[] = { "attached_probes", "test_result", NULL };
static const char *const texts[] = { "printf", "cat", "join", "syscall", "value", NULL };
static const char *const maps[] = { "map", "hist", "stats", NULL };
static const char *const problems[] = { "helper_error", "runtime_error", "errorf", "warnf", NULL };

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* A number as bpftrace prints it: a JSON number, or a string of digits
 * where a double could not hold it (0.26 and later). */
static bool number_of(struct json_object *o, double *ret)
{
	const char *s;
	char *end;

	switch (json_object_get_type(o)) {
	case json_type_int:
	case json_type_double:
		*ret = json_object_get_double(o);
		return isfinite(*ret);
	case json_type_string:
		s = json_object_get_string(o);
		errno = 0;
		*ret = strtod(s, &end);
		return *s && !*end && !errno && isfinite(*ret);
	default:
		return false;
	}
}

void rp_msg_free(struct rp_msg *m)
{
	if (m->root)
		json_object_put(m->root);
	memset(m, 0, sizeof(*m));
}

static int parse_map_message(struct rp_msg *ret, struct json_object *data, struct pgbt_err *err)
{
	int n = 0;

	if (!json_object_is_type(data, json_type_object))
		return pgbt_fail(err, "a %s message whose data is not an object", ret->type);
	json_object_object_foreach(data, name, value) {
		if (n++)
			return pgbt_fail(err, "a %s message with more than one map", ret->type);
		if (name[0] != '@' || strlen(name) >= sizeof(ret->map))
			return pgbt_fail(err, "a %s message for '%.64s', not a map (@NAME)",
					 ret->type, name);
		snprintf(ret->map, sizeof(ret->map), "%s", name);
		ret->data = value;
	}
	if (!n)
		return pgbt_fail(err, "a %s message without a map", ret->type);
	ret->kind = RP_MSG_MAP;
	return 0;
}

static void describe_problem(struct rp_msg *ret, const char *type, struct json_object *root)
{
	struct json_object *o;

	if (json_object_object_get_ex(root, "data", &o) && json_object_is_type(o, json_type_string))
		snprintf(ret->problem, sizeof(ret->problem), "bpftrace %s: %s", type,
			 json_object_get_string(o));
	else
		snprintf(ret->problem, sizeof(ret->problem), "bpftrace %s: %s", type,
			 json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	ret->text = ret->problem;
	ret->kind = RP_MSG_PROBLEM;
}

/* Blanks at s, at most n bytes (s need not end with a NUL). */
static size_t blanks(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i;
}

int rp_msg_parse(const char *line, size_t len, struct rp_msg *ret, struct pgbt_err *err)
{
	struct json_tokener *tok;
	struct json_object *type, *data = NULL;
	const char *t;
	size_t blank = blanks(line, len), end;

	memset(ret, 0, sizeof(*ret));
	if (blank >= len)
		return 0;                  /* bpftrace 0.17's blank lines */
	if (memchr(line, '\0', len))
		return pgbt_fail(err, "not JSON (a NUL byte): run bpftrace with -f json");
	if (!(tok = json_tokener_new()))
		return pgbt_fail(err, "out of memory");
	if (len > INT_MAX) {
		json_tokener_free(tok);
		return pgbt_fail(err, "a line longer than 2 GiB");
	}
	ret->root = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!ret->root || json_tokener_get_error(tok) != json_tokener_success ||
	    end + blanks(line + end, len - end) < len) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		json_tokener_free(tok);
		rp_msg_free(ret);
		if (e == json_tokener_continue)
			return pgbt_fail(err, "not JSON (cut short): run bpftrace with -f json");
		return pgbt_fail(err, "not JSON (%s): run bpftrace with -f json",
				 e == json_tokener_success ? "text after the object" :
				 json_tokener_error_desc(e));
	}
	json_tokener_free(tok);
	if (!json_object_is_type(ret->root, json_type_object) ||
	    !json_object_object_get_ex(ret->root, "type", &type) ||
	    !json_object_is_type(type, json_type_string)) {
		rp_msg_free(ret);
		return pgbt_fail(err, "JSON, but not a bpftrace message (no \"type\")");
	}
	t = json_object_get_string(type);
	json_object_object_get_ex(ret->root, "data", &data);
	if (one_of(t, ignored))
		return 0;
	if (one_of(t, texts) || strcmp(t, "time") == 0) {
		ret->kind = strcmp(t, "time") == 0 ? RP_MSG_TIME : RP_MSG_TEXT;
		ret->text = data && json_object_is_type(data, json_type_string) ?
			json_object_get_string(data) :
			json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN);
		return 0;
	}
	if (strcmp(t, "lost_events") == 0) {
		struct json_object *c = NULL;
		/* 0.17: {"data": {"events": N}}; 0.26: {"count": N, ...} */
		if (!json_object_object_get_ex(ret->root, "count", &c) && data)
			json_object_object_get_ex(data, "events", &c);
		if (!c || !number_of(c, &ret->lost)) {
			rp_msg_free(ret);
			return pgbt_fail(err, "a lost_events message without a count");
		}
		ret->kind = RP_MSG_LOST;
		return 0;
	}
	if (one_of(t, problems)) {
		describe_problem(ret, t, ret->root);
		return 0;
	}
	if (one_of(t, maps)) {
		ret->type = strcmp(t, "map") == 0 ? "map" : strcmp(t, "hist") == 0 ? "hist" : "stats";
		if (!data || parse_map_message(ret, data, err) < 0) {
			if (!data)
				pgbt_fail(err, "a %s message without data", t);
			rp_msg_free(ret);
			return -1;
		}
		return 0;
	}
	pgbt_fail(err, "unknown bpftrace message type '%.40s' (a bpftrace newer than this "
		  "reader?)", t);
	rp_msg_free(ret);
	return -1;
}

/* ---- into the store ----------------------------------------------------- */

/* Splits key into n fields at commas: the fields before `text` take one
 * comma each from the left, those after it one each from the right, and
 * `text` (which may hold commas: a query) the rest. */
static int split_key(char *key, int n, int text, char **ret)
{
	char *left = key, *right = key + strlen(key);

	for (int i = 0; i < text; i++) {
		char *c = strchr(left, ',');
		if (!c)
			return -1;
		*c = '\0';
		ret[i] = left;
		left = c + 1;
	}
	for (int i = n - 1; i > text; i--) {
		char *c = right;
		while (c > left && c[-1] != ',')
			c--;
		if (c == left)
			return -1;
		c[-1] = '\0';
		ret[i] = c;
		right = c - 1;
	}
	ret[text] = left;
	return 0;
}

static int set_hist(struct rp_entry *e, struct json_object *buckets, struct pgbt_err *err)
{
	size_t n;

	if (!json_object_is_type(buckets, json_type_array))
		return pgbt_fail(err, "a histogram that is not a list of buckets");
	n = json_object_array_length(buckets);
	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(buckets, i), *o;
		double lo = 0, hi = 0, count = 0;
		bool has_lo, has_hi;

		if (!json_object_is_type(b, json_type_object) ||
		    !json_object_object_get_ex(b, "count", &o) || !number_of(o, &count) || count < 0)
			return pgbt_fail(err, "a histogram bucket without a count");
		has_lo = json_object_object_get_ex(b, "min", &o) && number_of(o, &lo);
		has_hi = json_object_object_get_ex(b, "max", &o) && number_of(o, &hi);
		if ((!has_lo && !has_hi) || (has_lo && has_hi && hi < lo) ||
		    fabs(lo) > 9.2e18 || fabs(hi) > 9.2e18)
			return pgbt_fail(err, "a histogram bucket without bounds");
		if (rp_entry_add_bucket(e, has_lo ? (long long)lo : RP_BELOW,
					has_hi ? (long long)hi : LLONG_MAX, count) < 0)
			return pgbt_fail(err, "out of memory");
	}
	return 0;
}

/* One value of map m under fields key into store. */
static int set_value(struct rp_store *store, const struct rp_msg *msg, const struct rp_map *m,
		     bool names, char **key, int nkeys, struct json_object *v, struct pgbt_err *err)
{
	struct rp_entry *e = rp_store_entry(store, msg->map, key, nkeys);
	struct json_object *o;

	if (!e)
		return pgbt_fail(err, "out of memory");
	if (names || (m->role == ROLE_VALUE && json_object_is_type(v, json_type_string))) {
		if (!json_object_is_type(v, json_type_string))
			return pgbt_fail(err, "%s: a name that is not a string", msg->map);
		free(e->s);
		if (!(e->s = strdup(json_object_get_string(v))))
			return pgbt_fail(err, "out of memory");
		return 0;
	}
	if (m->role == ROLE_HIST) {
		if (strcmp(msg->type, "hist") != 0)
			return pgbt_fail(err, "%s: a %s message for a histogram", msg->map, msg->type);
		return set_hist(e, v, err);
	}
	if (strcmp(msg->type, "hist") == 0)
		return pgbt_fail(err, "%s: a histogram, where the script keeps a number", msg->map);
	/* avg() prints as "stats" too, its value a plain number */
	if (strcmp(msg->type, "stats") == 0 && json_object_is_type(v, json_type_object)) {
		const char *field = m->role == ROLE_COUNT ? "count" :
				    m->role == ROLE_AVG ? "average" : "total";
		if (!json_object_object_get_ex(v, field, &o) || !number_of(o, &e->v))
			return pgbt_fail(err, "%s: stats without \"%s\"", msg->map, field);
		return 0;
	}
	if (!number_of(v, &e->v))
		return pgbt_fail(err, "%s: a value that is not a number", msg->map);
	return 0;
}

int rp_msg_to_store(const struct rp_msg *msg, const struct rp_spec *spec, struct rp_store *store,
		    struct pgbt_err *err)
{
	const struct rp_map *m = rp_spec_map(spec, msg->map);
	bool names = rp_spec_is_names_map(spec, msg->map);
	int nkeys = names ? 1 : m ? rp_map_nkeys(spec, m) : 0, text;

	if (!m && !names)
		return pgbt_fail(err, "map %s is not one of %s's (its \"//@ report\" lines name "
				 "them): the JSON of another script?", msg->map, spec->script);
	if (nkeys == 0)
		return set_value(store, msg, m, names, NULL, 0, msg->data, err);
	text = names || m->row[0] ? 0 : spec->tables[m->table].text;
	if (text < 0)
		text = nkeys - 1;     /* the last key: a name, which may hold a comma */
	if (!json_object_is_type(msg->data, json_type_object))
		return pgbt_fail(err, "%s: keyed by %d field%s, but printed without keys", msg->map,
				 nkeys, nkeys > 1 ? "s" : "");
	json_object_object_foreach(msg->data, k, v) {
		char *copy = strdup(k), *fields[RP_MAX_KEYS];
		int rc;

		if (!copy)
			return pgbt_fail(err, "out of memory");
		if (split_key(copy, nkeys, text, fields) < 0) {
			pgbt_fail(err, "%s: key '%.80s' has fewer than the %d fields the script "
				  "keys it by", msg->map, k, nkeys);
			free(copy);
			return -1;
		}
		rc = set_value(store, msg, m, names, fields, nkeys, v, err);
		free(copy);
		if (rc < 0)
			return -1;
	}
	return 0;
}
