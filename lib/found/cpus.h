/* The CPU ids of this machine, for scripts that keep one counter per CPU
 * (bpftrace's `cpu`) and add them up: {{cpus}}. */
#ifndef PGBT_CPUS_H
#define PGBT_CPUS_H

#include "lib/common/err.h"

#include <stddef.h>

#define PGBT_CPUS_POSSIBLE "/sys/devices/system/cpu/possible"

/* Reads a CPU list such as "0-3,8-11" (the kernel's format, as in
 * PGBT_CPUS_POSSIBLE) from path: *ret_n is its highest id + 1 (every id a
 * CPU of this machine can have is below it), ret_list the list as read. */
int pgbt_cpus_possible(const char *path, unsigned *ret_n, char *ret_list, size_t len,
		       struct pgbt_err *err);

#endif
