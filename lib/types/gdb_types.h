/* The type facts lib/types/dwarf.h gives (member offsets and sizes, sizeof, a
 * global's type, enumerations), asked of gdb instead: for a build whose
 * debug info libdw cannot read (--resolver gdb). Same arguments, same
 * answers; a fact gdb cannot answer fails with one line naming the fact
 * and gdb's own words. A type name is tried as gdb spells it bare (a
 * typedef or base type), then as a struct, union (and enum) tag. */
#ifndef PGBT_GDB_TYPES_H
#define PGBT_GDB_TYPES_H

#include "dwarf.h"
#include "lib/common/err.h"
#include "gdb.h"

#include <stdint.h>

/* gdb started on the binary PATH, with its debug info: fails with one
 * line when gdb is not installed or finds no debug info for PATH. */
struct pgbt_gdb *pgbt_gdb_types_open(const char *path, struct pgbt_err *err);

int pgbt_gdb_member(struct pgbt_gdb *g, const char *type, const char *member,
		    uint64_t *ret_offset, uint64_t *ret_size, struct pgbt_err *err);
int pgbt_gdb_sizeof(struct pgbt_gdb *g, const char *type, uint64_t *ret_size,
		    struct pgbt_err *err);
int pgbt_gdb_var_type(struct pgbt_gdb *g, const char *var, char *ret_type, size_t len,
		      int *ret_pointers, struct pgbt_err *err);
int pgbt_gdb_enum(struct pgbt_gdb *g, const char *enum_name, struct pgbt_enumerator **ret,
		  size_t *ret_n, struct pgbt_err *err);
int pgbt_gdb_enumerator(struct pgbt_gdb *g, const char *name, int64_t *ret_value,
			struct pgbt_err *err);

#endif
