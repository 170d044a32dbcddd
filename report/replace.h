/* A file replaced whole or not at all: written to a hidden temporary file
 * beside it, then renamed over it, so that whoever reads it (a metrics
 * collector, a browser's reload) never sees half a file. */
#ifndef PGBT_REPORT_REPLACE_H
#define PGBT_REPORT_REPLACE_H

#include "lib/common/err.h"

#include <stddef.h>

/* Puts len bytes of data at path, through DIR/.NAME.PID.tmp. what names
 * the output when the temporary file cannot be made ("--textfile DIR");
 * on failure nothing is left but what path held before. */
int rp_replace_file(const char *path, const char *data, size_t len, const char *what,
		    struct pgbt_err *err);

#endif
