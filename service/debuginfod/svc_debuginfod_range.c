// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod_range: the one byte range a GET of a file may ask for
 * (RFC 9110, section 14), so that a client resumes a large download instead
 * of starting over (elfutils' clients and curl -C send `Range: bytes=N-`).
 * One range only: a list of ranges, or any form this does not read, is
 * answered with the whole file, as the RFC allows a server to.
 */
#include "service/debuginfod/svc_debuginfod_impl.h"

#include <string.h>

/* Digits at *p as a number (at most 19 of them: no overflow); false when none. */
static bool digits(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 19)
			return false;
		v = v * 10 + (uint64_t)(s[n] - '0');
		n++;
	}
	*p = s + n;
	*out = v;
	return n > 0;
}

svc_dbg_range svc_dbg_range_parse(const char *header, uint64_t size, uint64_t *first,
				  uint64_t *last)
{
	static const char unit[] = "bytes=";
	if (!header || strncmp(header, unit, sizeof(unit) - 1) != 0)
		return SVC_DBG_RANGE_NONE;
	const char *p = header + sizeof(unit) - 1;
	uint64_t a = 0, b = 0;
	if (*p == '-') {  /* the last b bytes */
		p++;
		if (!digits(&p, &b) || *p)
			return SVC_DBG_RANGE_NONE;
		if (b == 0 || size == 0)
			return SVC_DBG_RANGE_UNSATISFIABLE;
		*first = b >= size ? 0 : size - b;
		*last = size - 1;
		return SVC_DBG_RANGE_OK;
	}
	if (!digits(&p, &a) || *p++ != '-')
		return SVC_DBG_RANGE_NONE;
	bool open_end = *p == '\0';
	if (!open_end && (!digits(&p, &b) || *p || b < a))
		return SVC_DBG_RANGE_NONE;
	if (a >= size)
		return SVC_DBG_RANGE_UNSATISFIABLE;
	*first = a;
	*last = open_end || b >= size ? size - 1 : b;
	return SVC_DBG_RANGE_OK;
}
