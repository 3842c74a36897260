// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_run: the stage driver of a flight (svc_fetch_impl.h), as libuv's
 * uv_run and curl's multi_runsingle: one function names every stage in
 * order and calls the leaf that does it, which returns the next stage.
 * Everything that resumes a flight (its timer, a worker's job coming back, a
 * provider's answer, a slot freed, the dwz file's flight ending) comes back
 * here and runs the driver again; the stage files never call it.
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/core/svc_build_id.h"

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "base/base_clock.h"

static void job_done(void *arg, bool cancelled);
static void request_done(svc_http_result *res, void *arg);
static void alt_done(const svc_fetch_result *res, void *arg);

/* SOURCES or CHECK: j on a worker (WAIT), else what the job's stage does
 * without it. */
static svc_fetch_stage work(svc_fetch_flight *fl, svc_fetch_job *j, svc_job_type type)
{
	if (j && svc_job_submit(fl, j, job_done))
		return SVC_STAGE_WAIT;
	if (!j && type == SVC_JOB_LOCAL)
		return SVC_STAGE_PROVIDERS;  /* no sources: the upstreams */
	return svc_job_not_submitted(fl, type);
}

/* PROVIDERS, a server picked: a slot now (REQUEST), a place in the queue
 * (WAIT), or a full queue, which ends the walk's tour (PROVIDERS finds none). */
static svc_fetch_stage take_slot(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_error err = {0};
	switch (svc_slot_request(fl, &err)) {
	case SVC_SLOT_NOW:
		return SVC_STAGE_REQUEST;
	case SVC_SLOT_QUEUED:
		fl->stage = SVC_STAGE_WAIT;
		svc_fetch_dispatch(f);  /* may start fl itself */
		if (fl->queued)
			svc_slot_arm_defer(f);
		return SVC_STAGE_WAIT;
	case SVC_SLOT_FULL:
		break;
	}
	svc_walk_queue_full(fl, err.msg);
	return SVC_STAGE_EXHAUSTED;
}

/* ALT: waits for the dwz supplementary file's flight (same policy); DONE
 * (alt status ERROR) when that cannot start, or would wait on a flight that
 * waits on this one (two files naming each other). */
static svc_fetch_stage start_alt(svc_fetch_flight *fl)
{
	svc_fetcher *f = fl->f;
	const sym_build_id *id = &fl->res.alt_id;
	/* Answered from the store, where the link's path is not kept: read it
	 * from the stored file first, unless the dwz file is held already. */
	stor_meta am;
	if (fl->res.cached && !fl->alt_where && !fl->alt_hint_read && !f->shutting_down &&
	    !(stor_get_meta(f->store, SVC_STORE_KEY(id), &am, NULL) == STOR_OK &&
	      am.state == STOR_STATE_PRESENT)) {
		svc_fetch_job *j = svc_job_for_alt_hint(fl);
		if (j && svc_job_submit(fl, j, job_done))
			return SVC_STAGE_WAIT;
	}
	svc_fetch_flight *other = svc_fetch_flight_find(f, id, fl->policy);
	svc_fetch_waiter *w = NULL;
	if (sym_build_id_equal(id, &fl->base.id) || (other && other->alt_wait == fl) ||
	    f->shutting_down || !(w = calloc(1, sizeof(*w)))) {
		fl->res.alt_status = SVC_FETCH_ERROR;
		return SVC_STAGE_DONE;
	}
	*w = (svc_fetch_waiter){.cb = alt_done, .arg = fl, .internal = true};
	if (!(fl->alt_wait = svc_fetch_flight_get(f, id, SVC_FETCH_DEBUGINFO, fl->policy, w,
						  svc_fetch_on_timer))) {
		free(w);
		fl->res.alt_status = SVC_FETCH_ERROR;
		return SVC_STAGE_DONE;
	}
	/* Where the debug file says its dwz file is: the alt flight looks there
	 * too (its store check runs later, from its timer). */
	if (fl->alt_where && !fl->alt_wait->path_hint)
		fl->alt_wait->path_hint = strdup(fl->alt_where);
	return SVC_STAGE_WAIT;
}

void svc_fetch_run(svc_fetch_flight *fl)
{
	for (;;) {
		switch (fl->stage) {
		case SVC_STAGE_STORE:
			fl->stage = svc_walk_store_check(fl);
			break;
		case SVC_STAGE_SOURCES:
			fl->stage = work(fl, svc_job_for_sources(fl), SVC_JOB_LOCAL);
			break;
		case SVC_STAGE_PROVIDERS:
			fl->stage = svc_walk_pick(fl) ? take_slot(fl) : SVC_STAGE_EXHAUSTED;
			break;
		case SVC_STAGE_REQUEST:
			fl->stage = svc_download_start(fl, request_done);
			break;
		case SVC_STAGE_CHECK: {
			svc_fetch_job *j = fl->job;
			fl->job = NULL;
			fl->stage = work(fl, j, SVC_JOB_STORE);
			break;
		}
		case SVC_STAGE_EXHAUSTED:
			fl->stage = svc_walk_exhausted(fl);
			break;
		case SVC_STAGE_ALT:
			fl->stage = start_alt(fl);
			break;
		case SVC_STAGE_DONE:
			svc_fetch_flight_finish(fl);
			return;
		case SVC_STAGE_WAIT:
			return;
		}
	}
}

/* ---- what resumes a flight ------------------------------------------------ */

void svc_fetch_on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_fetch_flight *fl = arg;
	fl->stage = fl->resume;
	svc_fetch_run(fl);
}

static void job_done(void *arg, bool cancelled)
{
	svc_fetch_job *j = arg;
	svc_fetch_flight *fl = j->fl;
	fl->job_running = false;
	if (cancelled || fl->f->shutting_down) {
		svc_job_free(j);
		return;
	}
	fl->stage = svc_job_outcome(fl, j);
	svc_fetch_run(fl);
}

static void request_done(svc_http_result *res, void *arg)
{
	svc_fetch_flight *fl = arg;
	svc_fetcher *f = fl->f;
	fl->stage = svc_download_done(fl, res);
	svc_fetch_run(fl);
	svc_fetch_dispatch(f);  /* a slot is free */
}

static void alt_done(const svc_fetch_result *res, void *arg)
{
	svc_fetch_flight *fl = arg;
	fl->alt_wait = NULL;
	fl->res.alt_status = res->status;
	fl->stage = SVC_STAGE_DONE;
	svc_fetch_run(fl);
}

void svc_fetch_dispatch(svc_fetcher *f)
{
	svc_fetch_flight *fl = f->queue.head;
	while (fl && f->active < f->cfg.max_concurrent_fetches) {
		svc_fetch_flight *next = fl->qnext;
		if (svc_walk_executable_unwanted(fl)) {
			/* Learned while it waited: the server serves no such
			 * executable. The walk goes on from the flight's timer. */
			svc_queue_remove(&f->queue, fl);
			svc_walk_skip_executable(fl);
			fl->stage = svc_fetch_flight_resume_in(fl, SVC_STAGE_PROVIDERS, 0);
		} else if (svc_slot_free(f, &f->ups[fl->server])) {
			svc_queue_remove(&f->queue, fl);
			fl->stage = SVC_STAGE_REQUEST;
			svc_fetch_run(fl);  /* starts, or resumes later: never ends here */
		}
		fl = next;
	}
}

void svc_fetch_on_defer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_fetcher *f = arg;
	int64_t now = base_mono_ms();
	size_t n = 0;
	svc_fetch_flight **moving = malloc((f->queue.len ? f->queue.len : 1) * sizeof(*moving));
	for (svc_fetch_flight *fl = f->queue.head; moving && fl; fl = fl->qnext)
		if (svc_slot_should_defer(fl, now))
			moving[n++] = fl;
	for (size_t i = 0; i < n; i++) {
		/* Out of the queue; the walk defers the busy server and goes on. */
		svc_queue_remove(&f->queue, moving[i]);
		moving[i]->stage = SVC_STAGE_PROVIDERS;
		svc_fetch_run(moving[i]);
	}
	free(moving);
	svc_slot_arm_defer(f);
}
