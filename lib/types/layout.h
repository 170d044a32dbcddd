/* Built-in layouts: the facts a template may ask about (member offsets,
 * sizes, a global's type, enumerators), written down per PostgreSQL major
 * for builds without DWARF. They are data (lib/types/layouts/MAJOR.layout,
 * compiled into pgbt-gen) and every fact is checked against the DWARF of a
 * build of that major by `pgbt-gen check-layouts` in the tests.
 *
 * Files are named MAJOR.layout or MAJOR-FAMILY.layout (e.g. 17-waits.layout);
 * the files of one major are merged. One fact per line, '#' starts a comment:
 *   major 15
 *   machine x86_64 aarch64      (the machines the offsets and sizes below
 *        hold for, until the next machine line: member and sizeof facts
 *        are the ABI's and need one; the others are the source's and hold
 *        for every machine. A fact that differs is written once per
 *        machine, each under its own machine line.)
 *   var ShmemVariableCache VariableCacheData 1      (type, pointer depth)
 *   member VariableCacheData nextXid 8 8            (offset, size)
 *   sizeof FullTransactionId 8
 *   enumerator WAIT_EVENT_PG_SLEEP 0x09000002       (in enum TYPE order)
 *   enum WaitEventTimeout WAIT_EVENT_BASE_BACKUP_THROTTLE ... (names)
 *   label WAIT_EVENT_PG_SLEEP PgSleep                 (the name users see for
 *        an enumerator, e.g. in pg_stat_activity: from the source, not from
 *        DWARF, so it is kept for DWARF builds too; checked: the enumerator
 *        exists in DWARF)
 */
#ifndef PGBT_LAYOUT_H
#define PGBT_LAYOUT_H

#include "dwarf.h"
#include "lib/common/err.h"

#include <stddef.h>
#include <stdint.h>

enum pgbt_fact_kind { FACT_VAR, FACT_MEMBER, FACT_SIZEOF, FACT_ENUMERATOR, FACT_ENUM, FACT_LABEL };

struct pgbt_fact {
	enum pgbt_fact_kind kind;
	unsigned machines;  /* member/sizeof: a bit per machine it holds for
			       (PGBT_LAYOUT_MACHINE_*); the others: all bits */
	char type[64];      /* var: its type; member/sizeof/enum: the type */
	char name[128];     /* var/enumerator/label: its name; member: the path */
	uint64_t a, b;      /* var: pointers; member: offset, size; sizeof: size;
			       enumerator: value (as int64) */
	char *names;        /* enum: space-separated enumerator names;
			       label: the text */
	int line;
};

#define PGBT_LAYOUT_MACHINE_X86_64  1u
#define PGBT_LAYOUT_MACHINE_AARCH64 2u

struct pgbt_layout {
	int major;
	const char *origin;   /* "built-in layout for PostgreSQL 15" */
	struct pgbt_fact *facts;
	size_t n;
	size_t n_abi;         /* member and sizeof facts among them */
};

/* Parses layout text; errors name origin and line. */
int pgbt_layout_parse(const char *origin, const char *text, size_t len,
		      struct pgbt_layout *ret, struct pgbt_err *err);
void pgbt_layout_free(struct pgbt_layout *layout);

/* The built-in layout for a major on a machine (pgbt_machine_name: "x86_64",
 * "aarch64"): every embedded lib/types/layouts/MAJOR.layout and
 * lib/types/layouts/MAJOR-*.layout (one file per script family), merged, with
 * the member and sizeof facts of that machine only. Returns 1 when the
 * major has no file, -1 on a parse error; a major without offsets for the
 * machine gives n_abi == 0 (its source facts, e.g. labels, still hold). */
int pgbt_layout_builtin(int major, const char *machine, struct pgbt_layout *ret,
			struct pgbt_err *err);

/* Read the layout files (MAJOR.layout, MAJOR-FAMILY.layout) from dir
 * instead of the built-in ones (NULL or "": the built-in ones), e.g. to
 * try a layout for a new major, or to check that tests catch a wrong fact. */
void pgbt_layout_set_dir(const char *dir);

/* The majors whose built-in layout has offsets for a machine, as
 * "14, 15, 16, 17, 18" (read from --layouts-dir when one is set). */
void pgbt_layout_builtin_majors(const char *machine, char *ret, size_t len);

const struct pgbt_fact *pgbt_layout_find(const struct pgbt_layout *layout,
					 enum pgbt_fact_kind kind,
					 const char *type, const char *name);

/* Compares every fact with DWARF. Appends one line per mismatch to out
 * (size outlen) and returns the number of mismatches (-1 on error). */
int pgbt_layout_check(const struct pgbt_layout *layout, struct pgbt_dwarf *dw,
		      char *out, size_t outlen, size_t *ret_checked,
		      struct pgbt_err *err);

#endif
