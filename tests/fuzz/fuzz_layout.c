/* libFuzzer target: the layout file parser (lib/types/layout.c) on any text. */
#include "lib/types/layout.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgbt_layout layout;
	struct pgbt_err err;

	if (pgbt_layout_parse("fuzz", (const char *)data, size, &layout, &err) == 0) {
		pgbt_layout_find(&layout, FACT_MEMBER, "PGPROC", "pid");
		pgbt_layout_free(&layout);
	}
	return 0;
}
