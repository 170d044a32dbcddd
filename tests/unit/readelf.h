/* The reference the ELF and USDT unit tests compare with: what `readelf`
 * (binutils, a parser independent of libelf, reading any machine's ELF)
 * says about a file: its build-id, a symbol, its USDT notes. */
#ifndef PGBT_TEST_READELF_H
#define PGBT_TEST_READELF_H

#include "check.h"
#include "lib/found/elfimg.h"
#include "lib/found/usdt.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_REF 512

/* "Build ID: <hex>" from `readelf -n`, or "" when there is none. */
static inline void readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[4200], line[1024];
	FILE *f;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "Build ID: ");

		if (p && sscanf(p + 10, "%127s", out) == 1 && strlen(out) < len)
			break;
	}
	pclose(f);
}

/* A symbol's value and size as `readelf -W --dyn-syms` lists it (the
 * dynamic symbols a stripped server keeps); 0 when it is not there. */
static inline int readelf_dynsym(const char *path, const char *name,
				 unsigned long long *value, unsigned long long *size)
{
	char cmd[4200], line[1024], sym[256];
	int found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		/* "  1234: 0000000000884846     8 OBJECT  GLOBAL DEFAULT   25 MyProc" */
		if (sscanf(line, " %*[0-9]: %llx %llu %*s %*s %*s %*s %255s",
			   value, size, sym) == 3 && strcmp(sym, name) == 0) {
			found = 1;
			break;
		}
	pclose(f);
	return found;
}

/* One probe as `readelf -n` prints it. */
struct ref_probe {
	char provider[64], name[64], args[512];
	unsigned long long pc, base, sema;
};

static inline void copy_value(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%.*s", (int)strcspn(src, "\n"), src);
}

/* Parses the Provider/Name/Location/Arguments lines of `readelf -n`. */
static inline size_t readelf_probes(const char *path, struct ref_probe *out, size_t max)
{
	char cmd[4200], line[1024];
	struct ref_probe *cur = NULL;
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " ");

		if (!strncmp(p, "Provider: ", 10) && n < max) {
			cur = &out[n++];
			memset(cur, 0, sizeof(*cur));
			copy_value(cur->provider, sizeof(cur->provider), p + 10);
		} else if (cur && !strncmp(p, "Name: ", 6)) {
			copy_value(cur->name, sizeof(cur->name), p + 6);
		} else if (cur && !strncmp(p, "Location: ", 10)) {
			sscanf(p, "Location: %llx, Base: %llx, Semaphore: %llx",
			       &cur->pc, &cur->base, &cur->sema);
		} else if (cur && !strncmp(p, "Arguments:", 10)) {
			copy_value(cur->args, sizeof(cur->args), p + 10 + (p[10] == ' '));
		}
	}
	pclose(f);
	return n;
}

static inline uint64_t section_field(const struct pgbt_elf *elf, const char *name,
			      int want_offset)
{
	Elf *e = pgbt_elf_handle(elf);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(e, shstrndx, sh.sh_name), name))
			return want_offset ? sh.sh_offset : sh.sh_addr;
	return 0;
}

/* Probes must match readelf's listing one for one, in note order. */
static inline void compare_with_readelf(const char *path, const struct pgbt_usdt *u,
				 uint64_t base_addr)
{
	static struct ref_probe ref[MAX_REF];
	size_t n = readelf_probes(path, ref, MAX_REF);

	CHECK_EQ_U(u->n, n);
	for (size_t i = 0; i < n && i < u->n; i++) {
		const struct pgbt_usdt_probe *p = &u->probes[i];

		CHECK_STR(p->provider, ref[i].provider);
		CHECK_STR(p->name, ref[i].name);
		CHECK_STR(p->args, ref[i].args);
		/* Not prelinked: the recorded base is the section's address,
		 * so the adjustment is zero and pc is readelf's Location. */
		CHECK_EQ_U(ref[i].base, base_addr);
		CHECK_EQ_U(p->pc, ref[i].pc);
		CHECK_EQ_U(p->sema, ref[i].sema);
	}
}

#endif
