/* The bpftrace a script is rendered for: its version decides which
 * language features a template may use ({{if bpftrace >= 0.21}}), and the
 * provenance block names it. */
#ifndef PGBT_BPFTRACE_H
#define PGBT_BPFTRACE_H

#include "lib/common/err.h"

#include <limits.h>
#include <stdbool.h>

/* The oldest bpftrace the scripts are written for: what a rendering
 * assumes when it cannot ask the bpftrace that will run it. */
#define PGBT_BPFTRACE_OLDEST "0.17.0"

struct pgbt_bpftrace {
	int version[3];         /* major, minor, patch */
	char how[PATH_MAX + 64];/* "/usr/bin/bpftrace --version", "--bpftrace 0.23", ... */
	char program[PATH_MAX]; /* how to run it: the name or path given, or
				   "bpftrace" (on PATH); "" when only a version
				   is known */
};

/* spec: a path to a bpftrace (its --version is asked, or remembered from
 * an earlier asking while the file is unchanged: bpftrace_cache.h), a
 * version number ("0.23" or "v0.23.2": rendering for another machine), or
 * NULL: the bpftrace on PATH, else the oldest supported. A spec that names
 * no runnable bpftrace is an error naming it. */
int pgbt_bpftrace_find(const char *spec, struct pgbt_bpftrace *ret, struct pgbt_err *err);

/* Parses "0.23", "0.23.2" or "v0.23.2" into version[3]; -1 if it is not one. */
int pgbt_bpftrace_parse_version(const char *s, int ret[3]);

/* Whether bt's -p PID attaches uprobes to that process alone: from 0.20
 * (before, a uprobe traps in every process mapping the file; USDT probes
 * and watchpoints follow -p in every version). NULL: the oldest, no. */
bool pgbt_bpftrace_scopes_uprobes(const struct pgbt_bpftrace *bt);

/* <0, 0, >0 as bt's version is older than, equal to, newer than v[3]. */
int pgbt_bpftrace_cmp(const struct pgbt_bpftrace *bt, const int v[3]);

#endif
