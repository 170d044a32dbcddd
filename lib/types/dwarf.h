/* Types from DWARF through libdwfl: member offsets and sizes, a global
 * variable's type, enumerations. Debug info is searched for the way the
 * elfutils tools do it: in the file, by build-id and .gnu_debuglink under
 * the debug directories (/usr/lib/debug), and through debuginfod when
 * DEBUGINFOD_URLS is set. Lookups walk only the top-level DIEs of each
 * compile unit and stop at the first complete definition. */
#ifndef PGBT_DWARF_H
#define PGBT_DWARF_H

#include "lib/common/err.h"

#include <stddef.h>
#include <stdint.h>

struct pgbt_dwarf;

/* Fails with "<path>: no DWARF debug info (looked in the file, by
 * build-id and .gnu_debuglink under <dirs>; debuginfod: on|off)". The
 * directories are $PGBT_DEBUGINFO_PATH when set, else elfutils' default
 * ":.debug:/usr/lib/debug". */
struct pgbt_dwarf *pgbt_dwarf_open(const char *path, struct pgbt_err *err);
void pgbt_dwarf_close(struct pgbt_dwarf *dw);

/* The file the DWARF was read from (the binary or a separate debug file). */
const char *pgbt_dwarf_source(const struct pgbt_dwarf *dw);

/* Offset and byte size of MEMBER inside struct/union TYPE. TYPE is a
 * typedef name or a struct/union tag (in the first compile unit that has
 * either, the typedef wins). MEMBER is a
 * path "a.b.c"; "a[3].b" indexes arrays; members of anonymous structs and
 * unions are found through them. Bit-fields fail. */
int pgbt_dwarf_member(struct pgbt_dwarf *dw, const char *type,
		      const char *member, uint64_t *ret_offset,
		      uint64_t *ret_size, struct pgbt_err *err);

/* Byte size of TYPE (typedef, struct, union, enum or base type name). */
int pgbt_dwarf_sizeof(struct pgbt_dwarf *dw, const char *type,
		      uint64_t *ret_size, struct pgbt_err *err);

/* The type of global variable VAR, as the name of the type it ends in
 * after stripping pointers, const/volatile, and its pointer depth:
 * "TransamVariablesData *TransamVariables" gives "TransamVariablesData",
 * 1. The name is a typedef name when there is one, else the tag. */
int pgbt_dwarf_var_type(struct pgbt_dwarf *dw, const char *var,
			char *ret_type, size_t len, int *ret_pointers,
			struct pgbt_err *err);

struct pgbt_enumerator {
	char name[128];
	int64_t value;
};

/* All enumerators of enumeration ENUM (typedef name or tag), in order.
 * The caller frees *ret. */
int pgbt_dwarf_enum(struct pgbt_dwarf *dw, const char *enum_name,
		    struct pgbt_enumerator **ret, size_t *ret_n,
		    struct pgbt_err *err);

/* The value of one enumerator, by name, in any enumeration. */
int pgbt_dwarf_enumerator(struct pgbt_dwarf *dw, const char *name,
			  int64_t *ret_value, struct pgbt_err *err);

#endif
