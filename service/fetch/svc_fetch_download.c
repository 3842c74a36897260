// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_download: stage REQUEST, one request to an upstream's provider
 * and what its classified answer means for the flight (svc_fetch_impl.h):
 * found hands the file to a worker to check and store (CHECK); not found
 * asks the next server (a peer's is final); too large ends the walk's tour
 * of the upstreams (every server has the same cap); a retryable error is
 * retried with backoff on the same server, then the next one, and counts
 * against its circuit breaker; a rejected answer asks the next server. All
 * attempts of a flight on one server share one deadline (--upstream-timeout
 * from the first): no retry starts past it, and each request gets only the
 * time left. A leaf: it returns the next stage to the driver.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/base_clock.h"

static void breaker_success(svc_fetcher *f, svc_upstream *u)
{
	if (svc_breaker_success(&u->breaker))
		svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
}

static svc_fetch_stage next_server(svc_fetch_flight *fl)
{
	svc_walk_advance(fl);
	return SVC_STAGE_PROVIDERS;
}

static svc_fetch_stage retry_or_next(svc_fetch_flight *fl, svc_upstream *u, const char *why)
{
	svc_fetcher *f = fl->f;
	u->st.failures++;
	fl->any_error = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, why);
	svc_breaker_note(&u->breaker, base_mono_ms(), why);
	if (svc_breaker_failure(&u->breaker, base_mono_ms(), f->cfg.upstream_breaker_failures,
				f->cfg.upstream_breaker_cooldown_ms)) {
		u->st.breaker_opens++;
		svc_fetch_log(f, "upstream %s: circuit open for %.1f s after %d failures in a row "
			      "(last: %s)",
			      u->url, (double)f->cfg.upstream_breaker_cooldown_ms / 1000.0,
			      u->breaker.consecutive_failures, why);
	}
	int64_t now = base_mono_ms();
	if (fl->attempt < f->cfg.upstream_retries && svc_breaker_allows(&u->breaker, now)) {
		int64_t base = f->cfg.upstream_retry_backoff_ms;
		int64_t delay = base << fl->attempt;
		if (delay > SVC_FETCH_BACKOFF_MAX_MS)
			delay = SVC_FETCH_BACKOFF_MAX_MS;
		delay += base > 0 ? rand() % (base / 2 + 1) : 0; /* jitter */
		if (now + delay >= fl->deadline)
			return next_server(fl); /* the server's time for this fetch is up */
		fl->attempt++;
		return svc_fetch_flight_resume_in(fl, SVC_STAGE_PROVIDERS, delay);
	}
	return next_server(fl);
}

/* A file: a worker checks and stores it. */
static svc_fetch_stage found(svc_fetch_flight *fl, svc_upstream *u, svc_provider_answer *a)
{
	u->st.ok++;
	u->st.bytes += a->size;
	breaker_success(fl->f, u);
	if ((fl->job = svc_job_for_file(fl, a)))
		return SVC_STAGE_CHECK;
	fl->any_error = true;
	svc_walk_note(fl, "out of memory");
	return next_server(fl);
}

static svc_fetch_stage not_found(svc_fetch_flight *fl, svc_upstream *u)
{
	u->st.not_found++;
	breaker_success(fl->f, u);
	if (!u->peer)
		return next_server(fl);
	/* The owner of the build ID asked every source it has, the upstreams
	 * included: asking them again here is pointless. */
	svc_walk_note(fl, "peer %s: not found (its owner asked the upstreams)", u->url);
	svc_walk_stop(fl);
	return SVC_STAGE_PROVIDERS;
}

static svc_fetch_stage too_large(svc_fetch_flight *fl, svc_upstream *u,
				 const svc_provider_answer *a)
{
	u->st.too_large++;
	breaker_success(fl->f, u);
	fl->too_large = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, a->detail);
	/* Every server gets the same cap: asking the next one is pointless. */
	svc_walk_stop(fl);
	return SVC_STAGE_PROVIDERS;
}

/* A final error of this request, not the server's health: the next server. */
static svc_fetch_stage rejected(svc_fetch_flight *fl, svc_upstream *u,
				const svc_provider_answer *a)
{
	u->st.failures++;
	fl->any_error = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, a->detail);
	if (a->ours)
		svc_fetch_log(fl->f, "%s: upstream %s: %s", fl->hex, u->url, a->detail);
	return next_server(fl);
}

/* What fl's request asks of its provider. */
static svc_provider_ask ask_of(const svc_fetch_flight *fl, int64_t total_ms)
{
	return (svc_provider_ask){
		.hex = fl->hex,
		.want = fl->want == STOR_KIND_DEBUGINFO ? SVC_WANT_DEBUGINFO : SVC_WANT_EXECUTABLE,
		.total_ms = total_ms,
		.max_size = fl->f->cfg.max_debuginfo_size,
		.id_kind = fl->base.id.kind,
	};
}

svc_fetch_stage svc_download_done(svc_fetch_flight *fl, svc_http_result *res)
{
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	fl->req = NULL;
	svc_slot_release(f, u);
	svc_provider_ask ask = ask_of(fl, 0);
	svc_provider_answer a;
	u->prov->ops->classify(u->prov, &ask, res, &a);
	svc_trace_answer(fl, &a);
	svc_fetch_stage next;
	switch (a.cls) {
	case SVC_ANSWER_FOUND: next = found(fl, u, &a); break;
	case SVC_ANSWER_NOT_FOUND: next = not_found(fl, u); break;
	case SVC_ANSWER_TOO_LARGE: next = too_large(fl, u, &a); break;
	case SVC_ANSWER_REJECTED: next = rejected(fl, u, &a); break;
	default: next = retry_or_next(fl, u, a.detail); break;
	}
	free(a.body);  /* not taken: out of memory */
	if (a.fd >= 0)
		close(a.fd);
	return next;
}

svc_fetch_stage svc_download_start(svc_fetch_flight *fl, svc_http_done_fn done)
{
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	int64_t now = base_mono_ms();
	if (fl->attempt == 0)
		fl->deadline = now + f->cfg.upstream_timeout_ms;
	svc_provider_ask ask = ask_of(fl, fl->deadline > now ? fl->deadline - now : 1);
	svc_error err = {0};
	fl->req = svc_slot_get(f, u, &ask, done, fl, &err);
	if (fl->req)
		return SVC_STAGE_WAIT;
	/* It could not start: an error, and on from the timer. */
	fl->any_error = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, err.msg[0] ? err.msg : "could not start a request");
	svc_walk_advance(fl);
	return svc_fetch_flight_resume_in(fl, SVC_STAGE_PROVIDERS, 0);
}
