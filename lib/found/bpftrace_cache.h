/* The first line of `bpftrace --version`, remembered per bpftrace file:
 * asking it costs about as much as the rest of a rendering. An answer
 * holds while the file (its path with links resolved) keeps its size and
 * mtime. The answers live in one small file, DIR/bpftrace-versions, one
 * line per program, replaced whole (a temporary file renamed over it).
 * Nothing here fails: a cache that cannot be read or written, or a line
 * that is not one of ours, is passed over and the program is asked. */
#ifndef PGBT_BPFTRACE_CACHE_H
#define PGBT_BPFTRACE_CACHE_H

#include <stddef.h>

/* Where the answers are kept: $XDG_CACHE_HOME/pgbt, else
 * $HOME/.cache/pgbt; "" when neither is set. */
void pgbt_cache_dir(char *ret, size_t len);

/* The remembered line for program prog, into line: 0, or -1 when there is
 * none that holds for the file as it is now. */
int pgbt_bpftrace_cache_get(const char *dir, const char *prog, char *line, size_t len);

/* Remembers line for prog as the file is now (dir made if need be). */
void pgbt_bpftrace_cache_put(const char *dir, const char *prog, const char *line);

#endif
