// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetcher: the fetcher object (svc_fetcher.h): its creation from the
 * config (HTTP transport, workers, then the source list of
 * svc_fetch_sources.c), the start of a fetch (a new flight or a join, per
 * (build ID, policy)), shutdown, and its statistics. The flight's stages and
 * their driver live in the files named in svc_fetch_impl.h.
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/core/svc_identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/base_clock.h"
#include "service/fetch/svc_s3.h"

#ifndef SYMBOLIZER_VERSION
#define SYMBOLIZER_VERSION "0.1.0"
#endif

const char *svc_fetch_status_name(svc_fetch_status s)
{
	switch (s) {
	case SVC_FETCH_OK: return "ok";
	case SVC_FETCH_NOT_FOUND: return "not_found";
	case SVC_FETCH_ERROR: return "error";
	case SVC_FETCH_TOO_LARGE: return "too_large";
	case SVC_FETCH_PENDING: return "pending";
	}
	return "unknown";
}

svc_errc svc_fetch_start(svc_fetcher *f, const sym_build_id *id, svc_fetch_kind kind,
			 svc_fetch_policy policy, svc_fetch_cb cb, void *arg)
{
	if (!id || id->len == 0 || id->len > SYM_BUILD_ID_MAX || !cb)
		return SVC_E_INVALID;
	if (f->shutting_down)
		return SVC_E_SHUTTING_DOWN;
	/* Another identity of a file the store has: that file's (svc_identity.h). */
	sym_build_id canon;
	svc_identity_canonical(f->store, id, &canon);
	id = &canon;
	svc_fetch_waiter *w = calloc(1, sizeof(*w));
	if (!w)
		return SVC_E_NOMEM;
	w->cb = cb;
	w->arg = arg;
	/* Single flight per (build ID, policy). A SYMBOLS request joining a
	 * DEBUGINFO-only flight gets what that flight finds (the dwz case: files
	 * with no executable). */
	if (!svc_fetch_flight_get(f, id, kind, policy, w, svc_fetch_on_timer)) {
		free(w);
		return SVC_E_NOMEM;
	}
	return SVC_OK;
}

/* Copies the config (lists owned), with the limits at least 1. */
static bool copy_config(svc_fetcher *f, const svc_config *c)
{
	bool whole = svc_config_copy(&f->cfg, c);
	if (f->cfg.max_concurrent_fetches < 1)
		f->cfg.max_concurrent_fetches = 1;
	if (f->cfg.max_fetches_per_upstream < 1)
		f->cfg.max_fetches_per_upstream = 1;
	if (f->cfg.fetch_workers < 1)
		f->cfg.fetch_workers = 1;
	return whole;
}

/* DATA/tmp, where downloads are spooled: made when absent, emptied of what a
 * crash left (files are unlinked as soon as made; a crash in between leaves
 * "dl-*"). NULL without a data dir: downloads stay in memory. */
static bool make_spool_dir(svc_fetcher *f, const char *data_dir, svc_error *err)
{
	if (!data_dir)
		return true;
	size_t n = strlen(data_dir) + sizeof("/tmp");
	if (!(f->spool_dir = malloc(n))) {
		svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory");
		return false;
	}
	snprintf(f->spool_dir, n, "%s/tmp", data_dir);
	if (mkdir(f->spool_dir, 0700) != 0 && errno != EEXIST) {
		svc_error_set(err, SVC_E_IO, "fetcher: %s: %s", f->spool_dir, strerror(errno));
		return false;
	}
	DIR *d = opendir(f->spool_dir);
	if (!d) {
		svc_error_set(err, SVC_E_IO, "fetcher: %s: %s", f->spool_dir, strerror(errno));
		return false;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (!strncmp(e->d_name, "dl-", 3))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return true;
}

const char *svc_fetcher_spool_dir(const svc_fetcher *f)
{
	return f ? f->spool_dir : NULL;
}

svc_fetcher *svc_fetcher_create(const svc_fetcher_options *o, svc_error *err)
{
	if (!o || !o->base || !o->store || !o->config) {
		svc_error_set(err, SVC_E_INVALID, "fetcher: base, store and config are required");
		return NULL;
	}
	svc_fetcher *f = calloc(1, sizeof(*f));
	if (!f) {
		svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory");
		return NULL;
	}
	f->base = o->base;
	f->store = o->store;
	f->log = o->log;
	f->log_arg = o->log_arg;
	for (unsigned i = 0; i < SVC_FETCH_POLICIES; i++)
		svc_flight_table_init(&f->flights[i]);
	svc_queue_init(&f->queue, o->max_queued ? o->max_queued : SVC_FETCH_QUEUE_MAX);
	char ua[128];
	snprintf(ua, sizeof(ua), "symbolizer/%s (+debuginfod client)", SYMBOLIZER_VERSION);
	f->user_agent = strdup(o->user_agent ? o->user_agent : ua);
	if (!copy_config(f, o->config) || !f->user_agent ||
	    !svc_trace_init(&f->trace, SVC_FETCH_TRACE_MAX)) {
		svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory");
		svc_fetcher_destroy(f);
		return NULL;
	}
	if (!make_spool_dir(f, o->config->data_dir, err)) {
		svc_fetcher_destroy(f);
		return NULL;
	}
	f->http = svc_http_create(f->base, f->user_agent);
	f->pool = svc_pool_create(f->base, f->cfg.fetch_workers);
	f->defer_timer = evtimer_new(f->base, svc_fetch_on_defer, f);
	if (!f->http || !f->pool || !f->defer_timer) {
		svc_error_set(err, SVC_E_NOMEM, "fetcher: cannot start HTTP client or workers");
		svc_fetcher_destroy(f);
		return NULL;
	}
	if (svc_s3_enabled(&f->cfg.s3) && !svc_fetch_s3_start(f, err)) {
		svc_fetcher_destroy(f);
		return NULL;
	}
	/* The ordered source list: debug dirs, the caller's, the upstreams. */
	if (!svc_fetch_sources_build(f, o, err)) {
		svc_fetcher_destroy(f);
		return NULL;
	}
	return f;
}

void svc_fetcher_destroy(svc_fetcher *f)
{
	if (!f)
		return;
	f->shutting_down = true;
	/* Stop requests (no callbacks) and the workers (their jobs are dropped). */
	svc_fetch_source_abort_all(f);
	svc_fetch_s3_reads_abort(f); /* their owners answered, before the multi handle goes */
	if (f->s3)
		svc_s3_detach(f->s3); /* its writes in flight, before their multi handle */
	svc_http_destroy(f->http);
	f->http = NULL;
	svc_pool_destroy(f->pool);
	f->pool = NULL;
	if (f->defer_timer)
		event_free(f->defer_timer);
	f->defer_timer = NULL;
	/* Owe every external waiter an answer. */
	svc_fetch_flight_abort_all(f, "fetcher shutting down");
	for (unsigned i = 0; i < SVC_FETCH_POLICIES; i++)
		svc_flight_table_deinit(&f->flights[i]);
	svc_fetch_sources_free(f);
	svc_s3_destroy(f->s3);
	free(f->spool_dir);
	svc_trace_deinit(&f->trace);
	svc_config_deinit(&f->cfg);
	free(f->user_agent);
	free(f);
}

void svc_fetcher_get_stats(const svc_fetcher *f, svc_fetcher_stats *out)
{
	*out = f->st;
	out->in_flight = svc_fetch_flight_count(f);
	out->downloads = (size_t)f->active;
	out->queued = f->queue.len;
}

size_t svc_fetcher_get_upstreams(const svc_fetcher *f, svc_upstream_stats *out, size_t max)
{
	int64_t now = base_mono_ms();
	size_t n = f->n_ups < max ? f->n_ups : max;
	for (size_t i = 0; i < n; i++) {
		const svc_upstream *u = &f->ups[i];
		out[i] = u->st;
		out[i].breaker = svc_breaker_state_at(&u->breaker, now);
		out[i].breaker_remaining_ms =
			out[i].breaker == SVC_BREAKER_OPEN ? u->breaker.open_until - now : 0;
		out[i].active = u->active;
		out[i].consecutive_failures = u->breaker.consecutive_failures;
		/* Monotonic to Unix ms. */
		int64_t to_real = base_real_ms() - now;
		out[i].breaker_opened_at_ms = u->breaker.opened_at ? u->breaker.opened_at + to_real : 0;
		out[i].n_recent = svc_breaker_recent(&u->breaker, out[i].recent);
		out[i].n_opened_by = u->breaker.n_opened_by;
		for (unsigned k = 0; k < SVC_BREAKER_NOTES; k++) {
			out[i].opened_by[k] = u->breaker.opened_by[k];
			out[i].opened_by[k].at_ms += to_real;
			out[i].recent[k].at_ms += to_real;
		}
	}
	return n;
}
