/* HTML escaping (report/escape.h). */
#include "escape.h"


/* How many bytes the UTF-8 sequence at u takes, or 0 when it is not one
 * (overlong forms and surrogates included). */
static size_t utf8_length(const unsigned char *u)
{
	size_t n;

	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		n = 2;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		n = 3;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t k = 1; k < n; k++)
		if ((u[k] & 0xc0) != 0x80)
			return 0;
	if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] >= 0xa0) ||
	    (u[0] == 0xf0 && u[1] < 0x90) || (u[0] == 0xf4 && u[1] >= 0x90))
		return 0;
	return n;
}

void rp_html_escape(struct pgbt_buf *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; u[i];) {
		size_t n = utf8_length(u + i);
		bool control = u[i] < 0x20 && u[i] != '\t' && u[i] != '\n';

		if (!n || control) {
			pgbt_buf_add(out, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		switch (u[i]) {
		case '&': pgbt_buf_add(out, "&amp;", 5); break;
		case '<': pgbt_buf_add(out, "&lt;", 4); break;
		case '>': pgbt_buf_add(out, "&gt;", 4); break;
		case '"': pgbt_buf_add(out, "&quot;", 6); break;
		case '\'': pgbt_buf_add(out, "&#39;", 5); break;
		default: pgbt_buf_add(out, s + i, n); break;
		}
		i += n;
	}
}

bool rp_html_attr_name_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}
