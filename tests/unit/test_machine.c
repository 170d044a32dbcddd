/* What pgbt knows to differ between machines: their names, the registers
 * a template's {{ caller }} and {{ ip }} become, the watchpoint scripts
 * refused where a watchpoint fires before the write, and the layouts'
 * offsets kept per machine (lib/found/machine.c, lib/types/layout.c). */
#include "check.h"
#include "lib/types/layout.h"
#include "lib/found/machine.h"

#include <elf.h>
#include <string.h>

static void test_names_and_registers(void)
{
	struct pgbt_err err = { .msg = "" };
	char out[128];

	CHECK_STR(pgbt_machine_name(EM_X86_64), "x86_64");
	CHECK_STR(pgbt_machine_name(EM_AARCH64), "aarch64");
	CHECK_STR(pgbt_machine_name(EM_PPC64), "ELF machine 21");
	CHECK(pgbt_machine_reg(EM_X86_64, "caller", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "*(uint64 *)reg(\"sp\")");
	CHECK(pgbt_machine_reg(EM_X86_64, "ip", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "reg(\"ip\")");
	CHECK(pgbt_machine_reg(EM_AARCH64, "caller", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "reg(\"r30\")");
	CHECK(pgbt_machine_reg(EM_AARCH64, "ip", out, sizeof(out), &err) == 0);
	CHECK_STR(out, "reg(\"pc\")");
	CHECK(pgbt_machine_reg(EM_AARCH64, "sp", out, sizeof(out), &err) == 1);
	CHECK(pgbt_machine_reg(EM_PPC64, "caller", out, sizeof(out), &err) == -1);
	CHECK_STR(err.msg, "{{ caller }}: pgbt knows where x86_64 and aarch64 keep it, "
		  "not ELF machine 21");
}

static void test_watchpoints(void)
{
	static const char *const with[] = { "watchpoint:0x10:8:w\n{}\n",
					    "BEGIN {}\nwatchpoint:0x10:4:w\n{}\n" };
	struct pgbt_err err = { .msg = "" };

	for (size_t i = 0; i < 2; i++) {
		CHECK(pgbt_machine_check_watchpoints(EM_X86_64, "xid-rate", with[i], &err) == 0);
		CHECK(pgbt_machine_check_watchpoints(EM_AARCH64, "xid-rate", with[i], &err) == -1);
		CHECK(strstr(err.msg, "xid-rate: its hardware watchpoint reads the value just "
			      "written") == err.msg);
		CHECK(strstr(err.msg, "on aarch64 a watchpoint fires before the write") != NULL);
	}
	/* a mention in a comment is no probe */
	CHECK(pgbt_machine_check_watchpoints(EM_AARCH64, "waits",
					     "// no watchpoint: here\nBEGIN {}\n", &err) == 0);
}

static void parse_fails(const char *text, const char *want)
{
	struct pgbt_err err = { .msg = "" };
	struct pgbt_layout l;

	CHECK(pgbt_layout_parse("t.layout", text, strlen(text), &l, &err) == -1);
	CHECK_STR(err.msg, want);
}

/* A fact that differs is written per machine; the source's facts hold for
 * every machine. */
static void test_layout_machines(void)
{
	static const char text[] =
		"major 15\n"
		"machine x86_64 aarch64\n"
		"member S a 0 4\n"
		"machine x86_64\n"
		"member S b 5 4   # after an unsigned char\n"
		"sizeof S 12\n"
		"machine aarch64\n"
		"member S b 8 4   # after an int\n"
		"sizeof S 12\n"
		"enumerator E_ONE 1\n"
		"label E_ONE One\n";
	struct pgbt_err err = { .msg = "" };
	struct pgbt_layout l;
	const struct pgbt_fact *f;

	CHECK(pgbt_layout_parse("t.layout", text, strlen(text), &l, &err) == 0);
	CHECK_EQ_U(l.n, 7);
	CHECK_EQ_U(l.n_abi, 5);
	f = pgbt_layout_find(&l, FACT_MEMBER, "S", "b");
	CHECK(f && f->a == 5 && f->machines == PGBT_LAYOUT_MACHINE_X86_64);
	CHECK((f = pgbt_layout_find(&l, FACT_MEMBER, "S", "a")) &&
	      f->machines == (PGBT_LAYOUT_MACHINE_X86_64 | PGBT_LAYOUT_MACHINE_AARCH64));
	CHECK((f = pgbt_layout_find(&l, FACT_LABEL, NULL, "E_ONE")) && f->machines == ~0u);
	pgbt_layout_free(&l);

	parse_fails("major 15\nmember S a 0 4\n", "t.layout:2: an offset or size needs a "
		    "'machine' line before it (the machines it holds for)");
	parse_fails("major 15\nmachine x86_64 sparc\n", "t.layout:2: cannot parse this line");
	parse_fails("major 15\nmachine\n", "t.layout:2: cannot parse this line");
	parse_fails("major 15\nsizeof S 4\n", "t.layout:2: an offset or size needs a "
		    "'machine' line before it (the machines it holds for)");
}

/* The built-in layouts: offsets for aarch64 where Debian's arm64 headers
 * checked them (tests/e2e/arm64.sh), none for 14 and 16, whose source
 * facts (labels) still load. */
static void test_builtin(void)
{
	static const struct { int major; size_t x86, arm; } want[] = {
		{ 13, 1, 1 }, { 14, 1, 0 }, { 15, 1, 1 }, { 16, 1, 0 }, { 17, 1, 1 }, { 18, 1, 1 },
	};
	struct pgbt_err err = { .msg = "" };
	char majors[128];

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct pgbt_layout x86, arm;

		CHECK(pgbt_layout_builtin(want[i].major, "x86_64", &x86, &err) == 0);
		CHECK(pgbt_layout_builtin(want[i].major, "aarch64", &arm, &err) == 0);
		CHECK_EQ_U(x86.n_abi > 0, want[i].x86);
		CHECK_EQ_U(arm.n_abi > 0, want[i].arm);
		CHECK(pgbt_layout_find(&arm, FACT_LABEL, NULL, NULL) != NULL);
		if (want[i].major == 17)    /* tuplesort.c's own: x86_64 only */
			CHECK(!pgbt_layout_find(&arm, FACT_MEMBER, "Tuplesortstate", NULL) &&
			      pgbt_layout_find(&x86, FACT_MEMBER, "Tuplesortstate", NULL));
		pgbt_layout_free(&x86);
		pgbt_layout_free(&arm);
	}
	pgbt_layout_builtin_majors("x86_64", majors, sizeof(majors));
	CHECK_STR(majors, "13, 14, 15, 16, 17, 18");
	pgbt_layout_builtin_majors("aarch64", majors, sizeof(majors));
	CHECK_STR(majors, "13, 15, 17, 18");
	pgbt_layout_builtin_majors("ELF machine 21", majors, sizeof(majors));
	CHECK_STR(majors, "");
	{	/* a machine no layout names: no offsets, the labels still */
		struct pgbt_layout other;

		CHECK(pgbt_layout_builtin(15, "ELF machine 21", &other, &err) == 0);
		CHECK_EQ_U(other.n_abi, 0);
		CHECK(!pgbt_layout_find(&other, FACT_MEMBER, NULL, NULL));
		CHECK(pgbt_layout_find(&other, FACT_LABEL, NULL, NULL) != NULL);
		CHECK(pgbt_layout_find(&other, FACT_ENUMERATOR, NULL, NULL) != NULL);
		pgbt_layout_free(&other);
	}
}

int main(void)
{
	test_names_and_registers();
	test_watchpoints();
	test_layout_machines();
	test_builtin();
	return check_done();
}
