// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_creds: the S3 tier's pure helpers (svc_s3.h): the credentials
 * file's parser (outside bytes: capped, fuzzed by tests/fuzz). SHA-256 is
 * base_sha256's.
 */
#include "service/fetch/svc_s3.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>


/* The value of "name = value" in line [p, end) into out; 0: not this name,
 * 1: taken, -1: too long or empty. */
static int take(const char *p, const char *end, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);
	if ((size_t)(end - p) < n || strncasecmp(p, name, n))
		return 0;
	p += n;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p != '=')
		return 0;
	p++;
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	size_t len = (size_t)(end - p);
	if (len == 0 || len >= cap || memchr(p, '\0', len))
		return -1;
	memcpy(out, p, len);
	out[len] = '\0';
	return 1;
}

bool svc_s3_credentials_parse(const char *text, size_t len, char *key, size_t key_cap,
			      char *secret, size_t secret_cap, svc_error *err)
{
	key[0] = secret[0] = '\0';
	if (len > SVC_S3_CREDENTIALS_MAX)
		return svc_error_set(err, SVC_E_INVALID, "credentials: over %d bytes",
				     SVC_S3_CREDENTIALS_MAX), false;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		while (p < le && (*p == ' ' || *p == '\t'))
			p++;
		int a = key[0] ? 0 : take(p, le, "aws_access_key_id", key, key_cap);
		int b = secret[0] ? 0 : take(p, le, "aws_secret_access_key", secret, secret_cap);
		if (a < 0 || b < 0)
			return svc_error_set(err, SVC_E_INVALID, "credentials: %s is empty or too long",
					     a < 0 ? "aws_access_key_id" : "aws_secret_access_key"),
			       false;
		p = nl ? nl + 1 : end;
	}
	if (!key[0] || !secret[0])
		return svc_error_set(err, SVC_E_INVALID, "credentials: no %s line",
				     !key[0] ? "aws_access_key_id" : "aws_secret_access_key"),
		       false;
	return true;
}
