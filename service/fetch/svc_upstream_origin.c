// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upstream_origin: whether two URLs have the same host and port (the
 * scheme's default port when none is written), for the redirect policy of
 * svc_upstream_http.c. A leaf over libcurl's URL parser.
 */
#include "service/fetch/svc_upstream_http.h"

#include <string.h>
#include <strings.h>

#include <curl/curl.h>

/* Host and port (the scheme's default when none is written) of url. */
static bool origin_of(const char *url, char **host, char **port)
{
	*host = *port = NULL;
	CURLU *u = curl_url();
	if (!u)
		return false;
	bool ok = curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_HOST, host, 0) == CURLUE_OK &&
		  curl_url_get(u, CURLUPART_PORT, port, CURLU_DEFAULT_PORT) == CURLUE_OK;
	curl_url_cleanup(u);
	return ok;
}

bool svc_http_same_origin(const char *a, const char *b)
{
	char *ha = NULL, *pa = NULL, *hb = NULL, *pb = NULL;
	bool same = origin_of(a, &ha, &pa) && origin_of(b, &hb, &pb) && !strcasecmp(ha, hb) &&
		    !strcmp(pa, pb);
	curl_free(ha);
	curl_free(pa);
	curl_free(hb);
	curl_free(pb);
	return same;
}

