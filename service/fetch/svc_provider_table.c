// SPDX-License-Identifier: Apache-2.0
/*
 * svc_provider_table: the provider kinds, one row per protocol
 * (svc_provider_impl.h), and the choice of one for a configured upstream by
 * its URL's scheme, as curl picks a protocol handler from its scheme table.
 * A new protocol (an object store, say) is its file and one row here.
 */
#include "service/fetch/svc_provider_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char *const http_schemes[] = {"http", "https", NULL};
static const char *const s3_schemes[] = {"s3", NULL};

const svc_provider_kind svc_provider_kinds[] = {
	{"debuginfod", http_schemes, &svc_provider_debuginfod_ops},
	{"s3", s3_schemes, &svc_provider_s3_ops},
	{NULL, NULL, NULL},
};

/* "http, https, ..." of every row, for the error text. */
static void known_schemes(char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	for (const svc_provider_kind *k = svc_provider_kinds; k->name; k++)
		for (const char *const *s = k->schemes; *s && n < cap; s++) {
			int w = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", *s);
			n += w > 0 ? (size_t)w : 0;
		}
}

const svc_provider_kind *svc_provider_kind_for(const char *url, svc_error *err)
{
	const char *colon = strstr(url, "://");
	size_t len = colon ? (size_t)(colon - url) : 0;
	char scheme[16];
	for (size_t i = 0; i < len && i < sizeof(scheme) - 1; i++)
		scheme[i] = (char)tolower((unsigned char)url[i]);
	scheme[len < sizeof(scheme) - 1 ? len : sizeof(scheme) - 1] = '\0';
	for (const svc_provider_kind *k = svc_provider_kinds; len && k->name; k++)
		for (const char *const *s = k->schemes; *s; s++)
			if (strlen(*s) == len && !strcmp(*s, scheme))
				return k;
	char known[128];
	known_schemes(known, sizeof(known));
	svc_error_set(err, SVC_E_INVALID, "no provider for the URL scheme '%s' (known: %s)",
		      len ? scheme : "(none)", known);
	return NULL;
}

svc_provider *svc_provider_create(const svc_provider_env *env, const char *url,
				  const char *display, bool peer, svc_error *err)
{
	const svc_provider_kind *k = svc_provider_kind_for(url, err);
	svc_provider *p = k ? k->ops->create(env, url, peer, err) : NULL;
	if (!p)
		svc_error_prefix(err, "upstream %s", display);
	return p;
}
