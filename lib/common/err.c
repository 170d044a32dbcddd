#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int vfail(struct pgbt_err *err, enum pgbt_errcode code, const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	err->code = code;
	return -1;
}

int pgbt_fail(struct pgbt_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(err, PGBT_EFAIL, fmt, ap);
	va_end(ap);
	return -1;
}

int pgbt_fail_code(struct pgbt_err *err, enum pgbt_errcode code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(err, code, fmt, ap);
	va_end(ap);
	return -1;
}

int pgbt_fail_prefix(struct pgbt_err *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	return -1;
}
