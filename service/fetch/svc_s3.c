// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3: the S3 client's object (svc_s3.h): made from the settings and the
 * credentials (a file or the AWS_* variables; the secret is wiped when the
 * object goes), attached to the loop's multi handle for its writes.
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <errno.h>

static bool load_credentials(svc_s3 *s3, const svc_s3_settings *s, svc_error *err)
{
	if (s->credentials_file[0]) {
		char text[SVC_S3_CREDENTIALS_MAX + 1];
		FILE *fp = fopen(s->credentials_file, "re");
		if (!fp)
			return svc_error_set(err, SVC_E_INVALID, "--s3-credentials-file %s: %s",
					     s->credentials_file, strerror(errno)), false;
		size_t n = fread(text, 1, sizeof(text), fp);
		fclose(fp);
		bool ok = svc_s3_credentials_parse(text, n, s3->key, sizeof(s3->key), s3->secret,
						   sizeof(s3->secret), err);
		memset(text, 0, sizeof(text));
		if (!ok)
			svc_error_prefix(err, "--s3-credentials-file %s", s->credentials_file);
		return ok;
	}
	const char *k = getenv("AWS_ACCESS_KEY_ID"), *sec = getenv("AWS_SECRET_ACCESS_KEY");
	if (!k || !*k || !sec || !*sec)
		return svc_error_set(err, SVC_E_INVALID,
				     "s3: no credentials (--s3-credentials-file, or "
				     "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"), false;
	if (strlen(k) >= sizeof(s3->key) || strlen(sec) >= sizeof(s3->secret))
		return svc_error_set(err, SVC_E_INVALID, "s3: AWS_* credentials too long"), false;
	snprintf(s3->key, sizeof(s3->key), "%s", k);
	snprintf(s3->secret, sizeof(s3->secret), "%s", sec);
	return true;
}

svc_s3 *svc_s3_create(const svc_s3_settings *s, const char *user_agent, svc_error *err)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	svc_s3 *s3 = calloc(1, sizeof(*s3));
	if (!s3)
		return svc_error_set(err, SVC_E_NOMEM, "s3: out of memory"), NULL;
	s3->set = *s;
	size_t n = strlen(s3->set.endpoint);
	while (n && s3->set.endpoint[n - 1] == '/')
		s3->set.endpoint[--n] = '\0';
	snprintf(s3->name, sizeof(s3->name), "s3://%s%s%s", s->bucket, s->prefix[0] ? "/" : "",
		 s->prefix);
	snprintf(s3->sigv4, sizeof(s3->sigv4), "aws:amz:%s:s3", s->region);
	snprintf(s3->user_agent, sizeof(s3->user_agent), "%s", user_agent ? user_agent : "symbolizer");
	svc_s3_behind_init(s3);
	if (!load_credentials(s3, s, err)) {
		svc_s3_destroy(s3);
		return NULL;
	}
	return s3;
}

void svc_s3_destroy(svc_s3 *s3)
{
	if (!s3)
		return;
	svc_s3_behind_free(s3);
	/* The secret leaves no copy in freed memory. */
	memset(s3->secret, 0, sizeof(s3->secret));
	free(s3);
}

bool svc_s3_attach(svc_s3 *s3, struct event_base *base, struct svc_http *http,
		   void (*log)(void *arg, const char *line), void *log_arg, svc_error *err)
{
	s3->base = base;
	s3->http = http;
	s3->log = log;
	s3->log_arg = log_arg;
	return svc_s3_behind_attach(s3, err);
}

void svc_s3_detach(svc_s3 *s3)
{
	svc_s3_behind_detach(s3);
	s3->http = NULL;
	svc_s3_put_stop_all(s3);
}
