/* Who printed the JSON: a pgbt script says so in its first line ({{ report
 * }}: "pgbt SCRIPT PARAMS: postmaster PID, port N, data directory DIR").
 * The reader finds it; every output names the script and the server. */
#ifndef PGBT_REPORT_IDENT_H
#define PGBT_REPORT_IDENT_H

#include <stdbool.h>

#define RP_MAX_PARAMS 16

struct rp_ident {
	char script[64];
	char params[RP_MAX_PARAMS][2][64];   /* name, value */
	int nparams;
	long postmaster;
	int port;
	char datadir[4096];
};

/* Parses the identification line (without its newline); false if it is
 * not one. */
bool rp_ident_parse(const char *line, struct rp_ident *ret);
const char *rp_ident_param(const struct rp_ident *id, const char *name);

#endif
