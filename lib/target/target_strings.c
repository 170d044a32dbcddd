/* A global array of C strings (const char *const NAME[]) as the server has
 * it: read from the postmaster's memory, where the dynamic loader has
 * relocated the pointers. Scripts use it for names that backends only
 * have in file pages they may not have touched yet (bpftrace cannot fault
 * them in): IndividualLWLockNames, for one. */
#include "target.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A C string at addr in process pid, at most len - 1 bytes. The string
 * may end near the end of a mapping: read it in small pieces. */
static int read_cstring(pid_t pid, uint64_t addr, char *ret, size_t len, struct pgbt_err *err)
{
	size_t n = 0;

	while (n + 1 < len) {
		char piece[16];
		size_t want = sizeof(piece) < len - 1 - n ? sizeof(piece) : len - 1 - n;

		if (pgbt_proc_read(pid, addr + n, piece, want, err) < 0)
			return -1;
		for (size_t i = 0; i < want; i++) {
			ret[n++] = piece[i];
			if (!piece[i])
				return 0;
		}
	}
	ret[n] = '\0';
	return 0;
}

int pgbt_target_strings(struct pgbt_target *t, const char *name, size_t max_bytes,
			struct pgbt_rows *ret, char *how, struct pgbt_err *err)
{
	struct pgbt_sym sym;
	uint64_t base, n;

	if (!t->pid)
		return pgbt_fail(err, "strings(%s) reads the running server; this target has no "
				 "process (give -p PID or -D DATADIR)", name);
	if (pgbt_elf_symbol(t->elf, name, &sym, err) < 0)
		return -1;
	if (sym.type != STT_OBJECT || sym.size == 0 || sym.size % 8)
		return pgbt_fail(err, "strings(%s): %s symbol of %" PRIu64 " bytes is not an array "
				 "of pointers", name, sym.table, sym.size);
	base = sym.value + t->bias;
	n = sym.size / 8;
	if (pgbt_rows_init(ret, name, "index value", "", err) < 0)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		char index[24], raw[256], value[1024];
		const char *cells[2] = {index, value};
		uint64_t ptr;

		raw[0] = '\0';
		if (pgbt_proc_read(t->pid, base + 8 * i, &ptr, sizeof(ptr), err) < 0 ||
		    (ptr && read_cstring(t->pid, ptr, raw, sizeof(raw), err) < 0)) {
			pgbt_rows_free(ret);
			return pgbt_fail_prefix(err, "strings(%s)[%" PRIu64 "]", name, i);
		}
		snprintf(index, sizeof(index), "%" PRIu64, i);
		pgbt_rows_escape(raw, max_bytes, value, sizeof(value));
		if (pgbt_rows_add(ret, cells, err) < 0) {
			pgbt_rows_free(ret);
			return -1;
		}
	}
	snprintf(ret->origin, sizeof(ret->origin), "%" PRIu64 " strings read from /proc/%d/mem "
		 "at %s value 0x%" PRIx64 " + load bias 0x%" PRIx64, n, (int)t->pid, sym.table,
		 sym.value, t->bias);
	snprintf(how, PGBT_HOW_LEN, "%s", ret->origin);
	return 0;
}
