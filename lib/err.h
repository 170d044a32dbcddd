/* Errors as values: a function that can fail fills a struct pgbt_err and
 * returns -1 (or NULL); the caller decides whether to print it.
 * A message is one line: "<input>: <cause>", e.g.
 * "/usr/bin/ls: no symbol 'TransamVariables' in .symtab or .dynsym". */
#ifndef PGBT_ERR_H
#define PGBT_ERR_H

#include <stddef.h>

struct pgbt_err {
	char msg[1024];
};

/* Formats into err (printf-style) and returns -1, so callers can write
 * `return pgbt_fail(err, "%s: not an ELF file", path);`. err may be NULL. */
int pgbt_fail(struct pgbt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefixes an existing message: "<prefix>: <old message>". Returns -1. */
int pgbt_fail_prefix(struct pgbt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
