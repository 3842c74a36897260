// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_source: the upstreams asked for a source file,
 * /buildid/ID/source/PATH (svc_fetcher.h, svc_fetch_source_start), for the
 * debuginfod endpoint when no package here holds it.
 *
 * The servers are asked one after the other, in their order: the first 200
 * is the answer, spooled to DATA/tmp (or held in memory without a spool) up
 * to the cap, and handed to the caller, not stored: a source is not a debug
 * file, and the client that asked keeps its own cache. A 404 asks the next
 * server (a peer's 404 is final, as for files); an error (timeout, 5xx, a
 * broken connection) counts against the server's circuit breaker and asks
 * the next one; a server whose breaker is open is skipped. No retries: the
 * client is waiting and asks again itself. A relay takes a download slot of
 * the fetcher while it runs (not queued for one: it is short and the client
 * waits). The path is percent-encoded as
 * debuginfod clients encode it ('/' kept).
 */
#include "service/fetch/svc_fetch_impl.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_clock.h"

struct svc_fetch_source_req {
	svc_fetch_source_req *next, **prev;  /* the fetcher's list */
	struct event *kick;      /* the first request starts from the loop */
	svc_fetcher *f;
	char *what;              /* "source/" + the encoded path */
	char hex[SYM_BUILD_ID_HEX_MAX];
	uint64_t max_size;
	size_t server;
	bool any_error, too_large;
	char error[SYM_ERROR_MSG_MAX];
	svc_http_req *req;
	svc_fetch_source_cb cb;
	void *arg;
};

/* "source" + path with every byte but [A-Za-z0-9/._~-] as %XX. */
static char *encode_what(const char *path)
{
	static const char hexd[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *out = malloc(7 + 3 * n + 1), *p = out;
	if (!out)
		return NULL;
	memcpy(p, "source", 6);
	p += 6;
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		unsigned c = *s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '/' || c == '.' || c == '_' || c == '~' || c == '-') {
			*p++ = (char)c;
		} else {
			*p++ = '%';
			*p++ = hexd[c >> 4];
			*p++ = hexd[c & 15];
		}
	}
	*p = '\0';
	return out;
}

static void finish(svc_fetch_source_req *r, svc_fetch_status st, svc_http_result *res,
		   const char *from)
{
	if (st != SVC_FETCH_OK && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s",
			 r->f->n_ups ? "no upstream has it" : "no upstream servers");
	*r->prev = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->cb(r->arg, st, res, from, r->error);
	if (r->kick)
		event_free(r->kick);
	free(r->what);
	free(r);
}

void svc_fetch_source_abort_all(svc_fetcher *f)
{
	while (f->source_reqs) {
		svc_fetch_source_req *r = f->source_reqs;
		r->req = NULL;  /* the driver is gone, with its requests */
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

static void http_done(svc_http_result *res, void *arg)
{
	svc_fetch_source_req *r = arg;
	svc_fetcher *f = r->f;
	svc_upstream *u = &f->ups[r->server];
	char why[64];
	r->req = NULL;
	svc_slot_release(f, u);
	svc_slot_dispatch(f);  /* a slot is free for a queued flight */
	if (res->failure == SVC_HTTP_LOCAL || res->failure == SVC_HTTP_REDIRECT) {
		/* ours, or a refusal by policy: not the server's failure */
		u->st.failures++;
		r->any_error = true;
		note(r, u, res->error);
		r->server++;
		return ask_next(r);
	}
	if (res->failure == SVC_HTTP_TOO_LARGE || (res->failure == SVC_HTTP_OK &&
						   res->status == 406)) {
		u->st.too_large++;
		if (svc_breaker_success(&u->breaker))
			svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
		note(r, u, "larger than the cap");
		return finish(r, SVC_FETCH_TOO_LARGE, NULL, NULL);
	}
	if (res->failure != SVC_HTTP_OK)
		return failed(r, u, res->error);
	if (res->status >= 500 || res->status == 429) {
		snprintf(why, sizeof(why), "HTTP %ld", res->status);
		return failed(r, u, why);
	}
	if (svc_breaker_success(&u->breaker))
		svc_fetch_log(f, "upstream %s: circuit closed (server answers again)", u->url);
	if (res->status == 200) {
		u->st.ok++;
		u->st.bytes += res->size;
		return finish(r, SVC_FETCH_OK, res, u->url);
	}
	if (res->status == 404)
		u->st.not_found++;
	else {
		u->st.failures++;
		snprintf(why, sizeof(why), "HTTP %ld", res->status);
		note(r, u, why);
	}
	if (res->status == 404 && u->peer)
		r->server = f->n_ups;  /* the owner asked its upstreams already */
	else
		r->server++;
	ask_next(r);
}

/* Asks the next server its breaker lets through, or ends. */
static void ask_next(svc_fetch_source_req *r)
{
	svc_fetcher *f = r->f;
	for (; r->server < f->n_ups && !f->shutting_down; r->server++) {
		svc_upstream *u = &f->ups[r->server];
		if (!svc_breaker_allows(&u->breaker, base_mono_ms())) {
			u->st.skipped++;
			r->any_error = true;
			note(r, u, "circuit open");
			continue;
		}
		svc_error err = {0};
		char *url = svc_fetch_url(u->fetch_url, r->hex, r->what, &err);
		if (!url) {
			note(r, u, err.msg);
			r->any_error = true;
			continue;
		}
		svc_http_opts o =
			svc_slot_http_opts(f, u, f->cfg.upstream_timeout_ms, r->max_size);
		r->req = svc_slot_get(f, u, url, &o, http_done, r);
		free(url);
		if (r->req)
			return;
		note(r, u, "could not start a request");
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
				uint64_t max_size, svc_fetch_source_cb cb, void *arg)
{
	if (f->shutting_down)
		return SVC_E_SHUTTING_DOWN;
	svc_fetch_source_req *r = calloc(1, sizeof(*r));
	static const struct timeval now = {0, 0};
	if (!r || !(r->what = encode_what(path)) || !(r->kick = evtimer_new(f->base, kicked, r)) ||
	    evtimer_add(r->kick, &now) != 0) {
		if (r && r->kick)
			event_free(r->kick);
		if (r)
			free(r->what);
		free(r);
		return SVC_E_NOMEM;
	}
	r->f = f;
	r->max_size = max_size && max_size < f->cfg.max_debuginfo_size ? max_size
									 : f->cfg.max_debuginfo_size;
	r->cb = cb;
	r->arg = arg;
	sym_build_id_to_hex(id, r->hex);
	r->next = f->source_reqs;
	r->prev = &f->source_reqs;
	if (r->next)
		r->next->prev = &r->next;
	f->source_reqs = r;
	return SVC_OK;
}
