// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_drive: the resolver's stage driver (svc_resolver_impl.h), as
 * libuv's uv_run and curl's multi_runsingle: step() names every stage of a
 * resolution in order, starts the flight's current one, and when a stage is
 * over (a worker's job, the fetcher's answer, the file's resolution) its
 * completion here asks the stage's file which stage comes next and steps
 * again. The stage files never call back here; nothing else starts a stage.
 *
 *   memory cache  the kind's cache and the remembered failures (from_memory),
 *                 before there is a flight
 *   DEPEND        a derived kind: the symbol resolution of the same build ID
 *                 (which brings the file into the store)
 *   LOAD          store index: the artifact stored for the build ID (worker)
 *   FETCH         store file, else the sources (the fetcher does both)
 *   S3            the S3 tier's index (after LOAD when no file is held
 *                 here, else after FETCH): read on the fetcher's multi
 *                 handle, loaded and kept (worker); none: FETCH or BUILD
 *   BUILD         the artifact built from the stored file, stored (worker;
 *                 the symbol index within the build memory budget)
 *   DONE          cached or remembered; every waiter called
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_clock.h"

static void drive(svc_resolve_flight *f);

static const svc_resolve_kind *kind_of(const svc_resolve_flight *f)
{
	return &svc_resolve_kinds[f->kind];
}

/* ---- the completions of the stages ---- */

static void load_job(void *arg)
{
	svc_resolve_flight *f = arg;
	kind_of(f)->load_work(f);
}

static void load_done(void *arg, bool cancelled)
{
	svc_resolve_flight *f = arg;
	f->stage = kind_of(f)->load_next(f, cancelled);
	drive(f);
}

static void fetch_done(const svc_fetch_result *res, void *arg)
{
	svc_resolve_flight *f = arg;
	f->stage = svc_resolve_fetch_next(f, res);
	drive(f);
}

static void s3_load_job(void *arg)
{
	svc_resolve_s3_load_work(arg);
}

static void s3_load_done(void *arg, bool cancelled)
{
	svc_resolve_flight *f = arg;
	f->stage = svc_resolve_s3_next(f, cancelled);
	drive(f);
}

/* The S3 tier's answer (the loop): a verified object is loaded on a worker;
 * none, on to the stage after S3. */
static void s3_read_done(void *arg, uint8_t *body, size_t size, const char *why)
{
	svc_resolve_flight *f = arg;
	(void)why;
	f->s3_read = NULL;
	if (body && !f->r->stopping) {
		f->s3_body = body;
		f->s3_body_size = size;
		if (svc_pool_submit(f->r->o.pool, f, s3_load_job, s3_load_done))
			return;
		f->s3_body = NULL;
	}
	free(body);
	f->stage = f->s3_then;
	drive(f);
}

static void build_job(void *arg)
{
	svc_resolve_flight *f = arg;
	kind_of(f)->build_work(f);
}

/* The queued builds that fit the memory budget now, oldest first. */
static void start_queued(svc_resolver *r)
{
	svc_resolve_flight *q;
	while ((q = svc_resolve_budget_next(r)))
		drive(q);
}

static void build_done(void *arg, bool cancelled)
{
	svc_resolve_flight *f = arg;
	svc_resolver *r = f->r;
	f->stage = kind_of(f)->build_next(f, cancelled);
	if (!(f->stage == SVC_RESOLVE_STAGE_BUILD && f->build_waiting))
		drive(f);
	start_queued(r);
}

/* The file's resolution is known: on to LOAD, or done with its failure. */
static void depend_result(svc_resolve_flight *f, svc_resolution *res)
{
	if (res->entry)
		svc_index_entry_release(f->r->caches[SVC_ARTIFACT_SYMBOLS], res->entry);
	if (res->status == SVC_RESOLVE_OK) {
		f->stage = SVC_RESOLVE_STAGE_LOAD;
		return;
	}
	f->status = res->status;
	snprintf(f->error, sizeof(f->error), "%s", res->error);
	f->stage = SVC_RESOLVE_STAGE_DONE;
}

static void depend_done(void *arg, svc_resolution *res)
{
	svc_resolve_flight *f = arg;
	f->dep = NULL;  /* freed by the flight that calls */
	depend_result(f, res);
	drive(f);
}

static svc_resolve_waiter *join_flight(svc_resolver *r, const sym_build_id *id,
				       svc_artifact_kind kind, enum svc_resolve_stage first,
				       svc_resolve_cb cb, void *arg, svc_resolution *now);

/* ---- the driver ---- */

/* Starts the flight's stage, going on while a stage ends at once; true while
 * one is under way, false at DONE (the caller finishes or drops the flight). */
static bool step(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	for (;;) {
		bool queued = f->stage == SVC_RESOLVE_STAGE_BUILD && f->build_waiting;
		if (r->stopping && f->stage != SVC_RESOLVE_STAGE_DONE && !queued) {
			svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
			f->stage = SVC_RESOLVE_STAGE_DONE;
		}
		switch (f->stage) {
		case SVC_RESOLVE_STAGE_DEPEND: {
			svc_resolution now;
			f->dep = join_flight(r, &f->fl.id, SVC_ARTIFACT_SYMBOLS,
					     SVC_RESOLVE_STAGE_LOAD, depend_done, f, &now);
			if (f->dep)
				return true;
			depend_result(f, &now);
			break;
		}
		case SVC_RESOLVE_STAGE_LOAD:
			if (svc_pool_submit(r->o.pool, f, load_job, load_done))
				return true;
			svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "cannot queue the index load");
			f->stage = SVC_RESOLVE_STAGE_DONE;
			break;
		case SVC_RESOLVE_STAGE_FETCH:
			if (svc_fetch_start(r->o.fetcher, &f->fl.id, SVC_FETCH_SYMBOLS,
					    SVC_FETCH_POLICY_FULL, fetch_done, f) == SVC_OK)
				return true;
			svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "cannot start the fetch");
			f->stage = SVC_RESOLVE_STAGE_DONE;
			break;
		case SVC_RESOLVE_STAGE_S3:
			if (svc_resolve_s3_start(f, s3_read_done))
				return true;
			f->stage = f->s3_then;
			break;
		case SVC_RESOLVE_STAGE_BUILD:
			if (queued || svc_pool_submit(r->o.pool, f, build_job, build_done))
				return true;
			if (f->build_reserved)
				svc_resolve_budget_give(f);
			svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s",
						"cannot queue the index build");
			f->stage = SVC_RESOLVE_STAGE_DONE;
			break;
		case SVC_RESOLVE_STAGE_DONE:
			return false;
		}
	}
}

static void drive(svc_resolve_flight *f)
{
	if (!step(f))
		svc_resolve_flight_finish(f);
}

/* ---- memory, then a flight ---- */

/* Fills *now with a failure that is known without waiting. */
static void answer_now(svc_resolution *now, svc_resolve_status status, const char *error)
{
	now->status = status;
	snprintf(now->error, sizeof(now->error), "%s", error);
}

/* The symbol index from memory (index cache, remembered failures); false: not known yet. */
static bool symbols_from_memory(svc_resolver *r, const sym_build_id *id, svc_resolution *now)
{
	svc_index_entry *e = svc_index_cache_get(r->caches[SVC_ARTIFACT_SYMBOLS], id);
	if (e) {
		r->st.memory_hits++;
		now->status = SVC_RESOLVE_OK;
		now->entry = e;
		if (e->recheck_ms && base_mono_ms() >= e->recheck_ms)
			svc_resolve_recheck(r, e);
		return true;
	}
	r->st.memory_misses++;
	const svc_resolve_negative *n = svc_resolve_neg_find(r, id);
	if (n) {
		r->st.negative_hits++;
		answer_now(now, n->status, n->error);
		return true;
	}
	return false;
}

/* The memory cache stage: answers *now, or names the flight's first stage. */
static bool from_memory(svc_resolver *r, const sym_build_id *id, svc_artifact_kind kind,
			svc_resolution *now, enum svc_resolve_stage *first)
{
	*first = SVC_RESOLVE_STAGE_LOAD;
	if (!svc_resolve_kinds[kind].derived)
		return symbols_from_memory(r, id, now);
	svc_index_entry *e = svc_index_cache_get(r->caches[kind], id);
	if (e) {
		now->status = SVC_RESOLVE_OK;
		now->entry = e;
		return true;
	}
	svc_resolution file;
	memset(&file, 0, sizeof(file));
	if (!symbols_from_memory(r, id, &file)) {
		*first = SVC_RESOLVE_STAGE_DEPEND;
		return false;
	}
	if (file.status == SVC_RESOLVE_OK) {
		svc_index_entry_release(r->caches[SVC_ARTIFACT_SYMBOLS], file.entry);
		return false;  /* the file is there: LOAD */
	}
	*now = file;  /* the file's failure */
	return true;
}

static svc_resolve_waiter *join_flight(svc_resolver *r, const sym_build_id *id,
				       svc_artifact_kind kind, enum svc_resolve_stage first,
				       svc_resolve_cb cb, void *arg, svc_resolution *now)
{
	memset(now, 0, sizeof(*now));
	svc_resolve_waiter *w = calloc(1, sizeof(*w));
	if (!w) {
		answer_now(now, SVC_RESOLVE_ERROR, "out of memory");
		return NULL;
	}
	svc_flight *fl = svc_flight_find(&r->flights[kind], id);
	if (fl) {
		if (kind == SVC_ARTIFACT_SYMBOLS)
			r->st.joined++;
	} else {
		svc_resolve_flight *f = NULL;
		if (r->stopping || !(f = svc_resolve_flight_new(r, id, kind, first))) {
			free(w);
			answer_now(now, SVC_RESOLVE_ERROR,
				   r->stopping ? "shutting down" : "out of memory");
			return NULL;
		}
		if (!step(f)) {  /* could not start: answered now, nothing remembered */
			answer_now(now, f->status, f->error);
			svc_resolve_flight_drop(f);
			free(w);
			return NULL;
		}
		fl = &f->fl;
	}
	w->cb = cb;
	w->arg = arg;
	svc_flight_join(fl, &w->fw);
	return w;
}

svc_resolve_waiter *svc_resolve_join(svc_resolver *r, const sym_build_id *id,
				     svc_artifact_kind kind, svc_resolve_cb cb, void *arg,
				     svc_resolution *now)
{
	memset(now, 0, sizeof(*now));
	/* A Go build ID or file hash the store has an alias for: its file's own
	 * identity (svc_identity.h), so every identity shares one flight and cache. */
	sym_build_id canon;
	svc_identity_canonical(r->o.store, id, &canon);
	enum svc_resolve_stage first;
	if (from_memory(r, &canon, kind, now, &first))
		return NULL;
	return join_flight(r, &canon, kind, first, cb, arg, now);
}

/* ---- background rechecks ---- */

void svc_resolve_recheck(svc_resolver *r, svc_index_entry *e)
{
	e->recheck_ms = base_mono_ms() + svc_resolve_recheck_interval_ms(r);
	if (r->stopping || svc_flight_find(&r->flights[SVC_ARTIFACT_SYMBOLS], &e->id))
		return;
	svc_resolve_flight *f =
		svc_resolve_flight_new(r, &e->id, SVC_ARTIFACT_SYMBOLS, SVC_RESOLVE_STAGE_FETCH);
	if (!f)
		return;
	f->recheck = true;
	r->st.rechecks++;
	if (!step(f))
		svc_resolve_flight_drop(f);
}
