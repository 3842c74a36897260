// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_walk: the walk of one flight (svc_fetch_impl.h): the store check,
 * then the sources (a worker job), then the upstreams in order; the outcome
 * of a walk that finds nothing (the executable walk next, or the negative
 * result remembered in the store); a success, and the dwz file it may need.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base_clock.h"

void svc_walk_note(svc_fetch_flight *fl, const char *fmt, ...)
{
	if (fl->walk_error[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fl->walk_error, sizeof(fl->walk_error), fmt, ap);
	va_end(ap);
}

void svc_walk_exec_meta(const svc_fetch_flight *fl, stor_meta *m)
{
	const svc_config *c = &fl->f->cfg;
	m->neg_expiry = base_real_ms() + (fl->dbg_status == SVC_FETCH_ERROR ? c->error_cache_ttl_ms
									     : c->negative_cache_ttl_ms);
	snprintf(m->last_error, sizeof(m->last_error), "%s", fl->dbg_error);
}

/* ---- the dwz supplementary file ---------------------------------------- */

void svc_walk_alt_done(const svc_fetch_result *res, void *arg)
{
	svc_fetch_flight *fl = arg;
	fl->alt_wait = NULL;
	fl->res.alt_status = res->status;
	svc_fetch_flight_finish(fl);
}

/* Waits for the dwz supplementary file; false when that cannot start, or would
 * wait on a flight that waits on this one (two files naming each other). */
static bool start_alt(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	if (sym_build_id_equal(&fl->res.alt_id, &fl->base.id))
		return false;
	svc_fetch_flight *other = svc_fetch_flight_find(f, &fl->res.alt_id);
	if (other && other->alt_wait == fl)
		return false;
	if (svc_fetch_start(f, &fl->res.alt_id, SVC_FETCH_DEBUGINFO, svc_walk_alt_done, fl) != SVC_OK)
		return false;
	fl->alt_wait = svc_fetch_flight_find(f, &fl->res.alt_id);
	/* Where the debug file says its dwz file is: the alt flight looks there
	 * too (its store check runs later, from its timer). */
	if (fl->alt_wait && fl->alt_where && !fl->alt_wait->path_hint)
		fl->alt_wait->path_hint = strdup(fl->alt_where);
	return true;
}

/* The result is filled; fetch the dwz file first when it names one. */
static void finish_with_alt(svc_fetch_flight *fl, bool needs_alt, const sym_build_id *alt_id)
{
	if (needs_alt && fl->kind == SVC_FETCH_SYMBOLS) {
		fl->res.has_alt = true;
		fl->res.alt_id = *alt_id;
		if (start_alt(fl))
			return;
		fl->res.alt_status = SVC_FETCH_ERROR;
	}
	svc_fetch_flight_finish(fl);
}

void svc_walk_succeed(svc_fetch_flight *fl, stor_kind kind, uint64_t size, const char *source,
		      const sym_elf_info *info)
{
	fl->res.status = SVC_FETCH_OK;
	fl->res.kind = kind;
	fl->res.size = size;
	snprintf(fl->res.source, sizeof(fl->res.source), "%s", source);
	if (kind == STOR_KIND_EXECUTABLE)
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", fl->dbg_error);
	else
		fl->res.error[0] = '\0';
	finish_with_alt(fl, kind == STOR_KIND_DEBUGINFO && info->has_alt && info->alt_build_id.len,
			&info->alt_build_id);
}

/* ---- the store check ----------------------------------------------------- */

/* Answers from the store's record when it can; false: the walk must run. */
static bool answer_from_store(svc_fetch_flight *fl, const stor_meta *m)
{
	svc_fetcher *f = fl->f;
	bool fresh = base_real_ms() < m->neg_expiry;
	if (m->state == STOR_STATE_PRESENT &&
	    (m->kind == STOR_KIND_DEBUGINFO || fresh || fl->kind == SVC_FETCH_DEBUGINFO)) {
		f->st.cache_hits++;
		fl->res.status = SVC_FETCH_OK;
		fl->res.cached = true;
		fl->res.kind = m->kind;
		fl->res.size = m->size;
		snprintf(fl->res.source, sizeof(fl->res.source), "%s", m->source);
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", m->last_error);
		sym_build_id alt = {.len = m->alt_len};
		memcpy(alt.bytes, m->alt_id, m->alt_len);
		finish_with_alt(fl, m->alt_len != 0, &alt);
		return true;
	}
	/* A negative record does not stop a dwz file's flight that knows where the
	 * file should be (a look in the local dirs is cheap). */
	if (m->state != STOR_STATE_PRESENT && fresh && !fl->path_hint) {
		f->st.cache_hits++;
		fl->res.cached = true;
		fl->res.status = m->state == STOR_STATE_NOT_FOUND   ? SVC_FETCH_NOT_FOUND
				 : m->state == STOR_STATE_TOO_LARGE ? SVC_FETCH_TOO_LARGE
								   : SVC_FETCH_ERROR;
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", m->last_error);
		svc_fetch_flight_finish(fl);
		return true;
	}
	if (m->state == STOR_STATE_PRESENT) {
		/* Only the executable, and time to look for debug info again. */
		fl->holding_exec = true;
		snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", m->last_error);
	}
	return false;
}

void svc_walk_on_timer(svc_fetch_flight *fl)
{
	if (fl->want != STOR_KIND_NONE) {
		/* Backoff over (or a request that could not start): ask again. */
		svc_walk_next(fl);
		return;
	}
	stor_meta m;
	if (stor_get_meta(fl->f->store, fl->base.id.bytes, fl->base.id.len, &m, NULL) == STOR_OK &&
	    answer_from_store(fl, &m))
		return;
	svc_walk_start(fl, STOR_KIND_DEBUGINFO);
}

/* ---- walking ------------------------------------------------------------- */

void svc_walk_start(svc_fetch_flight *fl, stor_kind want)
{
	fl->want = want;
	fl->server = 0;
	fl->attempt = 0;
	fl->deferred = 0;
	fl->revisit = false;
	fl->any_error = fl->too_large = false;
	fl->exec_probe = false;
	fl->walk_error[0] = '\0';
	if (fl->f->n_sources) {
		svc_fetch_job *j = svc_job_new(SVC_JOB_LOCAL, want);
		if (j) {
			if (fl->path_hint)
				snprintf(j->path_hint, sizeof(j->path_hint), "%s", fl->path_hint);
			if (want == STOR_KIND_EXECUTABLE)
				svc_walk_exec_meta(fl, &j->meta_in);
			if (svc_job_submit(fl, j))
				return;
		}
	}
	svc_walk_next(fl);
}

static void walk_exhausted(svc_fetch_flight *fl);

void svc_walk_advance(svc_fetch_flight *fl)
{
	size_t n = fl->f->n_ups;
	fl->attempt = 0;
	if (!fl->revisit && fl->server < n)
		fl->server++;
	if (fl->server < n && !fl->revisit)
		return;
	if (!fl->deferred) {
		fl->server = n;
		return;
	}
	fl->revisit = true;
	fl->server = (size_t)__builtin_ctzll(fl->deferred);
	fl->deferred &= fl->deferred - 1;
}

bool svc_walk_executable_unwanted(const svc_fetch_flight *fl)
{
	const svc_upstream_stats *st = &fl->f->ups[fl->server].st;
	return fl->want == STOR_KIND_EXECUTABLE && !fl->exec_probe && !st->serves_executables &&
	       st->executable_misses >= SVC_FETCH_EXEC_LEARN;
}

void svc_walk_skip_executable(svc_fetch_flight *fl)
{
	char why[96];
	snprintf(why, sizeof(why), "serves no executables without debug info (%u misses in a row)",
		 fl->f->ups[fl->server].st.executable_misses);
	svc_trace_note(fl, fl->f->n_sources + fl->server, SVC_SOURCE_SKIPPED, why);
	svc_walk_advance(fl);
	fl->exec_probe = false;
}

/* An upstream that never served an executable the debuginfo walk lacked is
 * not asked for executables, but for one walk in SVC_FETCH_EXEC_REPROBE
 * (svc_fetcher.h, SVC_FETCH_EXEC_LEARN). */
static bool skip_executable(svc_fetch_flight *fl, svc_upstream *u)
{
	if (!svc_walk_executable_unwanted(fl))
		return false;
	if (++u->exec_skips % SVC_FETCH_EXEC_REPROBE == 0) {
		fl->exec_probe = true;
		return false;
	}
	svc_walk_skip_executable(fl);
	return true;
}

void svc_walk_next(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	while (fl->server < f->n_ups) {
		svc_upstream *u = &f->ups[fl->server];
		if (skip_executable(fl, u))
			continue;
		if (svc_slot_should_defer(fl, base_mono_ms())) {
			/* Every slot of this server busy for a while: the next ones
			 * first, this one after them. */
			fl->deferred |= 1ull << fl->server;
			f->st.deferred++;
			svc_walk_advance(fl);
			continue;
		}
		if (svc_breaker_allows(&u->breaker, base_mono_ms())) {
			svc_error err = {0};
			if (svc_slot_request(fl, &err) == SVC_OK)
				return;
			/* The queue is shared by every server: the walk ends here. */
			fl->any_error = true;
			svc_walk_note(fl, "upstream %s: %s", u->url, err.msg);
			svc_trace_note(fl, f->n_sources + fl->server, SVC_SOURCE_ERROR, err.msg);
			if (!f->queue.full_logged) /* once until it drains: no log flood */
				svc_fetch_log(f, "%s: %s; refusing until it drains", fl->hex, err.msg);
			f->queue.full_logged = true;
			fl->server = f->n_ups;
			fl->deferred = 0;
			break;
		}
		u->st.skipped++;
		fl->any_error = true;
		char why[SYM_ERROR_MSG_MAX];
		svc_breaker_describe(&u->breaker, base_mono_ms(), why, sizeof(why));
		svc_walk_note(fl, "upstream %s: skipped, %s", u->url, why);
		svc_trace_note(fl, f->n_sources + fl->server, SVC_SOURCE_SKIPPED, why);
		svc_walk_advance(fl);
	}
	walk_exhausted(fl);
}

/* The status of a walk that found nothing; after the executable walk, of both. */
static svc_fetch_status walk_status(const svc_fetch_flight *fl)
{
	svc_fetch_status st = fl->any_error   ? SVC_FETCH_ERROR
			      : fl->too_large ? SVC_FETCH_TOO_LARGE
					      : SVC_FETCH_NOT_FOUND;
	if (fl->want == STOR_KIND_DEBUGINFO)
		return st;
	/* Neither walk found anything: a failure in either one means "try
	 * again soon"; the debuginfo walk's text says the most. */
	if (fl->dbg_status == SVC_FETCH_ERROR || st == SVC_FETCH_ERROR)
		return SVC_FETCH_ERROR;
	if (fl->dbg_status == SVC_FETCH_TOO_LARGE || st == SVC_FETCH_TOO_LARGE)
		return SVC_FETCH_TOO_LARGE;
	return st;
}

/* Remembers the negative result st (why) in the store. */
static void record_negative(svc_fetch_flight *fl, svc_fetch_status st, const char *why)
{
	svc_fetcher *f = fl->f;
	int64_t ttl = st == SVC_FETCH_ERROR ? f->cfg.error_cache_ttl_ms : f->cfg.negative_cache_ttl_ms;
	stor_state state = st == SVC_FETCH_ERROR       ? STOR_STATE_ERROR
			   : st == SVC_FETCH_TOO_LARGE ? STOR_STATE_TOO_LARGE
						       : STOR_STATE_NOT_FOUND;
	stor_error serr = {0};
	/* A small metadata write (no file): fine on the loop. When the store holds
	 * the executable, this only records that the debuginfo search failed. */
	if (stor_put_negative(f->store, fl->base.id.bytes, fl->base.id.len, state, "sources", why,
			      base_real_ms() + ttl, &serr) != STOR_OK)
		svc_fetch_log(f, "%s: recording negative result: %s", fl->hex, serr.msg);
}

/* The store still holds the executable: that is the answer, with why. */
static bool answer_with_exec(svc_fetch_flight *fl, const char *why)
{
	stor_meta m;
	if (stor_get_meta(fl->f->store, fl->base.id.bytes, fl->base.id.len, &m, NULL) != STOR_OK ||
	    m.state != STOR_STATE_PRESENT)
		return false;
	fl->res.status = SVC_FETCH_OK;
	fl->res.kind = m.kind;
	fl->res.size = m.size;
	snprintf(fl->res.source, sizeof(fl->res.source), "%s", m.source);
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
	svc_fetch_flight_finish(fl);
	return true;
}

/* Ends a walk with nothing found: next walk, or the negative result. */
static void walk_exhausted(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_fetch_status st = walk_status(fl);
	if (!fl->walk_error[0])
		snprintf(fl->walk_error, sizeof(fl->walk_error),
			 "no %s in %zu debug dir(s) nor %zu upstream(s)",
			 fl->want == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable",
			 f->n_sources, f->n_ups);
	if (fl->want == STOR_KIND_DEBUGINFO) {
		fl->dbg_status = st;
		snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", fl->walk_error);
		if (fl->kind == SVC_FETCH_SYMBOLS && !fl->holding_exec) {
			svc_walk_start(fl, STOR_KIND_EXECUTABLE);
			return;
		}
	}
	/* The text of the walk that decided the status. */
	const char *why = fl->want == STOR_KIND_EXECUTABLE && fl->dbg_status != st ? fl->walk_error
			  : fl->dbg_error[0] ? fl->dbg_error
					     : fl->walk_error;
	record_negative(fl, st, why);
	if (fl->holding_exec && answer_with_exec(fl, why))
		return;
	fl->res.status = st;
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
	switch (st) {
	case SVC_FETCH_NOT_FOUND: f->st.not_found++; break;
	case SVC_FETCH_TOO_LARGE: f->st.too_large++; break;
	default: f->st.errors++; break;
	}
	svc_fetch_flight_finish(fl);
}
