/* Map entries by key, in a small open-addressing hash per map. */
#include "store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_keys(char *const *keys, int nkeys)
{
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < nkeys; i++) {
		for (const char *c = keys[i]; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		h = (h ^ 0x1f) * 1099511628211ULL;
	}
	return h;
}

static bool same_keys(const struct rp_entry *e, char *const *keys, int nkeys)
{
	if (e->nkeys != nkeys)
		return false;
	for (int i = 0; i < nkeys; i++)
		if (strcmp(e->key[i], keys[i]) != 0)
			return false;
	return true;
}

static struct rp_mapdata *find_map(const struct rp_store *s, const char *map)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->maps[i].name, map) == 0)
			return &s->maps[i];
	return NULL;
}

const struct rp_mapdata *rp_store_map(const struct rp_store *s, const char *map)
{
	return find_map(s, map);
}

bool rp_store_empty(const struct rp_store *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->maps[i].n)
			return false;
	return true;
}

/* The slot for keys: the one holding them, or the empty one to use. */
static size_t *slot_of(const struct rp_mapdata *m, char *const *keys, int nkeys)
{
	size_t i = (size_t)(hash_keys(keys, nkeys) & (m->nslots - 1));

	for (;; i = (i + 1) & (m->nslots - 1)) {
		size_t *sl = &m->slot[i];
		if (!*sl || same_keys(&m->e[*sl - 1], keys, nkeys))
			return sl;
	}
}

static int grow_slots(struct rp_mapdata *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64;
	size_t *old = m->slot;

	if (!(m->slot = calloc(n, sizeof(*m->slot)))) {
		m->slot = old;
		return -1;
	}
	m->nslots = n;
	for (size_t i = 0; i < m->n; i++)
		*slot_of(m, m->e[i].key, m->e[i].nkeys) = i + 1;
	free(old);
	return 0;
}

const struct rp_entry *rp_store_find(const struct rp_store *s, const char *map,
				     char *const *keys, int nkeys)
{
	const struct rp_mapdata *m = find_map(s, map);
	size_t *sl;

	if (!m || !m->nslots)
		return NULL;
	sl = slot_of(m, keys, nkeys);
	return *sl ? &m->e[*sl - 1] : NULL;
}

struct rp_entry *rp_store_entry(struct rp_store *s, const char *map, char *const *keys,
				int nkeys)
{
	struct rp_mapdata *m = find_map(s, map);
	struct rp_entry *e;
	size_t *sl;

	if (!m) {
		struct rp_mapdata *maps = realloc(s->maps, (s->n + 1) * sizeof(*maps));
		if (!maps)
			return NULL;
		s->maps = maps;
		m = &maps[s->n++];
		memset(m, 0, sizeof(*m));
		snprintf(m->name, sizeof(m->name), "%s", map);
	}
	if ((m->n + 1) * 2 > m->nslots && grow_slots(m) < 0)
		return NULL;
	sl = slot_of(m, keys, nkeys);
	if (*sl)
		return &m->e[*sl - 1];
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct rp_entry *ne = realloc(m->e, cap * sizeof(*ne));
		if (!ne)
			return NULL;
		m->e = ne;
		m->cap = cap;
	}
	e = &m->e[m->n];
	memset(e, 0, sizeof(*e));
	for (int i = 0; i < nkeys; i++) {
		if (!(e->key[i] = strdup(keys[i]))) {
			while (i--)
				free(e->key[i]);
			return NULL;
		}
	}
	e->nkeys = nkeys;
	*sl = ++m->n;
	return e;
}

int rp_entry_add_bucket(struct rp_entry *e, long long lo, long long hi, double n)
{
	int i = 0;
	struct rp_bucket *b;

	while (i < e->nb && e->b[i].lo < lo)
		i++;
	if (i < e->nb && e->b[i].lo == lo) {
		e->b[i].n += n;
		return 0;
	}
	if (!(b = realloc(e->b, (size_t)(e->nb + 1) * sizeof(*b))))
		return -1;
	e->b = b;
	memmove(&b[i + 1], &b[i], (size_t)(e->nb - i) * sizeof(*b));
	b[i] = (struct rp_bucket){ lo, hi, n };
	e->nb++;
	return 0;
}

double rp_entry_hist_count(const struct rp_entry *e)
{
	double n = 0;

	for (int i = 0; i < e->nb; i++)
		n += e->b[i].n;
	return n;
}

static int merge_entry(struct rp_entry *to, const struct rp_entry *from, const struct rp_map *m,
		       bool first)
{
	if (from->s) {
		char *s = strdup(from->s);
		if (!s)
			return -1;
		free(to->s);
		to->s = s;
		return 0;
	}
	for (int i = 0; i < from->nb; i++)
		if (rp_entry_add_bucket(to, from->b[i].lo, from->b[i].hi, from->b[i].n) < 0)
			return -1;
	if (!m || m->cumulative || m->role == ROLE_AVG || m->role == ROLE_VALUE)
		to->v = from->v;
	else if (m->role == ROLE_MAX)
		to->v = first || from->v > to->v ? from->v : to->v;
	else
		to->v += from->v;
	return 0;
}

int rp_store_merge(struct rp_store *to, const struct rp_store *from, const struct rp_spec *spec)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct rp_mapdata *fm = &from->maps[i];
		const struct rp_map *m = rp_spec_map(spec, fm->name);

		/* averages of reports do not add up to the trace's */
		if (m && m->role == ROLE_AVG)
			continue;
		for (size_t k = 0; k < fm->n; k++) {
			const struct rp_entry *fe = &fm->e[k];
			bool first = !rp_store_find(to, fm->name, fe->key, fe->nkeys);
			struct rp_entry *te = rp_store_entry(to, fm->name, fe->key, fe->nkeys);

			if (!te || merge_entry(te, fe, m, first) < 0)
				return -1;
		}
	}
	return 0;
}

void rp_store_free(struct rp_store *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct rp_mapdata *m = &s->maps[i];
		for (size_t k = 0; k < m->n; k++) {
			for (int j = 0; j < m->e[k].nkeys; j++)
				free(m->e[k].key[j]);
			free(m->e[k].s);
			free(m->e[k].b);
		}
		free(m->e);
		free(m->slot);
	}
	free(s->maps);
	s->maps = NULL;
	s->n = 0;
}
