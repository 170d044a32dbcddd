/* The machine a server binary is built for (its ELF e_machine), and what
 * pgbt knows to differ between the machines it has facts for: x86-64 and
 * aarch64. Struct offsets and sizes are the built-in layouts' (layout.h);
 * registers and how watchpoints fire are here. */
#ifndef PGBT_MACHINE_H
#define PGBT_MACHINE_H

#include "lib/common/err.h"

#include <stddef.h>

/* "x86_64", "aarch64", or for any other "ELF machine N". */
const char *pgbt_machine_name(unsigned e_machine);

/* A bpftrace expression for a register's meaning on a machine, for a
 * template's {{ caller }} and {{ ip }}:
 *   caller  the return address, at a function's first instruction (x86-64:
 *           the word on top of the stack; aarch64: the link register x30)
 *   ip      the instruction pointer (x86-64: ip; aarch64: pc)
 * Returns 1 when what is neither, -1 (naming the machine) when pgbt does
 * not know where this machine keeps it. */
int pgbt_machine_reg(unsigned e_machine, const char *what, char *ret, size_t len,
		     struct pgbt_err *err);

/* A rendered script whose probes rely on how x86-64 takes a hardware
 * watchpoint (after the write, so the handler reads the value written)
 * fails for another machine (aarch64 takes it before the write). */
int pgbt_machine_check_watchpoints(unsigned e_machine, const char *script,
				   const char *out, struct pgbt_err *err);

#endif
