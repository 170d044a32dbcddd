/* Finding DIEs by name (internal to lib/types/dwarf.c): the top-level DIEs of
 * the debug info's units are read once, in order and only as far as the
 * questions need, and every type and variable name met goes into one
 * table (enumerators once a question asks for one); a question whose
 * answer is already known reads nothing. */
#ifndef PGBT_DWARF_INDEX_H
#define PGBT_DWARF_INDEX_H

#include <elfutils/libdw.h>

#include <stdbool.h>

/* What a question asks for. */
enum want {
	WANT_TYPE,       /* a typedef, or a complete struct/union/enum/base type */
	WANT_TAG,        /* a complete struct/union/enum/base type with a given DW_TAG */
	WANT_VAR,        /* a variable, preferably an external one */
	WANT_ENUMERATOR, /* the enumeration type declaring an enumerator */
};

struct dwarf_index;

/* An index of dwarf (and of its dwz alternate file, after it); NULL when
 * memory runs out. */
struct dwarf_index *dwarf_index_new(Dwarf *dwarf);
void dwarf_index_free(struct dwarf_index *ix);

/* The DIE that WANT names NAME (for WANT_TAG, with tag TAG); false when
 * there is none. The answer is the one a walk of the units in order gives:
 * a type is the first typedef of the first unit that defines the name,
 * else that unit's first complete definition; a variable the first
 * external one, else the first; an enumerator the first enumeration
 * that lists it. */
bool dwarf_index_find(struct dwarf_index *ix, enum want want, int tag, const char *name,
		      Dwarf_Die *ret);

#endif
