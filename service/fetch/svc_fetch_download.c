// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_download: one request to an upstream debuginfod server and what
 * its answer means for the flight (svc_fetch_impl.h): 200 hands the body to a
 * worker to check and store; 404 asks the next server; 406 or a body over the
 * cap ends the walk as too large; 5xx, 429, timeouts and broken connections
 * are retried with backoff on the same server, then the next one, and count
 * against its circuit breaker. All attempts of a flight on one server share
 * one deadline (--upstream-timeout from the first): no retry starts past it,
 * and each request gets only the time left.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"

static void next_server(svc_fetch_flight *fl)
{
	svc_walk_advance(fl);
	svc_walk_next(fl);
}

static void breaker_success(svc_fetcher *f, svc_upstream *u)
{
	if (svc_breaker_success(&u->breaker))
		svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
}

static void retry_or_next(svc_fetch_flight *fl, svc_upstream *u, const char *why)
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
		if (now + delay >= fl->deadline) {
			next_server(fl); /* the server's time for this fetch is up */
			return;
		}
		fl->attempt++;
		svc_fetch_flight_schedule(fl, delay);
		return;
	}
	next_server(fl);
}

/* 200: a worker checks the body and stores it. */
static void got_body(svc_fetch_flight *fl, svc_upstream *u, svc_http_result *res)
{
	svc_fetch_job *j = svc_job_new(SVC_JOB_STORE, fl->want);
	if (j) {
		j->data = res->body;
		j->fd = res->fd;
		j->size = res->size;
		res->body = NULL;
		res->fd = -1;
		snprintf(j->source, sizeof(j->source), "%s", u->url);
		if (fl->want == STOR_KIND_EXECUTABLE)
			svc_walk_exec_meta(fl, &j->meta_in);
	}
	if (!j || !svc_job_submit(fl, j)) {
		fl->any_error = true;
		svc_walk_note(fl, "out of memory");
		next_server(fl);
	}
}

/* 406 or a body over the cap. */
static void too_large(svc_fetch_flight *fl, svc_upstream *u, const svc_http_result *res)
{
	svc_fetcher *f = fl->f;
	u->st.too_large++;
	breaker_success(f, u);
	fl->too_large = true;
	if (res->failure == SVC_HTTP_OK)
		svc_walk_note(fl, "upstream %s: HTTP 406 (over %llu bytes)", u->url,
			      (unsigned long long)f->cfg.max_debuginfo_size);
	else
		svc_walk_note(fl, "upstream %s: %s", u->url, res->error);
	/* Every server gets the same cap: asking the next one is pointless. */
	fl->server = f->n_ups;
	fl->deferred = 0;
	svc_walk_next(fl);
}

static void answered(svc_fetch_flight *fl, svc_upstream *u, svc_http_result *res)
{
	char why[64];
	if (res->status == 200) {
		u->st.ok++;
		u->st.bytes += res->size;
		breaker_success(fl->f, u);
		got_body(fl, u, res);
	} else if (res->status == 404) {
		u->st.not_found++;
		breaker_success(fl->f, u);
		if (u->peer) {
			/* The owner of the build ID asked every source it has, the
			 * upstreams included: asking them again here is pointless. */
			svc_walk_note(fl, "peer %s: not found (its owner asked the upstreams)", u->url);
			fl->server = fl->f->n_ups;
			fl->deferred = 0;
			svc_walk_next(fl);
			return;
		}
		next_server(fl);
	} else if (res->status == 406) {
		too_large(fl, u, res);
	} else if (res->status >= 500) {
		snprintf(why, sizeof(why), "HTTP %ld", res->status);
		retry_or_next(fl, u, why);
	} else if (res->status == 429) {
		retry_or_next(fl, u, "HTTP 429");
	} else {
		/* Another client error: the server works, it will not change its mind. */
		u->st.failures++;
		fl->any_error = true;
		svc_walk_note(fl, "upstream %s: HTTP %ld", u->url, res->status);
		next_server(fl);
	}
}

static void http_done(svc_http_result *res, void *arg)
{
	svc_fetch_flight *fl = arg;
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	fl->req = NULL;
	svc_slot_release(f, u);
	svc_trace_http(fl, res);
	if (res->failure == SVC_HTTP_OK) {
		answered(fl, u, res);
	} else if (res->failure == SVC_HTTP_TOO_LARGE) {
		too_large(fl, u, res);
	} else if (res->failure == SVC_HTTP_LOCAL || res->failure == SVC_HTTP_REDIRECT) {
		/* Ours, or a refusal by policy: no retry, not the server's failure. */
		u->st.failures++;
		fl->any_error = true;
		svc_walk_note(fl, "upstream %s: %s", u->url, res->error);
		if (res->failure == SVC_HTTP_LOCAL)
			svc_fetch_log(f, "%s: upstream %s: %s", fl->hex, u->url, res->error);
		next_server(fl);
	} else {
		retry_or_next(fl, u, res->error);
	}
	svc_slot_dispatch(f);
}

/* The request could not start: count it as an error and go on from the timer. */
static void start_failed(svc_fetch_flight *fl, svc_upstream *u, const char *why)
{
	fl->any_error = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, why);
	svc_walk_advance(fl);
	svc_fetch_flight_schedule(fl, 0);
}

void svc_download_start(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	svc_error err = {0};
	char *url = svc_fetch_url(u->fetch_url, fl->hex,
				  fl->want == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable", &err);
	if (!url) {
		start_failed(fl, u, err.msg);
		return;
	}
	int64_t now = base_mono_ms();
	if (fl->attempt == 0)
		fl->deadline = now + f->cfg.upstream_timeout_ms;
	svc_http_opts o = svc_slot_http_opts(f, u, fl->deadline > now ? fl->deadline - now : 1,
					     f->cfg.max_debuginfo_size);
	fl->req = svc_slot_get(f, u, url, &o, http_done, fl);
	free(url);
	if (!fl->req)
		start_failed(fl, u, "could not start a request");
}
