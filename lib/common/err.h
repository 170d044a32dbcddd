/* Errors as values: a function that can fail fills a struct pgbt_err and
 * returns -1 (or NULL); the caller decides whether to print it.
 * A message is one line: "<input>: <cause>", e.g.
 * "/usr/bin/ls: no symbol 'TransamVariables' in .symtab or .dynsym". */
#ifndef PGBT_ERR_H
#define PGBT_ERR_H

#include <stddef.h>

/* What kind of failure it was: fallbacks and alternatives test this,
 * never the message's text. */
enum pgbt_errcode {
	PGBT_EFAIL,             /* any other */
	PGBT_ENOTFOUND,         /* a name (symbol, type, member, enumerator)
				   the source asked does not have */
	PGBT_ENODEBUG,          /* no debug info to ask */
	PGBT_EGONE,             /* the process is gone */
	PGBT_ENOMEM,
};

struct pgbt_err {
	char msg[1024];
	enum pgbt_errcode code;
};

/* Formats into err (printf-style) and returns -1, so callers can write
 * `return pgbt_fail(err, "%s: not an ELF file", path);`. err may be NULL. */
int pgbt_fail(struct pgbt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* pgbt_fail with a code other than PGBT_EFAIL. */
int pgbt_fail_code(struct pgbt_err *err, enum pgbt_errcode code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes an existing message: "<prefix>: <old message>"; the code stays.
 * Returns -1. */
int pgbt_fail_prefix(struct pgbt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
