/* An ELF file on disk: symbols, build-id, bytes at an address, and the
 * PostgreSQL version string. Read with libelf; no DWARF here. */
#ifndef PGBT_ELFIMG_H
#define PGBT_ELFIMG_H

#include "lib/common/err.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

struct pgbt_elf;

struct pgbt_sym {
	uint64_t value;    /* st_value: an unrelocated virtual address */
	uint64_t size;
	int type;          /* STT_OBJECT, STT_FUNC, ... */
	const char *table; /* ".symtab" or ".dynsym": where it was found */
};

/* Opens and validates an ELF file. Fails with "<path>: <cause>" for a
 * missing file, a non-ELF file or a corrupt one (bad header, sections or
 * segments out of the file's bounds). */
struct pgbt_elf *pgbt_elf_open(const char *path, struct pgbt_err *err);
void pgbt_elf_close(struct pgbt_elf *elf);

const char *pgbt_elf_path(const struct pgbt_elf *elf);
Elf *pgbt_elf_handle(const struct pgbt_elf *elf);

/* Build-id as lowercase hex, or "" when the file has none. */
const char *pgbt_elf_build_id(const struct pgbt_elf *elf);

/* e_machine: the architecture the file is built for (EM_X86_64,
 * EM_AARCH64, ...; pgbt_machine_name names it). */
unsigned pgbt_elf_machine(const struct pgbt_elf *elf);

/* True for ET_DYN (PIE): runtime address = load base + symbol value. */
bool pgbt_elf_is_pie(const struct pgbt_elf *elf);

/* True when the file itself carries a .debug_info section. */
bool pgbt_elf_has_debug_info(const struct pgbt_elf *elf);

/* p_vaddr - p_offset of the PT_LOAD segment with the lowest address: the
 * value to subtract from a mapping's (start - file offset) to get the
 * load bias. 0 for ordinary PIE executables. */
uint64_t pgbt_elf_load_vaddr(const struct pgbt_elf *elf);

/* Looks a symbol up by exact name, in .symtab first, then .dynsym.
 * Undefined symbols (st_shndx == SHN_UNDEF) do not count.
 * Fails with "<path>: no symbol '<name>' in .symtab or .dynsym". */
int pgbt_elf_symbol(const struct pgbt_elf *elf, const char *name,
		    struct pgbt_sym *ret, struct pgbt_err *err);

/* Copies len bytes at unrelocated virtual address vaddr from the file
 * (through the PT_LOAD segment that holds them). Fails for addresses not
 * backed by file contents (.bss) or out of every segment. */
int pgbt_elf_read(const struct pgbt_elf *elf, uint64_t vaddr, void *buf,
		  size_t len, struct pgbt_err *err);

/* Finds PostgreSQL's PG_VERSION_STR in .rodata, e.g.
 * "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu,
 * compiled by gcc ..., 64-bit", and returns it with its major version
 * (14, 15, 16, 17, 18; for 9.x releases, 90 + minor is not needed: fail).
 * Fails with "<path>: no PostgreSQL version string; not a PostgreSQL
 * server binary?" when absent. */
int pgbt_elf_pg_version(const struct pgbt_elf *elf, char *ret, size_t len,
			int *ret_major, struct pgbt_err *err);

#endif
