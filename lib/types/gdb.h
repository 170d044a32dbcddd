/* gdb as a second reader of a server's debug info and memory. One gdb
 * process serves many questions: reading a PostgreSQL build's debug info
 * takes gdb seconds, a question then takes about a millisecond. It is
 * driven through its machine interface (MI) over pipes, so every answer,
 * and every refusal with gdb's own words, is told apart from the rest.
 * Used by --check-with gdb (attached to a process) and --resolver gdb
 * (on the binary alone). */
#ifndef PGBT_GDB_H
#define PGBT_GDB_H

#include "lib/common/err.h"

#include <stddef.h>
#include <sys/types.h>

struct pgbt_gdb;

/* Starts gdb on the binary PATH, or attached to process PID when PATH is
 * NULL (the process stops while attached, and runs on after close).
 * Debug info is searched where gdb searches it, under
 * $PGBT_DEBUGINFO_PATH's directories when set, and through debuginfod
 * only when DEBUGINFOD_URLS is set. Fails with one line when gdb is not
 * installed or cannot attach. */
struct pgbt_gdb *pgbt_gdb_start(const char *path, pid_t pid, struct pgbt_err *err);
void pgbt_gdb_close(struct pgbt_gdb *g);

/* Runs one gdb command (print, whatis, ptype, ...) and puts what it
 * printed, without the last newline, in ret. When gdb refuses, fails with
 * gdb's message alone (e.g. No symbol "Foo" in current context.). */
int pgbt_gdb_ask(struct pgbt_gdb *g, const char *command, char *ret, size_t len,
		 struct pgbt_err *err);

/* "print/x EXPR" or "print/d EXPR" as a number. */
int pgbt_gdb_number(struct pgbt_gdb *g, const char *format, const char *expr,
		    long long *ret, struct pgbt_err *err);

/* The first line of gdb's version, e.g. "GNU gdb (Debian 13.1-3) 13.1". */
const char *pgbt_gdb_version(const struct pgbt_gdb *g);
/* The same, of the gdb on PATH, without starting a session. */
int pgbt_gdb_installed_version(char *ret, size_t len, struct pgbt_err *err);
/* Questions asked so far, and milliseconds since start. */
unsigned pgbt_gdb_asked(const struct pgbt_gdb *g);
long pgbt_gdb_elapsed_ms(const struct pgbt_gdb *g);

#endif
