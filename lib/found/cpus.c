#include "cpus.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPUS_MAX 65536    /* more than any kernel's NR_CPUS */

int pgbt_cpus_possible(const char *path, unsigned *ret_n, char *ret_list, size_t len,
		       struct pgbt_err *err)
{
	char list[4096], *p, *end;
	unsigned long hi = 0;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return pgbt_fail(err, "%s: %s", path, strerror(errno));
	n = fread(list, 1, sizeof(list) - 1, f);
	fclose(f);
	list[n] = '\0';
	list[strcspn(list, "\n")] = '\0';
	/* ranges "A" or "A-B", comma-separated, ascending */
	for (p = list; *p; p = end + (*end == ',')) {
		unsigned long a, b;

		if (!isdigit((unsigned char)*p))
			break;
		a = b = strtoul(p, &end, 10);
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				break;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a || b >= CPUS_MAX || (*end && *end != ','))
			break;
		hi = b + 1 > hi ? b + 1 : hi;
	}
	if (*p || hi == 0)
		return pgbt_fail(err, "%s: '%s' is not a list of CPUs", path, list);
	*ret_n = (unsigned)hi;
	snprintf(ret_list, len, "%s", list);
	return 0;
}
