/* Globals that a PostgreSQL major keeps static, so that a stripped build
 * (a distribution's, whose .dynsym holds only what extensions may link
 * to) has no symbol for them: MyBEEntry is static in 13's pgstat.c and
 * exported from 14 on. Each is found in the code of an exported function
 * known to load it, and accepted only when the running server confirms
 * it (see found_static.c). */
#ifndef PGBT_FOUND_STATIC_H
#define PGBT_FOUND_STATIC_H
#include "lib/target/target.h"

/* The runtime address of NAME found so (needs a process), with how it was
 * found and checked in how. PGBT_ENOTFOUND when pgbt knows no way to find
 * NAME, or no candidate passed the check (the message says which). */
int pgbt_found_static(struct pgbt_target *t, const char *name, uint64_t *ret, char *how,
		      struct pgbt_err *err);

#endif
