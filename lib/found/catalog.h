/* Names from a running server's catalog, read once with libpq when the
 * user gives a connection string (pgbt-gen -d CONNINFO): the relations of
 * the database connected to (schema-qualified, shared catalogs under
 * database 0), for templates to turn lock tags' OIDs into names. The
 * rendered script carries them as data; relations created later print as
 * OIDs. */
#ifndef PGBT_CATALOG_H
#define PGBT_CATALOG_H

#include "lib/common/err.h"
#include "rows.h"

#include <sys/types.h>

/* Longest name kept, in bytes: bpftrace's default string size is 64. */
#define PGBT_CATALOG_NAME_MAX 63

struct pgbt_catalog {
	char database[128];       /* current_database() */
	unsigned int database_oid;
	pid_t backend_pid;        /* pg_backend_pid() of our connection */
	/* rows "relations": db oid name file (priority order: user relations,
	 * their indexes, catalog tables, catalog indexes, the rest) */
	struct pgbt_rows relations;
};

/* Checks the backend serving our connection (its PID as the server sees
 * it), called while the connection is still open, so that the backend
 * still exists: e.g. that it belongs to the traced server. */
typedef int pgbt_catalog_check(pid_t backend_pid, const void *arg, struct pgbt_err *err);

/* Connects, reads, calls check (when not NULL) with arg, disconnects. An
 * error names the input and libpq's reason, or is check's. */
int pgbt_catalog_read(const char *conninfo, pgbt_catalog_check *check, const void *arg,
		      struct pgbt_catalog *ret, struct pgbt_err *err);
void pgbt_catalog_free(struct pgbt_catalog *c);

#endif
