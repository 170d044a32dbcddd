/* USDT probes from the .note.stapsdt section of an ELF file (the format
 * systemtap's <sys/sdt.h> writes): provider, name, address, semaphore and
 * argument specs. */
#ifndef PGBT_USDT_H
#define PGBT_USDT_H

#include "elfimg.h"

#include <stddef.h>
#include <stdint.h>

struct pgbt_usdt_probe {
	char provider[64];
	char name[64];
	uint64_t pc;      /* unrelocated address, .stapsdt.base adjustment applied */
	uint64_t sema;    /* unrelocated semaphore address, 0 when none */
	char args[512];   /* argument specs, e.g. "-4@%eax 8@%rdx" on x86-64,
			     "-4@[x19, 72] 8@x1" on aarch64 ("" if none) */
	int nargs;        /* number of arguments in args */
};

struct pgbt_usdt {
	struct pgbt_usdt_probe *probes;
	size_t n;
};

/* Reads every probe. A file without .note.stapsdt gives n == 0 and
 * succeeds. Malformed notes fail with "<path>: .note.stapsdt: <cause>". */
int pgbt_usdt_read(const struct pgbt_elf *elf, struct pgbt_usdt *ret,
		   struct pgbt_err *err);
void pgbt_usdt_free(struct pgbt_usdt *usdt);

/* The first probe with this provider and name, or NULL. A probe inlined at
 * several sites has several entries; pgbt_usdt_count tells how many. */
const struct pgbt_usdt_probe *pgbt_usdt_find(const struct pgbt_usdt *usdt,
					     const char *provider,
					     const char *name);
size_t pgbt_usdt_count(const struct pgbt_usdt *usdt, const char *provider,
		       const char *name);

#endif
