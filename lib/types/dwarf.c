/* Types from DWARF through libdwfl (see dwarf.h).
 *
 * libdwfl does the finding: the file itself, then by build-id and
 * .gnu_debuglink under the debuginfo path, then debuginfod. Names are
 * found through lib/types/dwarf_index.c, which reads each unit's top-level DIEs
 * once (dwarf_siblingof jumps over function bodies) and only as far as
 * the questions need; this file answers from the DIEs it finds. */
#include "dwarf.h"
#include "dwarf_index.h"

/* elfutils' own <dwarf.h> (DW_TAG_*...), which elfutils installs next to
 * its own directory; this folder's dwarf.h is "dwarf.h". */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What libdwfl searches when no path is given (its DEFAULT_DEBUGINFO_PATH):
 * the file's directory, its .debug subdirectory, then /usr/lib/debug. */
#define DEFAULT_DEBUGINFO_PATH ":.debug:/usr/lib/debug"

/* Guards against cycles in corrupt type chains. */
#define MAX_TYPE_CHAIN 64
/* Dimensions of one array type we index through. */
#define MAX_DIMS 16

struct pgbt_dwarf {
	char *path;
	char *debuginfo_path;  /* PGBT_DEBUGINFO_PATH, or NULL: the default */
	Dwfl_Callbacks cb;     /* libdwfl keeps a pointer to it */
	Dwfl *dwfl;
	Dwarf *dwarf;
	const char *source;    /* the separate debug file, or path */
	struct dwarf_index *index;
};

static bool is_declaration(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_declaration);
}

static bool name_is(Dwarf_Die *die, const char *name)
{
	const char *n = dwarf_diename(die);

	return n && strcmp(n, name) == 0;
}

/* The DIE named NAME that WANT describes; false when there is none. */
static bool dwarf__find(struct pgbt_dwarf *dw, enum want want, int tag,
			const char *name, Dwarf_Die *ret)
{
	return dwarf_index_find(dw->index, want, tag, name, ret);
}

/* --- types -------------------------------------------------------------- */

/* The DIE DW_AT_type points to; false for void (no DW_AT_type). */
static bool die__type(Dwarf_Die *die, Dwarf_Die *ret)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr))
		return false;
	return dwarf_formref_die(&attr, ret) != NULL;
}

/* A struct, union or enum that a unit only declares: its members are in
 * the unit that defines it, found by tag and name. */
static int dwarf__complete(struct pgbt_dwarf *dw, Dwarf_Die *die,
			   struct pgbt_err *err)
{
	const char *name;

	if (!is_declaration(die))
		return 0;
	name = dwarf_diename(die);
	if (!name)
		return pgbt_fail(err, "an anonymous type is only declared in the DWARF of %s",
				 dw->source);
	if (!dwarf__find(dw, WANT_TAG, dwarf_tag(die), name, die))
		return pgbt_fail(err, "'%s' is only declared, never defined, in the DWARF of %s",
				 name, dw->source);
	return 0;
}

/* Follows typedefs and qualifiers from DIE to the type they stand for,
 * completed if it was only declared. */
static int dwarf__peel(struct pgbt_dwarf *dw, Dwarf_Die *die, const char *what,
		       struct pgbt_err *err)
{
	if (dwarf_peel_type(die, die) != 0)
		return pgbt_fail(err, "%s is void or has a broken type in the DWARF of %s",
				 what, dw->source);
	return dwarf__complete(dw, die, err);
}

/* TYPE as a typedef name or a tag, peeled and completed. */
static int dwarf__type(struct pgbt_dwarf *dw, const char *type, Dwarf_Die *ret,
		       struct pgbt_err *err)
{
	if (!dwarf__find(dw, WANT_TYPE, 0, type, ret))
		return pgbt_fail_code(err, PGBT_ENOTFOUND, "no type '%s' in the DWARF of %s", type,
				      dw->source);
	return dwarf__peel(dw, ret, type, err);
}

static int type__size(Dwarf_Die *type, uint64_t *ret)
{
	Dwarf_Word size;
	int bytes;

	if (dwarf_aggregate_size(type, &size) == 0) {
		*ret = size;
		return 0;
	}
	bytes = dwarf_bytesize(type);
	if (bytes < 0)
		return -1;
	*ret = (uint64_t)bytes;
	return 0;
}

static bool is_aggregate(Dwarf_Die *type)
{
	int tag = dwarf_tag(type);

	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* --- member paths ------------------------------------------------------- */

/* One step of a member path: ".name" (or the leading "name") or "[N]". */
struct step {
	const char *name;
	size_t len;
	bool is_index;
	uint64_t index;
};

/* Reads the step at *p: 1 and advances, 0 at the end, -1 on bad syntax. */
static int path__next(const char **p, bool first, struct step *st)
{
	const char *s = *p;
	char *end;

	if (*s == '\0')
		return 0;
	if (*s == '[') {
		if (first || s[1] < '0' || s[1] > '9')
			return -1;
		st->is_index = true;
		st->index = strtoull(s + 1, &end, 10);
		if (*end != ']')
			return -1;
		*p = end + 1;
		return 1;
	}
	if (!first && *s++ != '.')
		return -1;
	st->is_index = false;
	st->name = s;
	st->len = strcspn(s, ".[");
	if (st->len == 0)
		return -1;
	*p = s + st->len;
	return 1;
}

/* DW_AT_data_member_location: a constant as gcc writes it for DWARF 4 and
 * 5, or a DWARF 2 style DW_OP_plus_uconst expression; absent in unions. */
static int member__offset(Dwarf_Die *member, uint64_t *ret)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;
	Dwarf_Op *ops;
	size_t nops;

	*ret = 0;
	if (!dwarf_attr_integrate(member, DW_AT_data_member_location, &attr))
		return 0;
	if (dwarf_formudata(&attr, &off) == 0) {
		*ret = off;
		return 0;
	}
	if (dwarf_getlocation(&attr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_plus_uconst) {
		*ret = ops[0].number;
		return 0;
	}
	return -1;
}

enum member_rc { MEMBER_FOUND, MEMBER_MISSING, MEMBER_BITFIELD, MEMBER_BAD };

/* NAME among the members of struct/union AGG, looking inside anonymous
 * struct and union members too (C11 lets them be named through). */
static enum member_rc die__find_member(Dwarf_Die *agg, const char *name,
				       size_t len, Dwarf_Die *ret,
				       uint64_t *ret_off)
{
	Dwarf_Die m, type;
	const char *mn;
	uint64_t off, inner;
	enum member_rc rc;

	if (dwarf_child(agg, &m) != 0)
		return MEMBER_MISSING;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		mn = dwarf_diename(&m);
		if (mn && (strlen(mn) != len || memcmp(mn, name, len) != 0))
			continue;
		if (!mn) {
			if (!die__type(&m, &type) || dwarf_peel_type(&type, &type) != 0 ||
			    !is_aggregate(&type))
				continue;
			rc = die__find_member(&type, name, len, ret, &inner);
			if (rc == MEMBER_MISSING)
				continue;
		} else {
			*ret = m;
			inner = 0;
			rc = dwarf_hasattr(&m, DW_AT_bit_size) ||
			     dwarf_hasattr(&m, DW_AT_data_bit_offset)
				     ? MEMBER_BITFIELD : MEMBER_FOUND;
		}
		if (rc == MEMBER_FOUND && member__offset(&m, &off) != 0)
			return MEMBER_BAD;
		*ret_off = rc == MEMBER_FOUND ? off + inner : 0;
		return rc;
	} while (dwarf_siblingof(&m, &m) == 0);
	return MEMBER_MISSING;
}

/* Where a member path has got to: a peeled type at an offset. For arrays
 * `dim` counts the dimensions already indexed ("m[1]" of int m[3][5]). */
struct pos {
	Dwarf_Die type;
	int dim;
	uint64_t offset;
};

/* Element counts of an array's dimensions; UINT64_MAX for a flexible
 * array member (no bound, or gcc's upper bound -1 for "[0]"). */
static int array__dims(Dwarf_Die *arr, uint64_t *counts, int max)
{
	Dwarf_Die sub;
	Dwarf_Attribute attr;
	Dwarf_Word v, lower;
	int n = 0;

	if (dwarf_child(arr, &sub) != 0)
		return 0;
	do {
		if (dwarf_tag(&sub) != DW_TAG_subrange_type)
			continue;
		if (n == max)
			return -1;
		lower = 0;
		if (dwarf_attr(&sub, DW_AT_lower_bound, &attr))
			dwarf_formudata(&attr, &lower);
		if (dwarf_attr(&sub, DW_AT_count, &attr) &&
		    dwarf_formudata(&attr, &v) == 0)
			counts[n] = v;
		else if (dwarf_attr(&sub, DW_AT_upper_bound, &attr) &&
			 dwarf_formudata(&attr, &v) == 0 && v != (Dwarf_Word)-1 &&
			 v >= lower)
			counts[n] = v - lower + 1;
		else
			counts[n] = UINT64_MAX;
		n++;
	} while (dwarf_siblingof(&sub, &sub) == 0);
	return n;
}

/* Bytes of one element after indexing the dimensions before `from`:
 * the element size times the counts of the remaining dimensions. A
 * flexible dimension among them makes it unknown (UINT64_MAX). */
static int array__stride(Dwarf_Die *arr, const uint64_t *counts, int n,
			 int from, uint64_t *ret)
{
	Dwarf_Die elem;
	uint64_t size;

	if (!die__type(arr, &elem) || type__size(&elem, &size) != 0)
		return -1;
	for (int i = from; i < n; i++) {
		if (counts[i] == UINT64_MAX) {
			*ret = UINT64_MAX;
			return 0;
		}
		size *= counts[i];
	}
	*ret = size;
	return 0;
}

/* Applies "[index]" to the array at pos. */
static int pos__index(struct pgbt_dwarf *dw, struct pos *pos, uint64_t index,
		      const char *where, struct pgbt_err *err)
{
	uint64_t counts[MAX_DIMS], stride;
	int n;

	if (dwarf_tag(&pos->type) != DW_TAG_array_type)
		return pgbt_fail(err, "%s: not an array", where);
	n = array__dims(&pos->type, counts, MAX_DIMS);
	if (n <= pos->dim)
		return pgbt_fail(err, "%s: cannot read the array's dimensions in the DWARF of %s",
				 where, dw->source);
	if (counts[pos->dim] != UINT64_MAX && index >= counts[pos->dim])
		return pgbt_fail(err, "%s: index %llu out of range (%llu elements)",
				 where, (unsigned long long)index,
				 (unsigned long long)counts[pos->dim]);
	if (array__stride(&pos->type, counts, n, pos->dim + 1, &stride) != 0 ||
	    stride == UINT64_MAX)
		return pgbt_fail(err, "%s: element size unknown in the DWARF of %s",
				 where, dw->source);
	if (stride && index > (UINT64_MAX - pos->offset) / stride)
		return pgbt_fail(err, "%s: index too large", where);
	pos->offset += index * stride;
	if (++pos->dim < n)
		return 0;
	pos->dim = 0;
	if (!die__type(&pos->type, &pos->type))
		return pgbt_fail(err, "%s: array without element type in the DWARF of %s",
				 where, dw->source);
	return dwarf__peel(dw, &pos->type, where, err);
}

/* Applies ".name" to the struct or union at pos. */
static int pos__member(struct pgbt_dwarf *dw, struct pos *pos, const char *type,
		       const struct step *st, const char *where, int plen,
		       const char *path, struct pgbt_err *err)
{
	Dwarf_Die m;
	uint64_t off;

	if (!is_aggregate(&pos->type) || pos->dim)
		return pgbt_fail(err, "%s: not a struct or union, has no member '%.*s'",
				 where, (int)st->len, st->name);
	switch (die__find_member(&pos->type, st->name, st->len, &m, &off)) {
	case MEMBER_FOUND:
		break;
	case MEMBER_MISSING:
		return pgbt_fail_code(err, PGBT_ENOTFOUND, "%s has no member '%.*s' (DWARF from %s)",
				      type, plen, path, dw->source);
	case MEMBER_BITFIELD:
		return pgbt_fail(err, "%s is a bit-field, which has no byte offset (DWARF from %s)",
				 where, dw->source);
	case MEMBER_BAD:
		return pgbt_fail(err, "%s: member location is not a constant in the DWARF of %s",
				 where, dw->source);
	}
	pos->offset += off;
	if (!die__type(&m, &pos->type))
		return pgbt_fail(err, "%s: member without a type in the DWARF of %s",
				 where, dw->source);
	return dwarf__peel(dw, &pos->type, where, err);
}

static int pos__size(struct pos *pos, uint64_t *ret)
{
	uint64_t counts[MAX_DIMS];
	int n;

	if (dwarf_tag(&pos->type) != DW_TAG_array_type)
		return type__size(&pos->type, ret);
	n = array__dims(&pos->type, counts, MAX_DIMS);
	if (n < 0 || array__stride(&pos->type, counts, n, pos->dim, ret) != 0)
		return -1;
	/* A flexible array member occupies no bytes of its struct. */
	if (*ret == UINT64_MAX)
		*ret = 0;
	return 0;
}

int pgbt_dwarf_member(struct pgbt_dwarf *dw, const char *type,
		      const char *member, uint64_t *ret_offset,
		      uint64_t *ret_size, struct pgbt_err *err)
{
	struct pos pos = { .dim = 0, .offset = 0 };
	const char *p = member;
	char where[512];
	struct step st;
	int rc;

	/* Syntax first, so "a..b" is reported as such, not as missing 'a'. */
	while ((rc = path__next(&p, p == member, &st)) == 1)
		;
	if (rc < 0 || p == member)
		return pgbt_fail(err, "bad member path '%s' (want a.b, a[3].b)", member);
	p = member;
	if (dwarf__type(dw, type, &pos.type, err) < 0)
		return -1;
	if (!is_aggregate(&pos.type))
		return pgbt_fail(err, "'%s' is not a struct or union (DWARF from %s)",
				 type, dw->source);
	while ((rc = path__next(&p, p == member, &st)) == 1) {
		/* "TYPE.path-so-far", for messages */
		snprintf(where, sizeof(where), "%s.%.*s", type, (int)(p - member),
			 member);
		if (st.is_index)
			rc = pos__index(dw, &pos, st.index, where, err);
		else
			rc = pos__member(dw, &pos, type, &st, where,
					 (int)(p - member), member, err);
		if (rc < 0)
			return -1;
	}
	if (pos__size(&pos, ret_size) < 0)
		return pgbt_fail(err, "%s.%s: size unknown in the DWARF of %s", type,
				 member, dw->source);
	*ret_offset = pos.offset;
	return 0;
}

int pgbt_dwarf_sizeof(struct pgbt_dwarf *dw, const char *type,
		      uint64_t *ret_size, struct pgbt_err *err)
{
	Dwarf_Die die;

	if (dwarf__type(dw, type, &die, err) < 0)
		return -1;
	if (type__size(&die, ret_size) < 0)
		return pgbt_fail(err, "'%s' has no known size in the DWARF of %s",
				 type, dw->source);
	return 0;
}

/* --- variables ---------------------------------------------------------- */

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

int pgbt_dwarf_var_type(struct pgbt_dwarf *dw, const char *var,
			char *ret_type, size_t len, int *ret_pointers,
			struct pgbt_err *err)
{
	Dwarf_Die die;
	const char *name = NULL;
	int pointers = 0, tag, steps;

	if (!dwarf__find(dw, WANT_VAR, 0, var, &die))
		return pgbt_fail(err, "no variable '%s' in the DWARF of %s", var,
				 dw->source);
	/* The typedef name that matters is the one nearest the end of the
	 * chain: a typedef above a pointer names the pointer type. */
	for (steps = 0; steps < MAX_TYPE_CHAIN; steps++) {
		if (!die__type(&die, &die)) {
			name = name ? name : "void";
			break;
		}
		tag = dwarf_tag(&die);
		if (tag == DW_TAG_typedef) {
			name = dwarf_diename(&die);
		} else if (tag == DW_TAG_pointer_type) {
			pointers++;
			name = NULL;
		} else if (tag == DW_TAG_array_type) {
			return pgbt_fail(err, "variable '%s' is an array, not a pointer or an object (DWARF from %s)",
					 var, dw->source);
		} else if (!is_qualifier(tag)) {
			name = name ? name : dwarf_diename(&die);
			break;
		}
	}
	if (steps == MAX_TYPE_CHAIN || !name)
		return pgbt_fail(err, "variable '%s' has no named type (DWARF from %s)",
				 var, dw->source);
	if ((size_t)snprintf(ret_type, len, "%s", name) >= len)
		return pgbt_fail(err, "variable '%s': type name '%s' too long", var, name);
	*ret_pointers = pointers;
	return 0;
}

/* --- enumerations ------------------------------------------------------- */

/* Whether the enumeration's underlying type is signed: gcc picks unsigned
 * int when an enumerator does not fit in int (PG_WAIT_* values do). */
static bool enum__signed(Dwarf_Die *en)
{
	Dwarf_Die base;
	Dwarf_Attribute attr;
	Dwarf_Word enc;

	if (!die__type(en, &base) || dwarf_peel_type(&base, &base) != 0 ||
	    !dwarf_attr(&base, DW_AT_encoding, &attr) ||
	    dwarf_formudata(&attr, &enc) != 0)
		return true;
	return enc != DW_ATE_unsigned && enc != DW_ATE_unsigned_char &&
	       enc != DW_ATE_boolean;
}

/* DW_AT_const_value in a fixed-size form has no sign of its own: extend
 * it by the enumeration's signedness. */
static int enumerator__value(Dwarf_Die *e, bool is_signed, int64_t *ret)
{
	Dwarf_Attribute attr;
	Dwarf_Sword s;
	Dwarf_Word u;
	unsigned bits;

	if (!dwarf_attr(e, DW_AT_const_value, &attr))
		return -1;
	switch (dwarf_whatform(&attr)) {
	case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		if (dwarf_formsdata(&attr, &s) != 0)
			return -1;
		*ret = s;
		return 0;
	case DW_FORM_data1: bits = 8; break;
	case DW_FORM_data2: bits = 16; break;
	case DW_FORM_data4: bits = 32; break;
	default: bits = 64; break;
	}
	if (dwarf_formudata(&attr, &u) != 0)
		return -1;
	if (is_signed && bits < 64 && (u >> (bits - 1)) & 1)
		u |= ~(Dwarf_Word)0 << bits;
	*ret = (int64_t)u;
	return 0;
}

static size_t enum__count(Dwarf_Die *en)
{
	Dwarf_Die e;
	size_t n = 0;

	if (dwarf_child(en, &e) != 0)
		return 0;
	do
		n += dwarf_tag(&e) == DW_TAG_enumerator;
	while (dwarf_siblingof(&e, &e) == 0);
	return n;
}

int pgbt_dwarf_enum(struct pgbt_dwarf *dw, const char *enum_name,
		    struct pgbt_enumerator **ret, size_t *ret_n,
		    struct pgbt_err *err)
{
	struct pgbt_enumerator *out = NULL;
	Dwarf_Die en, e;
	size_t n = 0;
	bool is_signed;

	if (dwarf__type(dw, enum_name, &en, err) < 0)
		return -1;
	if (dwarf_tag(&en) != DW_TAG_enumeration_type)
		return pgbt_fail(err, "'%s' is not an enumeration (DWARF from %s)",
				 enum_name, dw->source);
	is_signed = enum__signed(&en);
	/* One spare slot, so that an empty enumeration still gets an array. */
	out = calloc(enum__count(&en) + 1, sizeof(*out));
	if (!out)
		return pgbt_fail(err, "%s: out of memory", enum_name);
	if (dwarf_child(&en, &e) == 0) {
		do {
			if (dwarf_tag(&e) != DW_TAG_enumerator)
				continue;
			snprintf(out[n].name, sizeof(out[n].name), "%s",
				 dwarf_diename(&e) ? dwarf_diename(&e) : "");
			if (enumerator__value(&e, is_signed, &out[n].value) < 0)
				goto fail;
			n++;
		} while (dwarf_siblingof(&e, &e) == 0);
	}
	*ret = out;
	*ret_n = n;
	return 0;
fail:
	free(out);
	return pgbt_fail(err, "%s: enumerator without a constant value in the DWARF of %s",
			 enum_name, dw->source);
}

int pgbt_dwarf_enumerator(struct pgbt_dwarf *dw, const char *name,
			  int64_t *ret_value, struct pgbt_err *err)
{
	Dwarf_Die en, e;

	if (!dwarf__find(dw, WANT_ENUMERATOR, 0, name, &en))
		return pgbt_fail_code(err, PGBT_ENOTFOUND, "no enumerator '%s' in the DWARF of %s",
				      name, dw->source);
	/* The cache holds the enumeration: its signedness decides the value. */
	if (dwarf_child(&en, &e) == 0) {
		do {
			if (dwarf_tag(&e) == DW_TAG_enumerator && name_is(&e, name) &&
			    enumerator__value(&e, enum__signed(&en), ret_value) == 0)
				return 0;
		} while (dwarf_siblingof(&e, &e) == 0);
	}
	return pgbt_fail(err, "enumerator '%s' has no constant value in the DWARF of %s",
			 name, dw->source);
}

/* --- opening ------------------------------------------------------------ */

static int dwarf__no_debuginfo(struct pgbt_dwarf *dw, struct pgbt_err *err)
{
	const char *why = dwfl_errmsg(-1);
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *dirs = dw->debuginfo_path ? dw->debuginfo_path
					      : DEFAULT_DEBUGINFO_PATH;

	/* Anything but plain absence (a corrupt file, say) is worth showing. */
	if (why && !strstr(why, "No DWARF"))
		return pgbt_fail_code(err, PGBT_ENODEBUG, "%s: no DWARF debug info (looked in the file, by build-id and .gnu_debuglink under %s; debuginfod: %s): dwfl_module_getdwarf: %s",
				      dw->path, dirs, urls && *urls ? "on" : "off", why);
	return pgbt_fail_code(err, PGBT_ENODEBUG, "%s: no DWARF debug info (looked in the file, by build-id and .gnu_debuglink under %s; debuginfod: %s)",
			      dw->path, dirs, urls && *urls ? "on" : "off");
}

static int dwarf__begin(struct pgbt_dwarf *dw, const char *path,
			struct pgbt_err *err)
{
	const char *env = getenv("PGBT_DEBUGINFO_PATH");
	const char *debugfile = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	dw->path = strdup(path);
	if (env && *env)
		dw->debuginfo_path = strdup(env);
	if (!dw->path || (env && *env && !dw->debuginfo_path))
		return pgbt_fail(err, "%s: out of memory", path);
	dw->cb.find_elf = dwfl_build_id_find_elf;
	dw->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	dw->cb.section_address = dwfl_offline_section_address;
	dw->cb.debuginfo_path = &dw->debuginfo_path;
	dw->dwfl = dwfl_begin(&dw->cb);
	if (!dw->dwfl)
		return pgbt_fail(err, "%s: dwfl_begin: %s", path, dwfl_errmsg(-1));
	mod = dwfl_report_offline(dw->dwfl, path, path, -1);
	if (!mod)
		return pgbt_fail(err, "%s: dwfl_report_offline: %s", path,
				 dwfl_errmsg(-1));
	if (dwfl_report_end(dw->dwfl, NULL, NULL) != 0)
		return pgbt_fail(err, "%s: dwfl_report_end: %s", path,
				 dwfl_errmsg(-1));
	dw->dwarf = dwfl_module_getdwarf(mod, &bias);
	if (!dw->dwarf)
		return dwarf__no_debuginfo(dw, err);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	dw->source = debugfile ? debugfile : dw->path;
	dw->index = dwarf_index_new(dw->dwarf);
	if (!dw->index)
		return pgbt_fail_code(err, PGBT_ENOMEM, "%s: out of memory", path);
	return 0;
}

struct pgbt_dwarf *pgbt_dwarf_open(const char *path, struct pgbt_err *err)
{
	struct pgbt_dwarf *dw = calloc(1, sizeof(*dw));

	if (!dw) {
		pgbt_fail(err, "%s: out of memory", path);
		return NULL;
	}
	if (dwarf__begin(dw, path, err) < 0) {
		pgbt_dwarf_close(dw);
		return NULL;
	}
	return dw;
}

void pgbt_dwarf_close(struct pgbt_dwarf *dw)
{
	if (!dw)
		return;
	dwarf_index_free(dw->index);
	if (dw->dwfl)
		dwfl_end(dw->dwfl);
	free(dw->debuginfo_path);
	free(dw->path);
	free(dw);
}

const char *pgbt_dwarf_source(const struct pgbt_dwarf *dw)
{
	return dw->source;
}
