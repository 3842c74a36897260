// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_walk: the walk of one flight (svc_fetch_impl.h), stages STORE
 * (the store's record answers, or a walk starts), PROVIDERS (the next
 * upstream that may be asked) and EXHAUSTED (the executable walk next, or
 * the negative result remembered in the store); the result of a success, and
 * whether it needs its dwz file. A leaf: each function returns the next
 * stage to the driver (svc_fetch_run.c).
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/core/svc_build_id.h"

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

int64_t svc_walk_ttl(const svc_fetch_flight *fl, svc_fetch_status st)
{
	const svc_config *c = &fl->f->cfg;
	if (!fl->policy.remember_negative)
		return 0;
	return st == SVC_FETCH_ERROR ? c->error_cache_ttl_ms : c->negative_cache_ttl_ms;
}

void svc_walk_exec_meta(const svc_fetch_flight *fl, stor_meta *m)
{
	m->neg_expiry = base_real_ms() + svc_walk_ttl(fl, fl->dbg_status);
	snprintf(m->last_error, sizeof(m->last_error), "%s", fl->dbg_error);
}

/*
 * The result is filled; the dwz file first when it names one. A flight for
 * symbols waits for it always. A flight for the debug file alone (the
 * debuginfod route) brings it too when the file came from a source just now,
 * while where the link points is known (alt_where): stored beside it, the
 * dwz file is there for a later call for symbols, and for a debuginfod
 * client's own request for it by its build ID, whichever route came first.
 */
static svc_fetch_stage with_alt(svc_fetch_flight *fl, bool needs_alt, const sym_build_id *alt_id,
				bool fresh_from_source)
{
	bool chase = fl->kind == SVC_FETCH_SYMBOLS || (fresh_from_source && fl->alt_where);
	if (!needs_alt || !chase)
		return SVC_STAGE_DONE;
	fl->res.has_alt = true;
	fl->res.alt_id = *alt_id;
	return SVC_STAGE_ALT;
}

svc_fetch_stage svc_walk_succeed(svc_fetch_flight *fl, stor_kind kind, uint64_t size,
				 const char *source, const sym_elf_info *info)
{
	fl->res.status = SVC_FETCH_OK;
	fl->res.kind = kind;
	fl->res.size = size;
	snprintf(fl->res.source, sizeof(fl->res.source), "%s", source);
	if (kind == STOR_KIND_EXECUTABLE)
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", fl->dbg_error);
	else
		fl->res.error[0] = '\0';
	return with_alt(fl, kind == STOR_KIND_DEBUGINFO && info->has_alt && info->alt_build_id.len,
			&info->alt_build_id, true);
}

/* ---- STORE ------------------------------------------------------------- */

/* Answers from the store's record when it can (the next stage); SOURCES:
 * the walk must run. */
static svc_fetch_stage answer_from_store(svc_fetch_flight *fl, const stor_meta *m)
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
		return with_alt(fl, m->alt_len != 0, &alt, false);
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
		return SVC_STAGE_DONE;
	}
	if (m->state == STOR_STATE_PRESENT) {
		/* Only the executable, and time to look for debug info again. */
		fl->holding_exec = true;
		snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", m->last_error);
	}
	return SVC_STAGE_SOURCES;
}

svc_fetch_stage svc_walk_store_check(svc_fetch_flight *fl)
{
	stor_meta m;
	svc_fetch_stage next = SVC_STAGE_SOURCES;
	if (stor_get_meta(fl->f->store, SVC_STORE_KEY(&fl->base.id), &m, NULL) == STOR_OK)
		next = answer_from_store(fl, &m);
	return next == SVC_STAGE_SOURCES ? svc_walk_begin(fl, STOR_KIND_DEBUGINFO) : next;
}

svc_fetch_stage svc_walk_begin(svc_fetch_flight *fl, stor_kind want)
{
	fl->want = want;
	fl->server = 0;
	fl->attempt = 0;
	fl->deferred = 0;
	fl->revisit = false;
	fl->any_error = fl->too_large = false;
	fl->exec_probe = false;
	fl->walk_error[0] = '\0';
	return SVC_STAGE_SOURCES;
}

/* ---- PROVIDERS ------------------------------------------------------------ */

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

void svc_walk_stop(svc_fetch_flight *fl)
{
	fl->server = fl->f->n_ups;
	fl->deferred = 0;
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

bool svc_walk_pick(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	while (fl->server < f->n_ups) {
		svc_upstream *u = &f->ups[fl->server];
		if (!svc_fetch_policy_allows(fl->policy, u)) {
			svc_walk_advance(fl);  /* not this request's: not asked, not noted */
			continue;
		}
		if (!(u->prov->ops->id_kinds & (1u << fl->base.id.kind))) {
			/* a protocol that has no name for this identity kind (debuginfod:
			 * GNU build IDs only): not asked, a miss */
			svc_trace_note(fl, f->n_sources + fl->server, SVC_SOURCE_SKIPPED,
				       "the protocol has no such identity kind");
			svc_walk_advance(fl);
			continue;
		}
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
		if (svc_breaker_allows(&u->breaker, base_mono_ms()))
			return true;
		u->st.skipped++;
		fl->any_error = true;
		char why[SYM_ERROR_MSG_MAX];
		svc_breaker_describe(&u->breaker, base_mono_ms(), why, sizeof(why));
		svc_walk_note(fl, "upstream %s: skipped, %s", u->url, why);
		svc_trace_note(fl, f->n_sources + fl->server, SVC_SOURCE_SKIPPED, why);
		svc_walk_advance(fl);
	}
	return false;
}

void svc_walk_queue_full(svc_fetch_flight *fl, const char *why)
{
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	/* The queue is shared by every server: the walk ends here. */
	fl->any_error = true;
	svc_walk_note(fl, "upstream %s: %s", u->url, why);
	svc_trace_note(fl, f->n_sources + fl->server, SVC_SOURCE_ERROR, why);
	if (!f->queue.full_logged) /* once until it drains: no log flood */
		svc_fetch_log(f, "%s: %s; refusing until it drains", fl->hex, why);
	f->queue.full_logged = true;
	svc_walk_stop(fl);
}

/* ---- EXHAUSTED ------------------------------------------------------------ */

/* The status of a walk that found nothing; after the executable walk, of both. */
static svc_fetch_status walk_status(const svc_fetch_flight *fl)
{
	svc_fetch_status st = fl->any_error     ? SVC_FETCH_ERROR
			      : fl->too_large   ? SVC_FETCH_TOO_LARGE
			      : fl->any_pending ? SVC_FETCH_PENDING
						: SVC_FETCH_NOT_FOUND;
	if (fl->want == STOR_KIND_DEBUGINFO)
		return st;
	if (fl->dbg_status == SVC_FETCH_PENDING || st == SVC_FETCH_PENDING)
		return SVC_FETCH_PENDING;  /* a scan may still bring it: nothing is final */
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
	stor_state state = st == SVC_FETCH_ERROR       ? STOR_STATE_ERROR
			   : st == SVC_FETCH_TOO_LARGE ? STOR_STATE_TOO_LARGE
						       : STOR_STATE_NOT_FOUND;
	stor_error serr = {0};
	/* A small metadata write (no file): fine on the loop. When the store holds
	 * the executable, this only records that the debuginfo search failed. */
	if (stor_put_negative(f->store, SVC_STORE_KEY(&fl->base.id), state, "sources", why,
			      base_real_ms() + svc_walk_ttl(fl, st), &serr) != STOR_OK)
		svc_fetch_log(f, "%s: recording negative result: %s", fl->hex, serr.msg);
}

/* The store still holds the executable: that is the answer, with why. */
static bool answer_with_exec(svc_fetch_flight *fl, const char *why)
{
	stor_meta m;
	if (stor_get_meta(fl->f->store, SVC_STORE_KEY(&fl->base.id), &m, NULL) != STOR_OK ||
	    m.state != STOR_STATE_PRESENT)
		return false;
	fl->res.status = SVC_FETCH_OK;
	fl->res.kind = m.kind;
	fl->res.size = m.size;
	snprintf(fl->res.source, sizeof(fl->res.source), "%s", m.source);
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
	return true;
}

/* The upstreams fl's policy lets it ask. */
static size_t upstreams_allowed(const svc_fetch_flight *fl)
{
	size_t n = 0;
	for (size_t i = 0; i < fl->f->n_ups; i++)
		n += svc_fetch_policy_allows(fl->policy, &fl->f->ups[i]);
	return n;
}

svc_fetch_stage svc_walk_exhausted(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_fetch_status st = walk_status(fl);
	if (!fl->walk_error[0])
		snprintf(fl->walk_error, sizeof(fl->walk_error),
			 "no %s in %zu debug dir(s) nor %zu upstream(s)",
			 fl->want == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable",
			 f->n_sources, upstreams_allowed(fl));
	if (fl->want == STOR_KIND_DEBUGINFO) {
		fl->dbg_status = st;
		snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", fl->walk_error);
		if (fl->kind == SVC_FETCH_SYMBOLS && !fl->holding_exec)
			return svc_walk_begin(fl, STOR_KIND_EXECUTABLE);
	}
	/* The text of the walk that decided the status. */
	const char *why = fl->want == STOR_KIND_EXECUTABLE && fl->dbg_status != st ? fl->walk_error
			  : fl->dbg_error[0] ? fl->dbg_error
					     : fl->walk_error;
	if (st != SVC_FETCH_PENDING)
		record_negative(fl, st, why);
	if (fl->holding_exec && answer_with_exec(fl, why))
		return SVC_STAGE_DONE;
	fl->res.status = st;
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
	switch (st) {
	case SVC_FETCH_NOT_FOUND: f->st.not_found++; break;
	case SVC_FETCH_TOO_LARGE: f->st.too_large++; break;
	case SVC_FETCH_PENDING: f->st.pending++; break;
	default: f->st.errors++; break;
	}
	return SVC_STAGE_DONE;
}
