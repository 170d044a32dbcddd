#include "layout.h"

#include "lib/common/embedded.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strict unsigned parse (decimal or 0x hex): "12x" is not a number. */
static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*ret = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

/* Splits off the next blank-separated token of *p. */
static char *next_token(char **p)
{
	char *t = *p;

	while (*t == ' ' || *t == '\t')
		t++;
	if (!*t)
		return NULL;
	*p = t + strcspn(t, " \t");
	if (**p)
		*(*p)++ = '\0';
	return t;
}

/* The machines a layout may name, each a bit of pgbt_fact.machines. */
static const struct { const char *name; unsigned bit; } machines[] = {
	{ "x86_64", PGBT_LAYOUT_MACHINE_X86_64 },
	{ "aarch64", PGBT_LAYOUT_MACHINE_AARCH64 },
};

/* A machine's bit; 0 for one no layout can name. */
static unsigned machine_bit(const char *name)
{
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
		if (name && strcmp(machines[i].name, name) == 0)
			return machines[i].bit;
	return 0;
}

/* "machine x86_64 aarch64": the bits of the named machines, 0 if one is
 * unknown or none is named. */
static unsigned parse_machines(char *p)
{
	unsigned bits = 0, bit;
	char *t;

	while ((t = next_token(&p))) {
		if (!(bit = machine_bit(t)))
			return 0;
		bits |= bit;
	}
	return bits;
}

/* 1: a directive (major, machine), 0: a fact in *f, -1: unparsable, -2: a
 * member or sizeof fact before any machine line. */
static int parse_line(char *line, struct pgbt_fact *f, int *major, unsigned *abi_machines)
{
	char *tok[4] = {0}, *p = line;
	int n = 0;

	if (strncmp(line + strspn(line, " \t"), "machine", 7) == 0) {
		p = line + strspn(line, " \t") + 7;
		if (*p != ' ' && *p != '\t')
			return -1;
		*abi_machines = parse_machines(p);
		return *abi_machines ? 1 : -1;
	}
	/* three tokens, then the rest of the line as the fourth field */
	while (n < 3 && (tok[n] = next_token(&p)))
		n++;
	while (*p == ' ' || *p == '\t')
		p++;
	if (n == 3 && *p)
		tok[3] = p;

	if (n == 2 && strcmp(tok[0], "major") == 0) {
		uint64_t v;
		if (parse_u64(tok[1], &v))
			return -1;
		*major = (int)v;
		return 1;
	}
	memset(f, 0, sizeof(*f));
	f->machines = ~0u;
	if (n >= 3 && (strcmp(tok[0], "sizeof") == 0 || strcmp(tok[0], "member") == 0)) {
		if (!*abi_machines)
			return -2;
		f->machines = *abi_machines;
	}
	if (n == 3 && !tok[3] && strcmp(tok[0], "sizeof") == 0) {
		f->kind = FACT_SIZEOF;
		snprintf(f->type, sizeof(f->type), "%s", tok[1]);
		return parse_u64(tok[2], &f->a) ? -1 : 0;
	}
	if (n == 3 && !tok[3] && strcmp(tok[0], "enumerator") == 0) {
		f->kind = FACT_ENUMERATOR;
		snprintf(f->name, sizeof(f->name), "%s", tok[1]);
		return parse_u64(tok[2], &f->a) ? -1 : 0;
	}
	if (n == 3 && tok[3] && strcmp(tok[0], "var") == 0) {
		f->kind = FACT_VAR;
		snprintf(f->name, sizeof(f->name), "%s", tok[1]);
		snprintf(f->type, sizeof(f->type), "%s", tok[2]);
		return parse_u64(tok[3], &f->a) ? -1 : 0;
	}
	if (n == 3 && tok[3] && strcmp(tok[0], "member") == 0) {
		char off[32], size[32], extra;
		f->kind = FACT_MEMBER;
		snprintf(f->type, sizeof(f->type), "%s", tok[1]);
		snprintf(f->name, sizeof(f->name), "%s", tok[2]);
		if (sscanf(tok[3], "%31s %31s %c", off, size, &extra) != 2)
			return -1;
		return (parse_u64(off, &f->a) || parse_u64(size, &f->b)) ? -1 : 0;
	}
	if (n == 3 && strcmp(tok[0], "label") == 0) {
		size_t len = strlen(tok[2]) + (tok[3] ? strlen(tok[3]) + 1 : 0) + 1;
		f->kind = FACT_LABEL;
		snprintf(f->name, sizeof(f->name), "%s", tok[1]);
		f->names = malloc(len);
		if (!f->names)
			return -1;
		snprintf(f->names, len, "%s%s%s", tok[2], tok[3] ? " " : "", tok[3] ? tok[3] : "");
		return 0;
	}
	if (n == 3 && strcmp(tok[0], "enum") == 0) {
		size_t len = strlen(tok[2]) + (tok[3] ? strlen(tok[3]) + 1 : 0) + 1;
		f->kind = FACT_ENUM;
		snprintf(f->type, sizeof(f->type), "%s", tok[1]);
		f->names = malloc(len);
		if (!f->names)
			return -1;
		snprintf(f->names, len, "%s%s%s", tok[2], tok[3] ? " " : "", tok[3] ? tok[3] : "");
		return 0;
	}
	return -1;
}

int pgbt_layout_parse(const char *origin, const char *text, size_t len,
		      struct pgbt_layout *ret, struct pgbt_err *err)
{
	size_t cap = 0;
	int lineno = 0, rc = 0;
	unsigned abi_machines = 0;
	const char *p = text, *end = text + len;

	memset(ret, 0, sizeof(*ret));
	ret->origin = origin;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4096], *hash;
		struct pgbt_fact f;

		lineno++;
		if (l >= sizeof(line))
			goto bad;
		memcpy(line, p, l);
		line[l] = '\0';
		p += l + (nl ? 1 : 0);
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		rc = parse_line(line, &f, &ret->major, &abi_machines);
		if (rc < 0)
			goto bad;
		if (rc > 0)
			continue;
		f.line = lineno;
		if (ret->n == cap) {
			struct pgbt_fact *nf;
			cap = cap ? cap * 2 : 32;
			nf = realloc(ret->facts, cap * sizeof(*nf));
			if (!nf) {
				free(f.names);
				pgbt_layout_free(ret);
				return pgbt_fail(err, "%s: out of memory", origin);
			}
			ret->facts = nf;
		}
		ret->facts[ret->n++] = f;
		ret->n_abi += f.kind == FACT_MEMBER || f.kind == FACT_SIZEOF;
	}
	if (!ret->major) {
		pgbt_layout_free(ret);
		return pgbt_fail(err, "%s: no 'major N' line", origin);
	}
	return 0;
bad:
	pgbt_layout_free(ret);
	if (rc == -2)
		return pgbt_fail(err, "%s:%d: an offset or size needs a 'machine' line before it "
				 "(the machines it holds for)", origin, lineno);
	return pgbt_fail(err, "%s:%d: cannot parse this line", origin, lineno);
}

void pgbt_layout_free(struct pgbt_layout *layout)
{
	for (size_t i = 0; i < layout->n; i++)
		free(layout->facts[i].names);
	free(layout->facts);
	layout->facts = NULL;
	layout->n = 0;
	layout->n_abi = 0;
}

/* Drops the member and sizeof facts that do not hold for machine (all of
 * them for a machine no layout names); the source's facts stay. */
static void keep_machine(struct pgbt_layout *layout, const char *machine)
{
	unsigned bit = machine_bit(machine);
	size_t kept = 0;

	layout->n_abi = 0;
	for (size_t i = 0; i < layout->n; i++) {
		struct pgbt_fact *f = &layout->facts[i];
		bool abi = f->kind == FACT_MEMBER || f->kind == FACT_SIZEOF;

		if (abi && !(f->machines & bit)) {
			free(f->names);
			continue;
		}
		layout->n_abi += abi;
		layout->facts[kept++] = *f;
	}
	layout->n = kept;
}

const struct pgbt_fact *pgbt_layout_find(const struct pgbt_layout *layout,
					 enum pgbt_fact_kind kind,
					 const char *type, const char *name)
{
	for (size_t i = 0; i < layout->n; i++) {
		const struct pgbt_fact *f = &layout->facts[i];
		if (f->kind != kind)
			continue;
		if (type && strcmp(f->type, type) != 0)
			continue;
		if (name && strcmp(f->name, name) != 0)
			continue;
		return f;
	}
	return NULL;
}

static void append(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *out, size_t outlen, const char *fmt, ...)
{
	size_t used = strlen(out);
	va_list ap;

	if (used >= outlen)
		return;
	va_start(ap, fmt);
	vsnprintf(out + used, outlen - used, fmt, ap);
	va_end(ap);
}

/* Checks an enum fact: same enumerator names in the same order. */
static int check_enum(const struct pgbt_fact *f, struct pgbt_dwarf *dw,
		      char *out, size_t outlen, struct pgbt_err *err)
{
	struct pgbt_enumerator *e = NULL;
	size_t n = 0, i = 0;
	char *names, *save = NULL;
	int bad = 0;

	if (pgbt_dwarf_enum(dw, f->type, &e, &n, err) < 0) {
		append(out, outlen, "line %d: enum %s: %s\n", f->line, f->type, err->msg);
		return 1;
	}
	names = strdup(f->names);
	for (char *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save), i++) {
		if (i >= n || strcmp(e[i].name, t) != 0) {
			append(out, outlen, "line %d: enum %s: enumerator %zu is %s in DWARF, %s here\n",
			       f->line, f->type, i, i < n ? e[i].name : "(none)", t);
			bad = 1;
			break;
		}
	}
	if (!bad && i != n) {
		append(out, outlen, "line %d: enum %s has %zu enumerators in DWARF, %zu here\n",
		       f->line, f->type, n, i);
		bad = 1;
	}
	free(names);
	free(e);
	return bad;
}

static int check_fact(const struct pgbt_fact *f, struct pgbt_dwarf *dw,
		      char *out, size_t outlen, struct pgbt_err *err)
{
	uint64_t off, size;
	int64_t value;
	char type[128];
	int ptrs;

	switch (f->kind) {
	case FACT_MEMBER:
		if (pgbt_dwarf_member(dw, f->type, f->name, &off, &size, err) < 0)
			break;
		if (off == f->a && size == f->b)
			return 0;
		append(out, outlen, "line %d: %s.%s is at %" PRIu64 " size %" PRIu64
		       " in DWARF, %" PRIu64 " size %" PRIu64 " here\n",
		       f->line, f->type, f->name, off, size, f->a, f->b);
		return 1;
	case FACT_SIZEOF:
		if (pgbt_dwarf_sizeof(dw, f->type, &size, err) < 0)
			break;
		if (size == f->a)
			return 0;
		append(out, outlen, "line %d: sizeof(%s) is %" PRIu64 " in DWARF, %" PRIu64 " here\n",
		       f->line, f->type, size, f->a);
		return 1;
	case FACT_VAR:
		if (pgbt_dwarf_var_type(dw, f->name, type, sizeof(type), &ptrs, err) < 0)
			break;
		if (strcmp(type, f->type) == 0 && (uint64_t)ptrs == f->a)
			return 0;
		append(out, outlen, "line %d: %s is %s with %d pointer(s) in DWARF, %s with %" PRIu64 " here\n",
		       f->line, f->name, type, ptrs, f->type, f->a);
		return 1;
	case FACT_ENUMERATOR:
		if (pgbt_dwarf_enumerator(dw, f->name, &value, err) < 0)
			break;
		if ((uint64_t)value == f->a)
			return 0;
		append(out, outlen, "line %d: %s is 0x%" PRIx64 " in DWARF, 0x%" PRIx64 " here\n",
		       f->line, f->name, (uint64_t)value, f->a);
		return 1;
	case FACT_ENUM:
		return check_enum(f, dw, out, outlen, err);
	case FACT_LABEL:    /* the text is from the source; DWARF has the name */
		if (pgbt_dwarf_enumerator(dw, f->name, &value, err) < 0)
			break;
		return 0;
	}
	append(out, outlen, "line %d: %s\n", f->line, err->msg);
	return 1;
}

int pgbt_layout_check(const struct pgbt_layout *layout, struct pgbt_dwarf *dw,
		      char *out, size_t outlen, size_t *ret_checked,
		      struct pgbt_err *err)
{
	int bad = 0;

	if (outlen)
		out[0] = '\0';
	for (size_t i = 0; i < layout->n; i++)
		bad += check_fact(&layout->facts[i], dw, out, outlen, err);
	*ret_checked = layout->n;
	return bad;
}

/* "lib/types/layouts/17.layout" and "lib/types/layouts/17-waits.layout"
 * belong to 17. */
static int file_major(const char *path)
{
	const char *base = "lib/types/layouts/", *p;
	size_t l = strlen(path);
	int major = 0;

	if (strncmp(path, base, strlen(base)) != 0 || l < 8 || strcmp(path + l - 7, ".layout") != 0)
		return 0;
	for (p = path + strlen(base); *p >= '0' && *p <= '9'; p++)
		major = major * 10 + (*p - '0');
	return (*p == '.' || *p == '-') ? major : 0;
}

static int merge(struct pgbt_layout *into, struct pgbt_layout *from)
{
	struct pgbt_fact *f = realloc(into->facts, (into->n + from->n) * sizeof(*f));

	if (!f && into->n + from->n) {
		pgbt_layout_free(from);
		return -1;
	}
	into->facts = f;
	memcpy(into->facts + into->n, from->facts, from->n * sizeof(*f));
	into->n += from->n;
	into->n_abi += from->n_abi;
	free(from->facts);   /* the enum name lists moved to into */
	from->facts = NULL;
	from->n = 0;
	return 0;
}

/* --layouts-dir: layout files read from here instead of the built-in ones. */
static char layouts_dir[PATH_MAX];
static char layouts_origin[PATH_MAX + 32];

void pgbt_layout_set_dir(const char *dir)
{
	snprintf(layouts_dir, sizeof(layouts_dir), "%s", dir ? dir : "");
	snprintf(layouts_origin, sizeof(layouts_origin), "layout from %s", layouts_dir);
}

/* The layout files of major in layouts_dir, merged into ret. */
static int layout_from_dir(int major, struct pgbt_layout *ret, bool *found,
			   struct pgbt_err *err)
{
	char path[PATH_MAX * 2], name[PATH_MAX + 16], *text;
	struct dirent *de;
	DIR *d = opendir(layouts_dir);
	int rc = 0;

	if (!d)
		return pgbt_fail(err, "--layouts-dir %s: %s", layouts_dir, strerror(errno));
	while (rc == 0 && (de = readdir(d))) {
		struct pgbt_layout one;
		size_t len;
		FILE *f;

		snprintf(name, sizeof(name), "lib/types/layouts/%s", de->d_name);
		if (file_major(name) != major)
			continue;
		snprintf(path, sizeof(path), "%s/%s", layouts_dir, de->d_name);
		if (!(f = fopen(path, "r")) || !(text = malloc(1 << 20))) {
			rc = pgbt_fail(err, "%s: cannot read: %s", path, strerror(errno));
			if (f)
				fclose(f);
			break;
		}
		len = fread(text, 1, (1 << 20) - 1, f);
		fclose(f);
		text[len] = '\0';
		if (pgbt_layout_parse(path, text, len, &one, err) < 0 || merge(ret, &one) < 0)
			rc = -1;
		else
			*found = true;
		free(text);
	}
	closedir(d);
	return rc;
}

int pgbt_layout_builtin(int major, const char *machine, struct pgbt_layout *ret,
			struct pgbt_err *err)
{
	bool found = false;

	memset(ret, 0, sizeof(*ret));
	if (layouts_dir[0]) {
		if (layout_from_dir(major, ret, &found, err) < 0) {
			pgbt_layout_free(ret);
			return -1;
		}
		keep_machine(ret, machine);
		ret->major = major;
		ret->origin = layouts_origin;
		return found ? 0 : 1;
	}
	for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++) {
		struct pgbt_layout one;
		if (file_major(e->path) != major)
			continue;
		if (pgbt_layout_parse(e->path, e->data, e->len, &one, err) < 0 ||
		    merge(ret, &one) < 0) {
			pgbt_layout_free(ret);
			return -1;
		}
		found = true;
	}
	keep_machine(ret, machine);
	ret->major = major;
	ret->origin = "built-in layout";
	return found ? 0 : 1;
}

void pgbt_layout_builtin_majors(const char *machine, char *ret, size_t len)
{
	size_t used = 0;
	int last = 0;

	ret[0] = '\0';
	for (const struct pgbt_embedded *e = pgbt_embedded_files; e->path; e++) {
		struct pgbt_layout layout;
		struct pgbt_err err;
		int major = file_major(e->path);

		if (!major || major == last || used >= len ||
		    pgbt_layout_builtin(major, machine, &layout, &err) != 0)
			continue;
		if (layout.n_abi)
			used += (size_t)snprintf(ret + used, len - used, "%s%d", used ? ", " : "", major);
		pgbt_layout_free(&layout);
		last = major;
	}
}
