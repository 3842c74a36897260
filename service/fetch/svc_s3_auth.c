// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_auth: the S3 client's credentials state after start (svc_s3.h).
 * Every answer S3 gives passes here: a 401 or 403 (the key revoked, rotated,
 * the bucket's policy changed) turns the state to failing and counts; the
 * next 2xx or 404 (an answer to accepted credentials) turns it back. Each change is one log line naming the status,
 * never a key or a secret; /status, /metrics (symbolizer_s3_auth_*) and the
 * S3 tier's breaker (its answers are REJECTED, svc_provider_s3.c) say it
 * while it lasts. Also the client's log sink. Any thread (atomics).
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdarg.h>
#include <stdio.h>

void svc_s3_log(svc_s3 *s3, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s3->log)
		s3->log(s3->log_arg, line);
	else
		fprintf(stderr, "s3: %s\n", line);
}

void svc_s3_note_status(svc_s3 *s3, long status)
{
	if (status == 401 || status == 403) {
		atomic_fetch_add(&s3->auth_failures, 1);
		atomic_store(&s3->auth_status, status);
		if (atomic_exchange(&s3->auth_state, SVC_S3_AUTH_FAILING) != SVC_S3_AUTH_FAILING)
			svc_s3_log(s3, "%s: the credentials are refused (HTTP %ld): uploads answer 503 "
				   "and reads fall through until they work again (check "
				   "--s3-credentials-file and the bucket's policy)", s3->name, status);
	} else if ((status >= 200 && status < 300) || status == 404) {
		/* (a 404 is an answer to signed credentials too) */
		if (atomic_exchange(&s3->auth_state, SVC_S3_AUTH_OK) != SVC_S3_AUTH_OK)
			svc_s3_log(s3, "%s: the credentials work again", s3->name);
	}
}

svc_s3_auth svc_s3_auth_state(const svc_s3 *s3, long *last_status, uint64_t *failures)
{
	svc_s3 *m = (svc_s3 *)s3;
	if (last_status)
		*last_status = atomic_load(&m->auth_status);
	if (failures)
		*failures = atomic_load(&m->auth_failures);
	return (svc_s3_auth)atomic_load(&m->auth_state);
}
