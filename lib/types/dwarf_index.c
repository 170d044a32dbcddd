#include "dwarf_index.h"

/* elfutils' own <dwarf.h> (DW_TAG_*...), which elfutils installs next to
 * its own directory; this folder's dwarf.h is "dwarf.h". */
#include <dwarf.h>
#include <gelf.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One name's answer, or its best candidate while units remain unread. */
struct entry {
	const char *name;       /* in the debug info's own strings */
	uint64_t hash;
	enum want want;
	int tag;                /* WANT_TAG */
	size_t unit;            /* the unit die is in, counted from 0 */
	bool final;             /* no later unit can change it */
	bool is_typedef;        /* WANT_TYPE: die is a typedef */
	Dwarf_Die die;
};

/* The entry a name pointer went to last: most names recur in unit after
 * unit as the same pointer into .debug_str, found again without hashing
 * the string. */
struct recent {
	const char *name;
	enum want want;
	int tag;
	size_t slot;
};

#define RECENT_BITS 16

struct dwarf_index {
	Dwarf *files[2];        /* the debug info, then its dwz alternate */
	size_t file;            /* the one being read */
	Dwarf_CU *cu;           /* the last unit read in it */
	size_t units;           /* units read in all */
	bool done;              /* every unit read */
	bool oom;
	struct entry *slots;    /* open addressing; name NULL: free */
	size_t cap, n;
	struct recent *recent;  /* 1 << RECENT_BITS of them, reset by grow */
	/* every enumeration met, in order; the first `listed` have had their
	   enumerators put in the table (only enumerator questions need that) */
	Dwarf_Die *enums;
	size_t nenums, capenums, listed;
};

/* --- the table ------------------------------------------------------------ */

static uint64_t hash(enum want want, int tag, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)want << 16 | (uint64_t)(unsigned)tag);

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h;
}

/* The slot of (want, tag, name), whose hash is h: its entry, or a free
 * slot. Names of the same string section are often the same pointer. */
static struct entry *slot(struct entry *slots, size_t cap, uint64_t h, enum want want, int tag,
			  const char *name)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct entry *e = &slots[i];

		if (!e->name || (e->hash == h && e->want == want && e->tag == tag &&
				 (e->name == name || strcmp(e->name, name) == 0)))
			return e;
	}
}

static bool grow(struct dwarf_index *ix)
{
	size_t cap = ix->cap ? 2 * ix->cap : 4096;
	struct entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < ix->cap; i++)
		if (ix->slots[i].name)
			*slot(slots, cap, ix->slots[i].hash, ix->slots[i].want, ix->slots[i].tag,
			      ix->slots[i].name) = ix->slots[i];
	free(ix->slots);
	ix->slots = slots;
	ix->cap = cap;
	memset(ix->recent, 0, sizeof(*ix->recent) << RECENT_BITS);
	return true;
}

static struct entry *get(struct dwarf_index *ix, enum want want, int tag, const char *name)
{
	struct entry *e;

	if (!ix->cap)
		return NULL;
	e = slot(ix->slots, ix->cap, hash(want, tag, name), want, tag, name);
	return e->name ? e : NULL;
}

/* name's entry, new (unit filled in, not final) when it had none. */
static struct entry *put(struct dwarf_index *ix, enum want want, int tag, const char *name,
			 bool *added)
{
	uint64_t h;
	struct entry *e;
	struct recent *r = &ix->recent[(((uintptr_t)name >> 2) * 0x9E3779B97F4A7C15ull ^ want ^
					  (uint64_t)tag << 8) >> (64 - RECENT_BITS)];

	*added = false;
	if (r->name == name && r->want == want && r->tag == tag)
		return &ix->slots[r->slot];
	if (2 * (ix->n + 1) > ix->cap && !grow(ix)) {
		ix->oom = true;
		return NULL;
	}
	h = hash(want, tag, name);
	e = slot(ix->slots, ix->cap, h, want, tag, name);
	*r = (struct recent){ name, want, tag, (size_t)(e - ix->slots) };
	if (!e->name) {
		*e = (struct entry){ .name = name, .hash = h, .want = want, .tag = tag,
				     .unit = ix->units };
		ix->n++;
		*added = true;
	}
	return e;
}

/* --- reading units -------------------------------------------------------- */

static bool is_declaration(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_declaration);
}

static bool is_named_type_tag(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_enumeration_type || tag == DW_TAG_base_type;
}

/* A typedef wins at once over a definition of the same unit; a definition
 * stands once its unit holds no typedef of the name ("typedef, then tag"). */
static void note_type(struct dwarf_index *ix, Dwarf_Die *die, const char *name, bool is_typedef)
{
	bool added;
	struct entry *e = put(ix, WANT_TYPE, 0, name, &added);

	if (!e)
		return;
	if (added || (is_typedef && !e->is_typedef && e->unit == ix->units)) {
		e->die = *die;
		e->is_typedef = is_typedef;
		e->final = is_typedef;
	}
}

/* The first external declaration or definition; a static variable of the
 * same name only until one is met. */
static void note_var(struct dwarf_index *ix, Dwarf_Die *die, const char *name)
{
	bool added, external = dwarf_hasattr(die, DW_AT_external);
	struct entry *e = put(ix, WANT_VAR, 0, name, &added);

	if (e && (added || (!e->final && external))) {
		e->die = *die;
		e->final = external;
	}
}

/* The first of each: a complete definition by tag, an enumeration by the
 * enumerators it lists. */
static void note_first(struct dwarf_index *ix, enum want want, int tag, const char *name,
		       Dwarf_Die *die)
{
	bool added;
	struct entry *e = put(ix, want, tag, name, &added);

	if (e && added) {
		e->die = *die;
		e->final = true;
	}
}

/* Each enumerator of en whose name no earlier enumeration listed. */
static void note_enumerators(struct dwarf_index *ix, Dwarf_Die *en)
{
	Dwarf_Die e;
	const char *name;

	if (dwarf_child(en, &e) != 0)
		return;
	do {
		if (dwarf_tag(&e) == DW_TAG_enumerator && (name = dwarf_diename(&e)))
			note_first(ix, WANT_ENUMERATOR, 0, name, en);
	} while (dwarf_siblingof(&e, &e) == 0);
}

/* Enumerations are only listed as units are read: walking the
 * enumerators of every one (headers repeat them in most units) would slow
 * every script for the few that ask for enumerators. */
static void keep_enum(struct dwarf_index *ix, Dwarf_Die *en)
{
	if (ix->nenums == ix->capenums) {
		size_t cap = ix->capenums ? 2 * ix->capenums : 1024;
		Dwarf_Die *grown = realloc(ix->enums, cap * sizeof(*grown));

		if (!grown) {
			ix->oom = true;
			return;
		}
		ix->enums = grown;
		ix->capenums = cap;
	}
	ix->enums[ix->nenums++] = *en;
}

/* The unit's direct children only: types and globals live there, and
 * dwarf_siblingof jumps over function bodies. */
static void read_unit(struct dwarf_index *ix, Dwarf_Die *cudie)
{
	Dwarf_Die die;
	const char *name;
	int tag;

	if (dwarf_child(cudie, &die) != 0)
		return;
	do {
		tag = dwarf_tag(&die);
		if (tag == DW_TAG_enumeration_type)
			keep_enum(ix, &die);
		if (tag != DW_TAG_typedef && tag != DW_TAG_variable && !is_named_type_tag(tag))
			continue;
		if (!(name = dwarf_diename(&die)))
			continue;
		if (tag == DW_TAG_typedef)
			note_type(ix, &die, name, true);
		else if (tag == DW_TAG_variable)
			note_var(ix, &die, name);
		else if (!is_declaration(&die)) {
			note_type(ix, &die, name, false);
			note_first(ix, WANT_TAG, tag, name, &die);
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

/* Reads the next unit; false when none is left. */
static bool read_next_unit(struct dwarf_index *ix)
{
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;

	while (ix->file < 2 && ix->files[ix->file]) {
		if (dwarf_get_units(ix->files[ix->file], ix->cu, &ix->cu, &version, &unit_type,
				    &cudie, NULL) == 0) {
			read_unit(ix, &cudie);
			ix->units++;
			return true;
		}
		ix->file++;
		ix->cu = NULL;
	}
	ix->done = true;
	return false;
}

/* --- names that cannot be there ------------------------------------------- */

/* Where a DIE's name can come from: DW_FORM_strp/strx (.debug_str),
 * DW_FORM_line_strp, or inline DW_FORM_string in the unit itself. */
static const char *const name_sections[] = {
	".debug_str", ".debug_line_str", ".debug_info", ".debug_types",
};

/* Whether section SNAME of ELF may hold "NAME\0": false only when it is
 * absent or was searched without a match. */
static bool section_may_hold(Elf *elf, size_t shstrndx, const char *sname, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	const char *n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return true;
		n = elf_strptr(elf, shstrndx, shdr.sh_name);
		/* GNU-compressed sections: we can't tell what libdw read */
		if (!n || (strncmp(n, ".zdebug", 7) == 0 && strcmp(n + 2, sname + 1) == 0))
			return true;
		if (strcmp(n, sname) != 0)
			continue;
		if (shdr.sh_type == SHT_NOBITS || (shdr.sh_flags & SHF_COMPRESSED))
			return true;
		data = elf_getdata(scn, NULL);
		return !data || !data->d_buf ||
		       memmem(data->d_buf, data->d_size, name, strlen(name) + 1);
	}
	return false;
}

/* False only when no "NAME\0" is in any section a name is read from, so
 * no DIE can carry it: reading the rest of the units for another
 * PostgreSQL version's type names would find nothing. */
static bool may_name(const struct dwarf_index *ix, const char *name)
{
	for (size_t f = 0; f < 2 && ix->files[f]; f++) {
		Elf *elf = dwarf_getelf(ix->files[f]);
		size_t shstrndx;

		if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
			return true;
		for (size_t i = 0; i < sizeof(name_sections) / sizeof(*name_sections); i++)
			if (section_may_hold(elf, shstrndx, name_sections[i], name))
				return true;
	}
	return false;
}

/* --- questions ------------------------------------------------------------ */

struct dwarf_index *dwarf_index_new(Dwarf *dwarf)
{
	struct dwarf_index *ix = calloc(1, sizeof(*ix));

	if (!ix || !(ix->recent = calloc((size_t)1 << RECENT_BITS, sizeof(*ix->recent)))) {
		free(ix);
		return NULL;
	}
	ix->files[0] = dwarf;
	ix->files[1] = dwarf_getalt(dwarf);
	return ix;
}

void dwarf_index_free(struct dwarf_index *ix)
{
	if (!ix)
		return;
	free(ix->enums);
	free(ix->recent);
	free(ix->slots);
	free(ix);
}

bool dwarf_index_find(struct dwarf_index *ix, enum want want, int tag, const char *name,
		      Dwarf_Die *ret)
{
	bool checked = false;

	for (;;) {
		struct entry *e = get(ix, want, tag, name);

		/* a definition stands once its unit is read to the end */
		if (e && (e->final || ix->done || (want == WANT_TYPE && e->unit < ix->units))) {
			*ret = e->die;
			return true;
		}
		if (want == WANT_ENUMERATOR && !e && ix->listed < ix->nenums) {
			note_enumerators(ix, &ix->enums[ix->listed++]);
			continue;
		}
		if (ix->done || ix->oom)
			return false;
		if (!e && !checked) {
			checked = true;
			if (!may_name(ix, name))
				return false;
		}
		read_next_unit(ix);
	}
}
