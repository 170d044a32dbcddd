#include "machine.h"

#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *pgbt_machine_name(unsigned e_machine)
{
	static char other[32];

	switch (e_machine) {
	case EM_X86_64:
		return "x86_64";
	case EM_AARCH64:
		return "aarch64";
	}
	snprintf(other, sizeof(other), "ELF machine %u", e_machine);
	return other;
}

/* In bpftrace's register names (its src/arch/): at a uprobe on a
 * function's first instruction, x86-64's call has pushed the return
 * address, and aarch64's bl has put it in x30, the link register. */
static const struct {
	unsigned machine;
	const char *what, *expr;
} regs[] = {
	{ EM_X86_64, "caller", "*(uint64 *)reg(\"sp\")" },
	{ EM_X86_64, "ip", "reg(\"ip\")" },
	{ EM_AARCH64, "caller", "reg(\"r30\")" },
	{ EM_AARCH64, "ip", "reg(\"pc\")" },
};

int pgbt_machine_reg(unsigned e_machine, const char *what, char *ret, size_t len,
		     struct pgbt_err *err)
{
	bool known = false;

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		if (strcmp(regs[i].what, what) != 0)
			continue;
		known = true;
		if (regs[i].machine == e_machine) {
			snprintf(ret, len, "%s", regs[i].expr);
			return 0;
		}
	}
	if (!known)
		return 1;
	return pgbt_fail(err, "{{ %s }}: pgbt knows where x86_64 and aarch64 keep it, "
			 "not %s", what, pgbt_machine_name(e_machine));
}

int pgbt_machine_check_watchpoints(unsigned e_machine, const char *script,
				   const char *out, struct pgbt_err *err)
{
	if (e_machine == EM_X86_64)
		return 0;
	if (strncmp(out, "watchpoint:", 11) != 0 && !strstr(out, "\nwatchpoint:"))
		return 0;
	return pgbt_fail(err, "%s: its hardware watchpoint reads the value just written, as "
			 "x86-64 shows it; on %s a watchpoint fires before the write, so the "
			 "value read would be the old one: pgbt's watchpoint scripts are for "
			 "x86-64 servers", script, pgbt_machine_name(e_machine));
}
