/* Whether this machine's hardware watchpoints fire. Some hypervisors do not
 * pass the CPU's debug registers through: a watchpoint is accepted there but
 * never fires, so a script built on one would count nothing, silently. */
#ifndef PGBT_HWBP_H
#define PGBT_HWBP_H

#include "lib/common/err.h"

/* Sets a write watchpoint on a variable of our own, writes it 4 times and
 * counts the hits. 1: they fire; 0: they do not (err says so); -1: could not
 * tell (the watchpoint could not be set: err says why). */
int pgbt_hw_watchpoints_fire(struct pgbt_err *err);

#endif
