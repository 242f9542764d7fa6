/*
 * util/error.c - filling the error slot.  Stateless; never prints.
 */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mp_err(struct mp_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

int mp_err_copy(struct mp_error *dst, const struct mp_error *src)
{
	if (dst && src && dst != src)
		memcpy(dst, src, sizeof(*dst));
	return src ? src->code : MP_EINVAL;
}

void mp_err_clear(struct mp_error *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
	}
}
