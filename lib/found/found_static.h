/* Globals that a PostgreSQL major keeps static, so that a stripped build
 * (a distribution's, whose .dynsym holds only what extensions may link
 * to) has no symbol for them: MyBEEntry is static in 13's pgstat.c and
 * exported from 14 on. Each is found in the code of an exported function
 * known to load it, and accepted only when the running server confirms
 * it (see found_static.c). */
#ifndef PGBT_FOUND_STATIC_H
#define PGBT_FOUND_STATIC_H

#include "elfimg.h"
#include "proc.h"

#include "lib/common/err.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What the search needs of the server: its binary, its live postmaster,
 * and one type fact, the offset of the member that names a struct's
 * owner. Type facts come from a later stage (lib/target/), which passes
 * member_offset in. */
struct pgbt_static_search {
	const char *path;               /* the binary, for messages */
	struct pgbt_elf *elf;
	int major;
	unsigned machine;               /* the binary's ELF e_machine */
	pid_t pid;                      /* the postmaster; 0 when offline */
	const struct pgbt_maps *maps;   /* the postmaster's */
	uint64_t bias;                  /* load bias of the binary */
	int (*member_offset)(void *ctx, const char *type, const char *member,
			     uint64_t *ret, struct pgbt_err *err);
	void *ctx;
};

/* The runtime address of NAME found so (needs a process), with how it was
 * found and checked in how (how_len bytes). PGBT_ENOTFOUND when pgbt
 * knows no way to find NAME, or no candidate passed the check (the
 * message says which). */
int pgbt_found_static(const struct pgbt_static_search *s, const char *name, uint64_t *ret,
		      char *how, size_t how_len, struct pgbt_err *err);

#endif
