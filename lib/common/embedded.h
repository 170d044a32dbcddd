/* Files compiled into pgbt-gen by lib/common/embed.sh: the templates of
 * scripts/ and the fallback layouts of lib/types/layouts/, so a copied
 * binary works alone. */
#ifndef PGBT_EMBEDDED_H
#define PGBT_EMBEDDED_H

#include <stddef.h>

struct pgbt_embedded {
	const char *path;   /* "scripts/xid-rate.bt", "lib/types/layouts/15.layout" */
	const char *data;   /* NUL-terminated */
	size_t len;
};

/* Terminated by an entry with path == NULL. */
extern const struct pgbt_embedded pgbt_embedded_files[];

#endif
