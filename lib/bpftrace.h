/* The bpftrace a script is rendered for: its version decides which
 * language features a template may use ({{if bpftrace >= 0.21}}), and the
 * provenance block names it. */
#ifndef PGBT_BPFTRACE_H
#define PGBT_BPFTRACE_H

#include "err.h"

#include <limits.h>
#include <stdbool.h>

/* The oldest bpftrace the scripts are written for: what a rendering
 * assumes when it cannot ask the bpftrace that will run it. */
#define PGBT_BPFTRACE_OLDEST "0.17.0"

struct pgbt_bpftrace {
	int version[3];         /* major, minor, patch */
	char how[PATH_MAX + 64];/* "/usr/bin/bpftrace --version", "--bpftrace 0.23", ... */
};

/* spec: a path to a bpftrace (its --version is asked), a version number
 * ("0.23" or "v0.23.2": rendering for another machine), or NULL: the
 * bpftrace on PATH, else the oldest supported. A spec that names no
 * runnable bpftrace is an error naming it. */
int pgbt_bpftrace_find(const char *spec, struct pgbt_bpftrace *ret, struct pgbt_err *err);

/* Parses "0.23", "0.23.2" or "v0.23.2" into version[3]; -1 if it is not one. */
int pgbt_bpftrace_parse_version(const char *s, int ret[3]);

/* <0, 0, >0 as bt's version is older than, equal to, newer than v[3]. */
int pgbt_bpftrace_cmp(const struct pgbt_bpftrace *bt, const int v[3]);

#endif
