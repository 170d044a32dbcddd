/* Evaluates the expressions and conditions inside a template's {{ }} (see
 * docs/templates.md for the language) against a target, and writes down how
 * every value was found, for the provenance block. */
#ifndef PGBT_EXPR_H
#define PGBT_EXPR_H

#include "buf.h"
#include "dwarf.h"
#include "err.h"
#include "target.h"
#include "template.h"

#include <stdbool.h>

#define PGBT_MAX_SEEN 128

struct pgbt_binding {
	char name[32];
	const struct pgbt_enumerator *item;     /* for X in enum(T) */
	const struct pgbt_rows *rows;           /* for X in ROWS: row i */
	size_t row;
};

struct pgbt_eval {
	struct pgbt_target *t;
	const struct pgbt_template *tpl;
	struct pgbt_binding loop[4];
	size_t nloop;
	int depth;                      /* of let expansion, against cycles */
	const struct pgbt_include *inc; /* the fragment being rendered, whose
					   arguments hide parameters */
	pid_t in_pid;                   /* whose memory is read: a backend
					   inside backend(), else 0 (postmaster) */
	struct pgbt_buf prov;           /* "//   EXPR = VALUE ..." lines */
	char *seen[PGBT_MAX_SEEN];      /* expressions already in prov */
	size_t nseen;
};

int pgbt_eval(struct pgbt_eval *ev, const char *expr, char *out, size_t outlen,
	      struct pgbt_err *err);
int pgbt_eval_cond(struct pgbt_eval *ev, const char *cond, bool *ret,
		   struct pgbt_err *err);
void pgbt_eval_free(struct pgbt_eval *ev);

/* Copies s without leading/trailing blanks into out. */
void pgbt_trim(const char *s, size_t n, char *out, size_t outlen);

#endif
