/* Text for an HTML page: what the traced server and the script give
 * (wait event names, query text, a data directory) may hold <, &, quotes
 * or bytes that are not UTF-8; escaped, it reads as text, in an element
 * or an attribute value alike. */
#ifndef PGBT_REPORT_ESCAPE_H
#define PGBT_REPORT_ESCAPE_H

#include "lib/common/buf.h"

#include <stdbool.h>

/* Appends s with & < > " ' as character references, and each byte that
 * is not part of valid UTF-8 (or is a control other than tab and newline)
 * as U+FFFD. */
void rp_html_escape(struct pgbt_buf *out, const char *s);

/* Whether data-NAME is a name that needs no escaping: lower-case letters,
 * digits and '-' (a table's key: "event", "pid"). */
bool rp_html_attr_name_ok(const char *name);

#endif
