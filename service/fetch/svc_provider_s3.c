// SPDX-License-Identifier: Apache-2.0
/*
 * svc_provider_s3: the shared S3 tier as a provider (svc_provider_impl.h),
 * asked first among the upstreams (svc_fetch_sources.c): a GET of
 * PREFIX/v1/<kind>/ab/cdef.../debuginfo|executable (svc_s3.h), signed with
 * SigV4 on the fetcher's multi handle, and what the answers mean:
 *
 *   200 with the size and the x-amz-meta-sha256 it was written with: found
 *   200 that differs (truncated, another checksum, none): retry, counted as
 *       bad, never served; the walk goes on to the next source
 *   404: not found (a negative result stays local: nothing is written)
 *   401, 403: the credentials refused (revoked, rotated after start): a
 *       retry for the S3 tier's breaker, which opens; the client's
 *       credentials state (svc_s3_auth.c) says it in /status and /metrics
 *   5xx, timeouts, refused connections: retry (the S3 tier's breaker)
 *
 * Source files are not kept in S3 (a not found, without a request).
 */
#include "service/fetch/svc_provider_impl.h"
#include "service/fetch/svc_s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_build_id.h"

typedef struct s3p {
	svc_provider base;
	svc_provider_env env;
} s3p;

static svc_provider *s3p_create(const svc_provider_env *env, const char *url, bool peer,
				svc_error *err)
{
	(void)url, (void)peer;
	if (!env->s3)
		return svc_error_set(err, SVC_E_INVALID, "s3: no --s3-endpoint configured"), NULL;
	s3p *p = calloc(1, sizeof(*p));
	if (!p)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), NULL;
	p->base.ops = &svc_provider_s3_ops;
	p->env = *env;
	return &p->base;
}

static void s3p_destroy(svc_provider *p)
{
	free(p);
}

static svc_provider_req *s3p_start(svc_provider *p, const svc_provider_ask *ask,
				   svc_http_done_fn done, void *arg, svc_error *err)
{
	s3p *s = (s3p *)p;
	const svc_config *c = s->env.cfg;
	const char *kind = sym_id_kind_name(ask->id_kind);
	char key[SVC_S3_KEY_MAX], url[SVC_S3_KEY_MAX + 1024];
	if (ask->want == SVC_WANT_SOURCE)
		return svc_error_set(err, SVC_E_NOT_FOUND, "source files are not kept in S3"), NULL;
	if (!kind ||
	    !svc_s3_key(s->env.s3, kind, ask->hex,
			ask->want == SVC_WANT_DEBUGINFO ? "debuginfo" : "executable", key,
			sizeof(key)) ||
	    !svc_s3_url(s->env.s3, key, url, sizeof(url)))
		return svc_error_set(err, SVC_E_INVALID, "s3: key too long"), NULL;
	svc_http_opts o = {
		.timeout_ms = c->s3.timeout_ms,
		.total_ms = ask->total_ms,
		.min_progress = c->upstream_min_progress,
		.max_size = ask->max_size,
		.spool_dir = s->env.spool_dir,
		.redirects = SVC_HTTP_REDIRECT_NONE,
		.hash = true, /* checked against x-amz-meta-sha256 as it arrives: no second pass */
		.prepare = svc_s3_sign_hook,
		.prepare_arg = s->env.s3,
	};
	svc_http_req *req = svc_http_get(s->env.http, url, &o, done, arg);
	if (!req)
		svc_error_set(err, SVC_E_IO, "could not start a request");
	return (svc_provider_req *)req;
}

static void s3p_cancel(svc_provider_req *req)
{
	svc_http_cancel((svc_http_req *)req);
}

static void set_why(svc_provider_answer *a, svc_answer_class cls, const char *fmt, long v)
{
	a->cls = cls;
	snprintf(a->why, sizeof(a->why), fmt, v);
}

/* A 200: found only when the body is what was written. */
static void classify_found(s3p *s, svc_http_result *res, svc_provider_answer *a)
{
	if (!svc_s3_answer_verifies(res)) {
		bool sized = res->declared_size < 0 || (uint64_t)res->declared_size == res->size;
		svc_s3_count_get(s->env.s3, SVC_S3_GET_BAD, 0);
		a->cls = SVC_ANSWER_RETRY;
		snprintf(a->why, sizeof(a->why), "object does not verify (%s)",
			 !res->sha256[0] ? "no x-amz-meta-sha256" : !sized ? "size" : "sha256");
		return;
	}
	svc_s3_count_get(s->env.s3, SVC_S3_GET_OK, res->size);
	a->cls = SVC_ANSWER_FOUND;
	a->body = res->body;
	a->fd = res->fd;
	a->size = res->size;
	res->body = NULL;
	res->fd = -1;
}

static void s3p_classify(svc_provider *p, const svc_provider_ask *ask, svc_http_result *res,
			 svc_provider_answer *a)
{
	s3p *s = (s3p *)p;
	(void)ask;
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (res->failure == SVC_HTTP_OK) {
		a->answered = true;
		svc_s3_note_status(s->env.s3, res->status); /* 403: the credentials' state */
		if (res->status == 200)
			classify_found(s, res, a);
		else if (res->status == 404)
			set_why(a, SVC_ANSWER_NOT_FOUND, "HTTP %ld", res->status);
		else if (res->status >= 500 || res->status == 429)
			set_why(a, SVC_ANSWER_RETRY, "HTTP %ld", res->status);
		else if (res->status == 401 || res->status == 403)
			/* the credentials refused (revoked, rotated): the tier's
			 * breaker counts it and opens, reads fall through */
			set_why(a, SVC_ANSWER_RETRY,
				"HTTP %ld: the credentials are refused (check them and the bucket)",
				res->status);
		else
			set_why(a, SVC_ANSWER_REJECTED, "HTTP %ld (check the S3 credentials and bucket)",
				res->status);
		svc_s3_count_get(s->env.s3,
				 res->status == 404 ? SVC_S3_GET_MISSING
				 : res->status == 200 ? -1
						      : SVC_S3_GET_FAILED,
				 0);
	} else {
		a->cls = res->failure == SVC_HTTP_TOO_LARGE ? SVC_ANSWER_TOO_LARGE
			 : res->failure == SVC_HTTP_LOCAL   ? SVC_ANSWER_REJECTED
							    : SVC_ANSWER_RETRY;
		a->ours = res->failure == SVC_HTTP_LOCAL;
		snprintf(a->why, sizeof(a->why), "%s", res->error);
		svc_s3_count_get(s->env.s3, SVC_S3_GET_FAILED, 0);
	}
	snprintf(a->detail, sizeof(a->detail), "%s", a->why);
}

const svc_provider_ops svc_provider_s3_ops = {
	.name = "s3",
	.create = s3p_create,
	.destroy = s3p_destroy,
	.start = s3p_start,
	.cancel = s3p_cancel,
	.classify = s3p_classify,
	/* Objects are keyed by identity kind and value: any kind the store keys
	 * files by (the canonical identity: GNU, else the file hash). */
	.id_kinds = (1u << SYM_ID_GNU) | (1u << SYM_ID_GO) | (1u << SYM_ID_HTLHASH),
};
