#include "found_static.h"

#include "machine.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Where to look for a static global, and how the server confirms it: a
 * pointer to a struct in shared memory holding each process's own PID. */
struct recipe {
	const char *name;
	const char *loader;     /* an exported function that loads it early */
	const char *type;       /* what it points to */
	const char *pid_member; /* the PID of the process owning that struct */
};

static const struct recipe recipes[] = {
	/* pgstat_report_activity() starts with beentry = MyBEEntry; every
	   process with a pg_stat_activity row (backends and auxiliary
	   processes) points to its own row, whose st_procpid is its PID. */
	{ "MyBEEntry", "pgstat_report_activity", "PgBackendStatus", "st_procpid" },
};

#define MAX_CANDIDATES 8
#define MAX_CHILDREN 64
#define CODE_BYTES 96

/* The targets of "mov reg64, [rip + disp32]" (REX.W 8B, ModRM mod 00
 * r/m 101) in the first bytes of the loader at vaddr, in code order (read
 * from the file: a live process may hold a uprobe's breakpoint there). A
 * byte pattern, not a decoder: a false match is a candidate like any
 * other and fails the check. */
static size_t load_targets(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t *ret)
{
	size_t n = 0;

	for (size_t i = 0; i + 7 <= len && n < MAX_CANDIDATES; i++) {
		int32_t disp;

		if ((code[i] != 0x48 && code[i] != 0x4c) || code[i + 1] != 0x8b ||
		    (code[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&disp, code + i + 3, sizeof(disp));
		ret[n++] = vaddr + i + 7 + (int64_t)disp;
	}
	return n;
}

/* How many children confirm that the pointer at addr is theirs (each
 * non-NULL one points into shared memory at a struct naming the child's
 * own PID); -1 when one contradicts it or cannot be read. */
static int confirmations(const struct pgbt_static_search *s, uint64_t addr, uint64_t pid_off,
			 const pid_t *children, size_t n)
{
	int ok = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t ptr;
		int32_t owner;
		pid_t own;
		const struct pgbt_map *m;

		if (pgbt_proc_read(children[i], addr, &ptr, sizeof(ptr), NULL) < 0) {
			if (pgbt_proc_exists(children[i]))
				return -1;
			continue;    /* exited meanwhile */
		}
		if (ptr == 0)
			continue;    /* no row: the stats collector, the logger */
		m = pgbt_maps_find(s->maps, ptr);
		if (!m || m->perms[3] != 's' || ptr + pid_off + sizeof(owner) > m->end ||
		    pgbt_proc_read(children[i], ptr + pid_off, &owner, sizeof(owner), NULL) < 0)
			return -1;
		if (pgbt_proc_nspid(children[i], &own, NULL) < 0)
			continue;    /* exited meanwhile */
		if (owner != own)
			return -1;
		ok++;
	}
	return ok;
}

static int find(const struct pgbt_static_search *s, const struct recipe *r, uint64_t *ret,
		char *how, size_t how_len, struct pgbt_err *err)
{
	uint8_t code[CODE_BYTES];
	uint64_t cands[MAX_CANDIDATES], pid_off;
	pid_t children[MAX_CHILDREN];
	size_t ncand, nchild, len;
	struct pgbt_sym sym;

	if (pgbt_elf_symbol(s->elf, r->loader, &sym, err) < 0)
		return -1;
	if (s->member_offset(s->ctx, r->type, r->pid_member, &pid_off, err) < 0)
		return -1;
	len = sym.size && sym.size < sizeof(code) ? sym.size : sizeof(code);
	if (pgbt_elf_read(s->elf, sym.value, code, len, err) < 0)
		return -1;
	ncand = load_targets(code, len, sym.value, cands);
	for (size_t i = 0; i < ncand; i++)
		cands[i] += s->bias;
	if (pgbt_proc_children(s->pid, children, MAX_CHILDREN, &nchild, err) < 0)
		return -1;
	for (size_t i = 0; i < ncand; i++) {
		int n = confirmations(s, cands[i], pid_off, children, nchild);

		if (n > 0) {
			*ret = cands[i];
			snprintf(how, how_len,
				 "no symbol (static in PostgreSQL %d): the pointer %s loads "
				 "%s from 0x%" PRIx64 "; in %d processes of the server it "
				 "points to a %s whose %s is that process's PID",
				 s->major, r->loader, i == 0 ? "first" : "later", cands[i] - s->bias,
				 n, r->type, r->pid_member);
			return 0;
		}
	}
	return pgbt_fail_code(err, PGBT_ENOTFOUND,
			      "%s: no symbol %s, and none of the %zu pointers %s loads is one "
			      "the server's processes confirm (each its own %s)",
			      s->path, r->name, ncand, r->loader, r->type);
}

int pgbt_found_static(const struct pgbt_static_search *s, const char *name, uint64_t *ret,
		      char *how, size_t how_len, struct pgbt_err *err)
{
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++)
		if (strcmp(recipes[i].name, name) == 0) {
			/* load_targets reads x86-64 instructions only */
			if (s->machine != EM_X86_64)
				return pgbt_fail_code(err, PGBT_ENOTFOUND,
						      "%s: no symbol %s (static in PostgreSQL %d), "
						      "and pgbt finds it in x86-64 code only, not in "
						      "%s code: install the server's debug symbols",
						      s->path, name, s->major,
						      pgbt_machine_name(s->machine));
			if (!s->pid)
				break;
			return find(s, &recipes[i], ret, how, how_len, err);
		}
	return pgbt_fail_code(err, PGBT_ENOTFOUND, "%s: no symbol %s in .symtab or .dynsym",
			      s->path, name);
}
