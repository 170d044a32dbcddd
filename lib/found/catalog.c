#include "catalog.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relations that can be locked (not composite types), in the order a
 * bounded table keeps them: what users ask about first. Temporary schemas
 * are left out: their relations belong to one session and come and go.
 * "file" is the relation's file number (what the storage manager names it
 * by), 0 for relations without storage. */
static const char relations_sql[] =
	"SELECT CASE WHEN c.relisshared THEN 0 ELSE d.oid END, c.oid, n.nspname, c.relname, "
	"COALESCE(pg_catalog.pg_relation_filenode(c.oid), 0) "
	"FROM pg_catalog.pg_class c "
	"JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
	"JOIN pg_catalog.pg_database d ON d.datname = pg_catalog.current_database() "
	"WHERE c.relkind <> 'c' AND n.nspname !~ '^pg_(toast_)?temp_' "
	"ORDER BY CASE "
	"  WHEN n.nspname IN ('pg_catalog', 'information_schema') "
	"    OR n.nspname LIKE 'pg_toast%' THEN "
	"    CASE WHEN n.nspname = 'pg_catalog' AND c.relkind = 'r' THEN 2 "
	"         WHEN n.nspname = 'pg_catalog' AND c.relkind = 'i' THEN 3 ELSE 4 END "
	"  WHEN c.relkind IN ('i', 'I') THEN 1 ELSE 0 END, c.oid";

static const char *reason(PGconn *conn)
{
	static char msg[512];
	const char *m = conn ? PQerrorMessage(conn) : "out of memory";
	size_t n;

	/* libpq's messages are lines ending in "\n", sometimes several. */
	snprintf(msg, sizeof(msg), "%s", m && *m ? m : "unknown error");
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	for (char *p = msg; (p = strstr(p, "  "));)
		memmove(p, p + 1, strlen(p));
	n = strlen(msg);
	while (n && msg[n - 1] == ' ')
		msg[--n] = '\0';
	return msg;
}

/* The connection string as errors show it: passwords masked
 * ("password=secret" and "postgresql://user:secret@host"). */
static const char *shown(const char *conninfo)
{
	static char out[512];
	const char *p = conninfo, *pw, *at;
	size_t o = 0;

	while (*p && o + 4 < sizeof(out)) {
		if ((pw = strstr(p, "password=")) == p) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "password=***");
			p += 9 + strcspn(p + 9, " ");
		} else if (strncmp(p, "://", 3) == 0 && (at = strchr(p, '@')) &&
			   (pw = memchr(p + 3, ':', (size_t)(at - p - 3)))) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s:***",
					      (int)(pw - p), p);
			p = at;
		} else {
			out[o++] = *p++;
		}
	}
	out[o < sizeof(out) ? o : sizeof(out) - 1] = '\0';
	return out;
}

static int read_relations(PGconn *conn, struct pgbt_catalog *c, struct pgbt_err *err)
{
	PGresult *res = PQexec(conn, relations_sql);
	char origin[256];
	int rc = 0;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		rc = pgbt_fail(err, "pg_class: %s", reason(conn));
		PQclear(res);
		return rc;
	}
	snprintf(origin, sizeof(origin), "pg_class of database %s (OID %u) at render time",
		 c->database, c->database_oid);
	if (pgbt_rows_init(&c->relations, "relations", "db oid name file", origin, err) < 0) {
		PQclear(res);
		return -1;
	}
	for (int i = 0; i < PQntuples(res) && rc == 0; i++) {
		char qualified[300], name[PGBT_CATALOG_NAME_MAX * 4 + 1];
		const char *cells[4] = { PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), name,
					 PQgetvalue(res, i, 4) };

		snprintf(qualified, sizeof(qualified), "%s.%s", PQgetvalue(res, i, 2),
			 PQgetvalue(res, i, 3));
		pgbt_rows_escape(qualified, PGBT_CATALOG_NAME_MAX, name, sizeof(name));
		rc = pgbt_rows_add(&c->relations, cells, err);
	}
	PQclear(res);
	return rc;
}

int pgbt_catalog_read(const char *conninfo, pgbt_catalog_check *check, const void *arg,
		      struct pgbt_catalog *ret, struct pgbt_err *err)
{
	PGconn *conn;
	PGresult *res;
	int rc = 0;

	memset(ret, 0, sizeof(*ret));
	/* like psql -d: a connection string, a URI or a database name */
	conn = PQconnectdbParams((const char *const[]){ "dbname", "fallback_application_name", NULL },
				 (const char *const[]){ conninfo, "pgbt-gen", NULL }, 1);
	if (!conn || PQstatus(conn) != CONNECTION_OK) {
		rc = pgbt_fail(err, "-d '%s': cannot connect: %s", shown(conninfo), reason(conn));
		PQfinish(conn);
		return rc;
	}
	res = PQexec(conn, "SELECT pg_catalog.current_database(), d.oid, pg_catalog.pg_backend_pid() "
		     "FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		rc = pgbt_fail(err, "-d '%s': pg_database: %s", shown(conninfo), reason(conn));
	} else {
		snprintf(ret->database, sizeof(ret->database), "%s", PQgetvalue(res, 0, 0));
		ret->database_oid = (unsigned int)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
		ret->backend_pid = (pid_t)strtol(PQgetvalue(res, 0, 2), NULL, 10);
	}
	PQclear(res);
	if (rc == 0 && check && check(ret->backend_pid, arg, err) < 0)
		rc = -1;
	if (rc == 0 && read_relations(conn, ret, err) < 0)
		rc = pgbt_fail_prefix(err, "-d '%s'", shown(conninfo));
	PQfinish(conn);
	if (rc < 0)
		pgbt_catalog_free(ret);
	return rc;
}

void pgbt_catalog_free(struct pgbt_catalog *c)
{
	pgbt_rows_free(&c->relations);
}
