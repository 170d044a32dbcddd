/* Who printed the JSON (report/ident.h). */
#include "ident.h"

#include <stdio.h>
#include <string.h>

bool rp_ident_parse(const char *line, struct rp_ident *ret)
{
	const char *p = line, *colon, *dir;
	char tail[128];
	int n;

	memset(ret, 0, sizeof(*ret));
	if (strncmp(p, "pgbt ", 5) != 0)
		return false;
	p += 5;
	colon = strstr(p, ": postmaster ");
	if (!colon)
		return false;
	n = (int)strcspn(p, " :");
	if (n == 0 || n >= (int)sizeof(ret->script))
		return false;
	memcpy(ret->script, p, (size_t)n);
	p += n;
	while (p < colon) {
		const char *eq, *end;
		p++;                              /* the blank */
		end = p + strcspn(p, " :");
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq || ret->nparams == RP_MAX_PARAMS || eq - p >= 64 || end - eq - 1 >= 64)
			return false;
		snprintf(ret->params[ret->nparams][0], 64, "%.*s", (int)(eq - p), p);
		snprintf(ret->params[ret->nparams][1], 64, "%.*s", (int)(end - eq - 1), eq + 1);
		ret->nparams++;
		p = end;
	}
	dir = strstr(colon, ", data directory ");
	if (!dir || sscanf(colon, ": postmaster %ld, port %d%127[^\n]", &ret->postmaster, &ret->port,
			   tail) != 3 || strncmp(tail, ", data directory ", 17) != 0)
		return false;
	dir += 17;
	n = (int)strcspn(dir, "\n");
	if (n == 0 || n >= (int)sizeof(ret->datadir) || ret->port < 1 || ret->port > 65535 ||
	    ret->postmaster < 1)
		return false;
	memcpy(ret->datadir, dir, (size_t)n);
	return true;
}

const char *rp_ident_param(const struct rp_ident *id, const char *name)
{
	for (int i = 0; i < id->nparams; i++)
		if (strcmp(id->params[i][0], name) == 0)
			return id->params[i][1];
	return NULL;
}
