// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_url: the URL of a debuginfod GET (svc_fetch_impl.h), built in an
 * allocation of its exact length: a long base URL is never cut, an absurd one
 * is refused with an error that says so.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdlib.h>
#include <string.h>

char *svc_fetch_url(const char *base, const char *hex, const char *what, svc_error *err)
{
	static const char mid[] = "/buildid/";
	size_t lb = strlen(base), lh = strlen(hex), lw = strlen(what);
	size_t n = lb + (sizeof(mid) - 1) + lh + 1 + lw;
	if (lb > SVC_FETCH_URL_MAX || n > SVC_FETCH_URL_MAX) {
		svc_error_set(err, SVC_E_INVALID, "URL of %zu bytes, over the %d-byte limit",
			      lb > SVC_FETCH_URL_MAX ? lb : n, SVC_FETCH_URL_MAX);
		return NULL;
	}
	char *url = malloc(n + 1);
	if (!url) {
		svc_error_set(err, SVC_E_NOMEM, "URL: out of memory");
		return NULL;
	}
	char *p = url;
	memcpy(p, base, lb);
	p += lb;
	memcpy(p, mid, sizeof(mid) - 1);
	p += sizeof(mid) - 1;
	memcpy(p, hex, lh);
	p += lh;
	*p++ = '/';
	memcpy(p, what, lw);
	p[lw] = '\0';
	return url;
}
