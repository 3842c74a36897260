// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_key: where an object is and how a request to it is signed
 * (svc_s3.h): the versioned key layout, path-style or virtual-host URLs, and
 * SigV4 (CURLOPT_AWS_SIGV4) on an easy handle. Leaves: no calls out of here.
 */
#include "service/fetch/svc_s3_impl.h"
#include "service/fetch/svc_upstream_http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

const char *svc_s3_name(const svc_s3 *s3)
{
	return s3->name;
}

bool svc_s3_key(const svc_s3 *s3, const char *kind, const char *hex, const char *what, char *out,
		size_t cap)
{
	size_t hl = strlen(hex);
	if (hl < 4)
		return false;
	int w = snprintf(out, cap, "%s%sv1/%s/%.2s/%s/%s", s3->set.prefix,
			 s3->set.prefix[0] ? "/" : "", kind, hex, hex + 2, what);
	return w > 0 && (size_t)w < cap && (size_t)w < SVC_S3_KEY_MAX;
}

bool svc_s3_url(const svc_s3 *s3, const char *key, char *out, size_t cap)
{
	const char *ep = s3->set.endpoint;
	const char *host = strstr(ep, "://") + 3;
	int w;
	if (s3->set.virtual_host)
		w = snprintf(out, cap, "%.*s%s.%s/%s", (int)(host - ep), ep, s3->set.bucket, host,
			     key);
	else
		w = snprintf(out, cap, "%s/%s/%s", ep, s3->set.bucket, key);
	return w > 0 && (size_t)w < cap;
}

bool svc_s3_sign_hook(const void *s3, void *easy, void *headers)
{
	return svc_s3_sign(s3, easy, headers);
}

bool svc_s3_answer_verifies(const svc_http_result *res)
{
	bool sized = res->declared_size < 0 || (uint64_t)res->declared_size == res->size;
	return sized && res->sha256[0] && res->body_sha256[0] &&
	       !strcmp(res->sha256, res->body_sha256);
}

bool svc_s3_sign(const svc_s3 *s3, void *easy, void *headers)
{
	CURL *e = easy;
	struct curl_slist **h = headers;
	curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s3->sigv4);
	curl_easy_setopt(e, CURLOPT_USERNAME, s3->key);
	curl_easy_setopt(e, CURLOPT_PASSWORD, s3->secret);
	for (struct curl_slist *l = *h; l; l = l->next)
		if (!strncasecmp(l->data, "x-amz-content-sha256:", 21))
			return true;
	struct curl_slist *n = curl_slist_append(*h, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	if (!n)
		return false;
	*h = n;
	return true;
}
