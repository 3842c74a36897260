// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_source: the upstreams asked for a source file of a build ID
 * (svc_fetcher.h, svc_fetch_source_start), for the debuginfod endpoint when
 * no package here holds it.
 *
 * The servers the request's policy allows are asked one after the other, in
 * their order, through their providers (svc_provider_impl.h, want SOURCE):
 * the first one found is the answer, spooled to DATA/tmp (or held in memory
 * without a spool) up to the cap, and handed to the caller, not stored: a
 * source is not a debug file, and the client that asked keeps its own cache.
 * Not found asks the next server (a peer's is final, as for files); a
 * retryable error (timeout, 5xx, a broken connection) counts against the
 * server's circuit breaker and asks the next one; a server whose breaker is
 * open is skipped. No retries: the client is waiting and asks again itself.
 * A relay takes a download slot of the fetcher while it runs (not queued for
 * one: it is short and the client waits).
 */
#include "service/fetch/svc_fetch_impl.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base_clock.h"

struct svc_fetch_source_req {
	svc_fetch_source_req *next, **prev;  /* the fetcher's list */
	struct event *kick;      /* the first request starts from the loop */
	svc_fetcher *f;
	char *path;              /* the source file's path, as the client gave it */
	char hex[SYM_BUILD_ID_HEX_MAX];
	svc_fetch_policy policy;
	uint64_t max_size;
	size_t server;
	bool any_error, too_large;
	char error[SYM_ERROR_MSG_MAX];
	svc_provider_req *req;
	svc_fetch_source_cb cb;
	void *arg;
};

static void finish(svc_fetch_source_req *r, svc_fetch_status st, svc_http_result *res,
		   const char *from)
{
	size_t allowed = 0;
	for (size_t i = 0; i < r->f->n_ups; i++)
		allowed += svc_fetch_policy_allows(r->policy, &r->f->ups[i]);
	if (st != SVC_FETCH_OK && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s",
			 allowed ? "no upstream has it" : "no upstream servers");
	*r->prev = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->cb(r->arg, st, res, from, r->error);
	if (r->kick)
		event_free(r->kick);
	free(r->path);
	free(r);
}

void svc_fetch_source_abort_all(svc_fetcher *f)
{
	while (f->source_reqs) {
		svc_fetch_source_req *r = f->source_reqs;
		if (r->req) {
			svc_upstream *u = &f->ups[r->server];
			u->prov->ops->cancel(r->req);
			r->req = NULL;
			svc_slot_release(f, u);
		}
		snprintf(r->error, sizeof(r->error), "fetcher shutting down");
		finish(r, SVC_FETCH_ERROR, NULL, NULL);
	}
}

static void note(svc_fetch_source_req *r, const svc_upstream *u, const char *why)
{
	if (!r->error[0] &&
	    snprintf(r->error, sizeof(r->error), "upstream %s: %s", u->url, why) >=
		    (int)sizeof(r->error))
		r->error[sizeof(r->error) - 1] = '\0';  /* cut (snprintf did): the start says enough */
}

static void ask_next(svc_fetch_source_req *r);

static void failed(svc_fetch_source_req *r, svc_upstream *u, const char *why)
{
	svc_fetcher *f = r->f;
	u->st.failures++;
	r->any_error = true;
	note(r, u, why);
	svc_breaker_note(&u->breaker, base_mono_ms(), why);
	if (svc_breaker_failure(&u->breaker, base_mono_ms(), f->cfg.upstream_breaker_failures,
				f->cfg.upstream_breaker_cooldown_ms)) {
		u->st.breaker_opens++;
		svc_fetch_log(f, "upstream %s: circuit open for %.1f s after %d failures in a row "
			      "(last: %s)", u->url, (double)f->cfg.upstream_breaker_cooldown_ms / 1000.0,
			      u->breaker.consecutive_failures, why);
	}
	r->server++;
	ask_next(r);
}

static svc_provider_ask ask_of(const svc_fetch_source_req *r)
{
	return (svc_provider_ask){.hex = r->hex, .want = SVC_WANT_SOURCE, .path = r->path,
				  .total_ms = r->f->cfg.upstream_timeout_ms,
				  .max_size = r->max_size};
}

static void request_done(svc_http_result *res, void *arg)
{
	svc_fetch_source_req *r = arg;
	svc_fetcher *f = r->f;
	svc_upstream *u = &f->ups[r->server];
	r->req = NULL;
	svc_slot_release(f, u);
	svc_fetch_dispatch(f);  /* a slot is free for a queued flight */
	svc_provider_ask ask = ask_of(r);
	svc_provider_answer a;
	u->prov->ops->classify(u->prov, &ask, res, &a);
	if (a.answered && a.cls != SVC_ANSWER_RETRY && svc_breaker_success(&u->breaker))
		svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
	switch (a.cls) {
	case SVC_ANSWER_FOUND: {
		u->st.ok++;
		u->st.bytes += a.size;
		svc_http_result body = {.failure = SVC_HTTP_OK, .status = 200, .body = a.body,
					.fd = a.fd, .size = a.size, .declared_size = -1};
		finish(r, SVC_FETCH_OK, &body, u->url);
		free(body.body);
		if (body.fd >= 0)
			close(body.fd);
		return;
	}
	case SVC_ANSWER_TOO_LARGE:
		u->st.too_large++;
		if (!a.answered && svc_breaker_success(&u->breaker))
			svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
		note(r, u, "larger than the cap");
		return finish(r, SVC_FETCH_TOO_LARGE, NULL, NULL);
	case SVC_ANSWER_RETRY:
		return failed(r, u, a.why);
	case SVC_ANSWER_NOT_FOUND:
		u->st.not_found++;
		/* A peer's: the owner asked its upstreams already. */
		r->server = u->peer ? f->n_ups : r->server + 1;
		return ask_next(r);
	case SVC_ANSWER_REJECTED:
		break;
	}
	/* Ours, a refusal by policy, or a client error: not the server's failure. */
	u->st.failures++;
	r->any_error |= !a.answered;
	note(r, u, a.why);
	r->server++;
	ask_next(r);
}

/* Asks the next server the policy allows and its breaker lets through, or ends. */
static void ask_next(svc_fetch_source_req *r)
{
	svc_fetcher *f = r->f;
	for (; r->server < f->n_ups && !f->shutting_down; r->server++) {
		svc_upstream *u = &f->ups[r->server];
		if (!svc_fetch_policy_allows(r->policy, u) || u->prov->ops == &svc_provider_s3_ops)
			continue;  /* source files are not kept in S3 */
		if (!svc_breaker_allows(&u->breaker, base_mono_ms())) {
			u->st.skipped++;
			r->any_error = true;
			note(r, u, "circuit open");
			continue;
		}
		svc_error err = {0};
		svc_provider_ask ask = ask_of(r);
		r->req = svc_slot_get(f, u, &ask, request_done, r, &err);
		if (r->req)
			return;
		note(r, u, err.msg[0] ? err.msg : "could not start a request");
		r->any_error = true;
	}
	finish(r, r->any_error ? SVC_FETCH_ERROR : SVC_FETCH_NOT_FOUND, NULL, NULL);
}

static void kicked(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	ask_next(arg);
}

svc_errc svc_fetch_source_start(svc_fetcher *f, const sym_build_id *id, const char *path,
				uint64_t max_size, svc_fetch_policy policy,
				svc_fetch_source_cb cb, void *arg)
{
	if (f->shutting_down)
		return SVC_E_SHUTTING_DOWN;
	svc_fetch_source_req *r = calloc(1, sizeof(*r));
	static const struct timeval now = {0, 0};
	if (!r || !(r->path = strdup(path)) || !(r->kick = evtimer_new(f->base, kicked, r)) ||
	    evtimer_add(r->kick, &now) != 0) {
		if (r && r->kick)
			event_free(r->kick);
		if (r)
			free(r->path);
		free(r);
		return SVC_E_NOMEM;
	}
	r->f = f;
	r->max_size = max_size && max_size < f->cfg.max_debuginfo_size ? max_size
									 : f->cfg.max_debuginfo_size;
	r->cb = cb;
	r->arg = arg;
	r->policy = policy;
	sym_build_id_to_hex(id, r->hex);
	r->next = f->source_reqs;
	r->prev = &f->source_reqs;
	if (r->next)
		r->next->prev = &r->next;
	f->source_reqs = r;
	return SVC_OK;
}
