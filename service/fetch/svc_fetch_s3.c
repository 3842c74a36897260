// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_s3: the fetcher's side of the shared S3 tier (svc_s3.h): the
 * client made at start (its bucket and credentials checked once: wrong
 * credentials or a missing bucket stop the start with the server's error
 * code; an unreachable S3 is logged and the fetcher starts, S3's breaker
 * then speaks for it), the write-behind of what the fetcher stored from
 * an upstream (a file that came from S3 is not written back), and the reads
 * of objects that are no file of the walk (the resolver's indexes), on the
 * multi handle like the provider's.
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/fetch/svc_s3.h"

#include <stdlib.h>
#include <string.h>

bool svc_fetch_s3_start(svc_fetcher *f, svc_error *err)
{
	if (!(f->s3 = svc_s3_create(&f->cfg.s3, f->user_agent, err)) ||
	    !svc_s3_attach(f->s3, f->base, f->http, f->log, f->log_arg, err))
		return false;
	svc_error cerr = {0};
	svc_errc rc = svc_s3_check(f->s3, &cerr);
	if (rc == SVC_E_UNAUTHENTICATED || rc == SVC_E_INVALID) {
		svc_error_set(err, rc, "%s (check --s3-bucket and the credentials)", cerr.msg);
		return false;
	}
	if (rc != SVC_OK)
		svc_fetch_log(f, "%s: not reachable at start (%s); uploads answer 503 until it is",
			      svc_s3_name(f->s3), cerr.msg);
	return true;
}

void svc_fetch_s3_behind(svc_fetcher *f, const sym_build_id *id, stor_kind kind,
			 const char *source, const uint8_t *data, size_t size)
{
	if (!f->s3 || !strcmp(source, svc_s3_name(f->s3)))
		return;
	char hex[SYM_BUILD_ID_HEX_MAX], key[SVC_S3_KEY_MAX];
	const char *idk = sym_id_kind_name(id->kind);
	sym_build_id_to_hex(id, hex);
	if (idk && svc_s3_key(f->s3, idk, hex,
			      kind == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable", key,
			      sizeof(key)))
		svc_s3_behind(f->s3, key, data, size);
}

struct svc_s3 *svc_fetcher_s3(const svc_fetcher *f)
{
	return f->s3;
}

/* ---- reads of objects that are no file of the walk ---- */

struct svc_fetch_s3_read {
	svc_fetcher *f;
	svc_http_req *req;
	svc_fetch_s3_read_fn done;
	void *arg;
	svc_fetch_s3_read *prev, *next;
};

static void read_unlink(svc_fetch_s3_read *rd)
{
	if (rd->prev)
		rd->prev->next = rd->next;
	else
		rd->f->s3_reads = rd->next;
	if (rd->next)
		rd->next->prev = rd->prev;
}

/* What the answer is worth: the body only when it is what was written. */
static void read_done(svc_http_result *res, void *arg)
{
	svc_fetch_s3_read *rd = arg;
	svc_s3 *s3 = rd->f->s3;
	const char *why = NULL;
	uint8_t *body = NULL;
	size_t size = 0;
	int what = SVC_S3_GET_FAILED;
	if (res->failure != SVC_HTTP_OK) {
		why = res->error;
	} else {
		svc_s3_note_status(s3, res->status); /* 401/403: the credentials' state */
		if (res->status == 404)
			what = SVC_S3_GET_MISSING, why = "not in S3";
		else if (res->status != 200)
			why = "S3 answered an error";
		else if (!res->body || !svc_s3_answer_verifies(res))
			what = SVC_S3_GET_BAD, why = "object does not verify";
		else
			what = SVC_S3_GET_OK, body = res->body, size = res->size, res->body = NULL;
	}
	svc_s3_count_get(s3, what, body ? size : 0);
	read_unlink(rd);
	rd->done(rd->arg, body, size, why);
	free(rd);
}

svc_fetch_s3_read *svc_fetcher_s3_read(svc_fetcher *f, const char *key, uint64_t max,
				       svc_fetch_s3_read_fn done, void *arg)
{
	char url[SVC_S3_KEY_MAX + 1024];
	if (!f->s3 || f->shutting_down || !svc_s3_url(f->s3, key, url, sizeof(url)))
		return NULL;
	svc_fetch_s3_read *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return NULL;
	svc_http_opts o = {
		.timeout_ms = f->cfg.s3.timeout_ms,
		.min_progress = f->cfg.upstream_min_progress,
		.max_size = max,
		.redirects = SVC_HTTP_REDIRECT_NONE,
		.hash = true,
		.prepare = svc_s3_sign_hook,
		.prepare_arg = f->s3,
	};
	*rd = (svc_fetch_s3_read){.f = f, .done = done, .arg = arg};
	if (!(rd->req = svc_http_get(f->http, url, &o, read_done, rd))) {
		free(rd);
		return NULL;
	}
	rd->next = f->s3_reads;
	if (rd->next)
		rd->next->prev = rd;
	f->s3_reads = rd;
	return rd;
}

void svc_fetcher_s3_read_cancel(svc_fetch_s3_read *rd)
{
	if (!rd)
		return;
	svc_http_cancel(rd->req);
	read_unlink(rd);
	free(rd);
}

void svc_fetch_s3_reads_abort(svc_fetcher *f)
{
	svc_fetch_s3_read *rd;
	while ((rd = f->s3_reads)) {
		svc_http_cancel(rd->req);
		read_unlink(rd);
		rd->done(rd->arg, NULL, 0, "fetcher shutting down");
		free(rd);
	}
}
