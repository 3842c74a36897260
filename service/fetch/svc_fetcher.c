/*
 * fetch: the per-build-ID search (a "flight") as a small state machine on the
 * event loop (see fetch.h for the rules).
 *
 *   start -> store check -> local dirs (worker) -> upstream 0..n (HTTP, then a
 *   worker checks and stores the body) -> [alt fetch] -> done
 * and, when the debuginfo search comes back empty, the same local/upstream walk
 * for the executable. Every transition runs on the loop thread; workers only run
 * job_work() and hand the job back.
 */
#include "service/fetch/svc_fetcher.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "service/core/svc_pool.h"
#include "service/fetch/svc_upstream_http.h"

#ifndef SYMBOLIZER_VERSION
#define SYMBOLIZER_VERSION "0.1.0"
#endif
#define BACKOFF_MAX_MS 10000

typedef struct upstream {
	char *url;
	int active;
	int consecutive_failures;
	int64_t open_until;    /* monotonic ms; 0 = closed */
	bool probing;          /* half-open: the one probe is in flight */
	svc_upstream_stats st;
} upstream;

typedef struct waiter {
	svc_fetch_cb cb;
	void *arg;
	struct waiter *next;
} waiter;

typedef struct flight flight;

struct flight {
	svc_fetcher *f;
	sym_build_id id;
	char hex[SYM_BUILD_ID_HEX_MAX];
	svc_fetch_kind kind;
	waiter *waiters, **wtail;
	flight *hnext;           /* map chain */
	flight *qnext;           /* slot queue */
	bool queued;
	stor_kind want;          /* what the current walk looks for */
	bool holding_exec;       /* the store holds the executable; look for debuginfo only */
	size_t server;
	int attempt;
	/* Outcome of the walk in progress, and of the debuginfo walk once done. */
	bool any_error, too_large;
	char walk_error[SYM_ERROR_MSG_MAX];
	svc_fetch_status dbg_status;
	char dbg_error[SYM_ERROR_MSG_MAX];
	struct event *timer;     /* kick, backoff */
	svc_http_req *req;
	bool job_running;        /* a worker holds a job of this flight */
	flight *alt_wait;        /* the flight of the dwz file this one waits for */
	svc_fetch_result res;
};

typedef enum job_type { JOB_LOCAL, JOB_STORE } job_type;

/* Work for a worker thread: find locally and/or check and store a file. */
typedef struct job {
	flight *fl;
	job_type type;
	stor_kind want;
	/* in */
	void *data;              /* JOB_STORE: the downloaded body (owned) */
	size_t size;
	char source[STOR_SOURCE_MAX];
	stor_meta meta_in;       /* neg_expiry/last_error for an executable */
	/* out */
	int found;               /* JOB_LOCAL: 1 found, 0 not, -1 too large */
	sym_errc check;          /* svc_check_file */
	stor_errc stored;
	stor_kind kind;
	sym_elf_info info;
	char error[SYM_ERROR_MSG_MAX];
} job;

struct svc_fetcher {
	struct event_base *base;
	stor_db *store;
	svc_config cfg;          /* copy; lists owned */
	svc_http *http;
	svc_pool *pool;
	svc_log_fn log;
	void *log_arg;
	upstream *ups;
	size_t n_ups;
	flight **buckets;
	size_t n_buckets, n_flights;
	flight *q_head, *q_tail; /* flights waiting for a download slot */
	size_t n_queued;
	int active;              /* downloads in flight */
	bool shutting_down;
	svc_fetcher_stats st;
	char *user_agent;
};

static void walk_next(flight *fl);
static void walk_start(flight *fl, stor_kind want);
static void finish(flight *fl);

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((format(printf, 2, 3)))
static void logf_(svc_fetcher *f, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (f->log)
		f->log(f->log_arg, line);
	else
		fprintf(stderr, "fetch: %s\n", line);
}

const char *svc_fetch_status_name(svc_fetch_status s)
{
	switch (s) {
	case SVC_FETCH_OK: return "ok";
	case SVC_FETCH_NOT_FOUND: return "not_found";
	case SVC_FETCH_ERROR: return "error";
	case SVC_FETCH_TOO_LARGE: return "too_large";
	}
	return "unknown";
}

/* Keeps the first error of a walk (the most telling: the best server's). */
__attribute__((format(printf, 2, 3)))
static void walk_note(flight *fl, const char *fmt, ...)
{
	if (fl->walk_error[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fl->walk_error, sizeof(fl->walk_error), fmt, ap);
	va_end(ap);
}

static size_t bucket_in(size_t n_buckets, const sym_build_id *id)
{
	return sym_build_id_hash(id) & (n_buckets - 1);
}

static size_t bucket_of(const svc_fetcher *f, const sym_build_id *id)
{
	return bucket_in(f->n_buckets, id);
}

static flight *flight_find(svc_fetcher *f, const sym_build_id *id)
{
	for (flight *fl = f->buckets[bucket_of(f, id)]; fl; fl = fl->hnext)
		if (sym_build_id_equal(&fl->id, id))
			return fl;
	return NULL;
}

static void flight_unmap(svc_fetcher *f, flight *fl)
{
	for (flight **pp = &f->buckets[bucket_of(f, &fl->id)]; *pp; pp = &(*pp)->hnext)
		if (*pp == fl) {
			*pp = fl->hnext;
			f->n_flights--;
			return;
		}
}

static void flight_free(flight *fl)
{
	while (fl->waiters) {
		waiter *w = fl->waiters;
		fl->waiters = w->next;
		free(w);
	}
	if (fl->timer)
		event_free(fl->timer);
	free(fl);
}

static void schedule(flight *fl, int64_t delay_ms)
{
	struct timeval tv = {delay_ms / 1000, (delay_ms % 1000) * 1000};
	evtimer_add(fl->timer, &tv);
}

/* ---- circuit breaker ------------------------------------------------------ */

static svc_breaker_state breaker_state(const upstream *u, int64_t now)
{
	if (!u->open_until)
		return SVC_BREAKER_CLOSED;
	return now < u->open_until ? SVC_BREAKER_OPEN : SVC_BREAKER_HALF_OPEN;
}

/* May the flight ask this server now? */
static bool breaker_allows(const upstream *u)
{
	switch (breaker_state(u, now_mono_ms())) {
	case SVC_BREAKER_CLOSED: return true;
	case SVC_BREAKER_OPEN: return false;
	case SVC_BREAKER_HALF_OPEN: return !u->probing;
	}
	return false;
}

static void breaker_success(svc_fetcher *f, upstream *u)
{
	if (u->open_until)
		logf_(f, "upstream %s: circuit closed (server answers again)", u->url);
	u->consecutive_failures = 0;
	u->open_until = 0;
}

static void breaker_failure(svc_fetcher *f, upstream *u, const char *why)
{
	u->consecutive_failures++;
	bool half_open = breaker_state(u, now_mono_ms()) == SVC_BREAKER_HALF_OPEN;
	if (half_open || (!u->open_until && f->cfg.upstream_breaker_failures > 0 &&
			  u->consecutive_failures >= f->cfg.upstream_breaker_failures)) {
		u->open_until = now_mono_ms() + f->cfg.upstream_breaker_cooldown_ms;
		u->st.breaker_opens++;
		logf_(f, "upstream %s: circuit open for %.1f s after %d failures in a row (last: %s)",
		      u->url, (double)f->cfg.upstream_breaker_cooldown_ms / 1000.0,
		      u->consecutive_failures, why);
	}
}

/* ---- download slots ------------------------------------------------------- */

static void request_start(flight *fl);

static bool slot_free(const svc_fetcher *f, const upstream *u)
{
	return f->active < f->cfg.max_concurrent_fetches &&
	       u->active < f->cfg.max_fetches_per_upstream;
}

static void queue_remove(svc_fetcher *f, flight *fl)
{
	if (!fl->queued)
		return;
	flight *prev = NULL;
	for (flight *q = f->q_head; q; prev = q, q = q->qnext)
		if (q == fl) {
			if (prev)
				prev->qnext = q->qnext;
			else
				f->q_head = q->qnext;
			if (f->q_tail == q)
				f->q_tail = prev;
			break;
		}
	fl->queued = false;
	fl->qnext = NULL;
	f->n_queued--;
}

/* Starts queued flights whose server has room, oldest first. */
static void queue_dispatch(svc_fetcher *f)
{
	flight *fl = f->q_head;
	while (fl && f->active < f->cfg.max_concurrent_fetches) {
		flight *next = fl->qnext;
		upstream *u = &f->ups[fl->server];
		if (slot_free(f, u)) {
			queue_remove(f, fl);
			request_start(fl);
		}
		fl = next;
	}
}

static void request_slot(flight *fl)
{
	svc_fetcher *f = fl->f;
	if (slot_free(f, &f->ups[fl->server]) && !f->q_head) {
		request_start(fl);
		return;
	}
	fl->queued = true;
	fl->qnext = NULL;
	if (f->q_tail)
		f->q_tail->qnext = fl;
	else
		f->q_head = fl;
	f->q_tail = fl;
	f->n_queued++;
	queue_dispatch(f);
}

/* ---- worker jobs ---------------------------------------------------------- */

static void job_work(void *arg)
{
	job *j = arg;
	svc_fetcher *f = j->fl->f;
	sym_error err = {0};
	if (j->type == JOB_LOCAL) {
		const char *dir = NULL;
		j->found = svc_source_local_find(f->cfg.debug_dirs, f->cfg.n_debug_dirs, &j->fl->id,
						 j->want, f->cfg.max_debuginfo_size, &j->data,
						 &j->size, &dir, &err);
		if (err.code != SYM_OK)
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
		if (j->found != 1)
			return;
		snprintf(j->source, sizeof(j->source), "%s", dir);
	}
	j->check = svc_check_file(j->data, j->size, &j->fl->id, &j->kind, &j->info, &err);
	if (j->check != SYM_OK) {
		snprintf(j->error, sizeof(j->error), "%s", err.msg);
		return;
	}
	stor_meta m = j->meta_in;
	m.kind = j->kind;
	snprintf(m.source, sizeof(m.source), "%s", j->source);
	if (j->kind == STOR_KIND_DEBUGINFO) {
		m.neg_expiry = 0;
		m.last_error[0] = '\0';
	}
	if (j->info.has_alt && j->info.alt_build_id.len) {
		m.alt_len = j->info.alt_build_id.len;
		memcpy(m.alt_id, j->info.alt_build_id.bytes, m.alt_len);
	}
	stor_error serr = {0};
	j->stored = stor_put_file(f->store, j->fl->id.bytes, j->fl->id.len, &m, j->data, j->size,
				  &serr);
	if (j->stored != STOR_OK)
		snprintf(j->error, sizeof(j->error), "%s", serr.msg);
}

static void job_free(job *j)
{
	free(j->data);
	free(j);
}

static void job_done(void *arg, bool cancelled);

static bool job_submit(flight *fl, job *j)
{
	j->fl = fl;
	fl->job_running = true;
	if (!svc_pool_submit(fl->f->pool, j, job_work, job_done)) {
		fl->job_running = false;
		job_free(j);
		return false;
	}
	return true;
}

/* ---- outcomes ------------------------------------------------------------- */

static void alt_done(const svc_fetch_result *res, void *arg)
{
	flight *fl = arg;
	fl->alt_wait = NULL;
	fl->res.alt_status = res->status;
	finish(fl);
}

/* Waits for the dwz supplementary file; false when that cannot start, or would
 * wait on a flight that waits on this one (two files naming each other). */
static bool start_alt(flight *fl)
{
	svc_fetcher *f = fl->f;
	if (sym_build_id_equal(&fl->res.alt_id, &fl->id))
		return false;
	flight *other = flight_find(f, &fl->res.alt_id);
	if (other && other->alt_wait == fl)
		return false;
	if (svc_fetch_start(f, &fl->res.alt_id, SVC_FETCH_DEBUGINFO, alt_done, fl) != SYM_OK)
		return false;
	fl->alt_wait = flight_find(f, &fl->res.alt_id);
	return true;
}

/* The file is in the store: fill the result, fetch the dwz file if needed. */
static void succeed(flight *fl, const job *j)
{
	fl->res.status = SVC_FETCH_OK;
	fl->res.kind = j->kind;
	fl->res.size = j->size;
	snprintf(fl->res.source, sizeof(fl->res.source), "%s", j->source);
	if (j->kind == STOR_KIND_EXECUTABLE)
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", fl->dbg_error);
	else
		fl->res.error[0] = '\0';
	if (j->kind == STOR_KIND_DEBUGINFO && j->info.has_alt && j->info.alt_build_id.len &&
	    fl->kind == SVC_FETCH_SYMBOLS) {
		fl->res.has_alt = true;
		fl->res.alt_id = j->info.alt_build_id;
		if (start_alt(fl))
			return;
		fl->res.alt_status = SVC_FETCH_ERROR;
	}
	finish(fl);
}

/* Ends a walk with nothing found: next walk, or the negative result. */
static void walk_exhausted(flight *fl)
{
	svc_fetcher *f = fl->f;
	svc_fetch_status st = fl->any_error   ? SVC_FETCH_ERROR
			      : fl->too_large ? SVC_FETCH_TOO_LARGE
					      : SVC_FETCH_NOT_FOUND;
	if (!fl->walk_error[0])
		snprintf(fl->walk_error, sizeof(fl->walk_error),
			 "no %s in %zu debug dir(s) nor %zu upstream(s)",
			 fl->want == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable",
			 f->cfg.n_debug_dirs, f->n_ups);
	if (fl->want == STOR_KIND_DEBUGINFO) {
		fl->dbg_status = st;
		snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", fl->walk_error);
		if (fl->kind == SVC_FETCH_SYMBOLS && !fl->holding_exec) {
			walk_start(fl, STOR_KIND_EXECUTABLE);
			return;
		}
	} else {
		/* Neither walk found anything: a failure in either one means "try
		 * again soon"; the debuginfo walk's text says the most. */
		if (fl->dbg_status == SVC_FETCH_ERROR || st == SVC_FETCH_ERROR)
			st = SVC_FETCH_ERROR;
		else if (fl->dbg_status == SVC_FETCH_TOO_LARGE || st == SVC_FETCH_TOO_LARGE)
			st = SVC_FETCH_TOO_LARGE;
	}
	int64_t ttl = st == SVC_FETCH_ERROR ? f->cfg.error_cache_ttl_ms : f->cfg.negative_cache_ttl_ms;
	stor_state state = st == SVC_FETCH_ERROR       ? STOR_STATE_ERROR
			   : st == SVC_FETCH_TOO_LARGE ? STOR_STATE_TOO_LARGE
						       : STOR_STATE_NOT_FOUND;
	/* The text of the walk that decided the status. */
	const char *why = fl->want == STOR_KIND_EXECUTABLE && fl->dbg_status != st ? fl->walk_error
			  : fl->dbg_error[0] ? fl->dbg_error
					     : fl->walk_error;
	stor_error serr = {0};
	/* A small metadata write (no file): fine on the loop. When the store holds
	 * the executable, this only records that the debuginfo search failed. */
	if (stor_put_negative(f->store, fl->id.bytes, fl->id.len, state, "sources", why,
			      now_real_ms() + ttl, &serr) != STOR_OK)
		logf_(f, "%s: recording negative result: %s", fl->hex, serr.msg);
	if (fl->holding_exec) {
		stor_meta m;
		if (stor_get_meta(f->store, fl->id.bytes, fl->id.len, &m, NULL) == STOR_OK &&
		    m.state == STOR_STATE_PRESENT) {
			fl->res.status = SVC_FETCH_OK;
			fl->res.kind = m.kind;
			fl->res.size = m.size;
			snprintf(fl->res.source, sizeof(fl->res.source), "%s", m.source);
			snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
			finish(fl);
			return;
		}
	}
	fl->res.status = st;
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", why);
	switch (st) {
	case SVC_FETCH_NOT_FOUND: f->st.not_found++; break;
	case SVC_FETCH_TOO_LARGE: f->st.too_large++; break;
	default: f->st.errors++; break;
	}
	finish(fl);
}

static void job_done(void *arg, bool cancelled)
{
	job *j = arg;
	flight *fl = j->fl;
	fl->job_running = false;
	svc_fetcher *f = fl->f;
	if (cancelled || f->shutting_down) {
		job_free(j);
		return;
	}
	bool from_upstream = j->type == JOB_STORE;
	upstream *u = from_upstream ? &f->ups[fl->server] : NULL;
	if (j->type == JOB_LOCAL && j->found != 1) {
		if (j->found < 0)
			fl->too_large = true;
		if (j->error[0])
			walk_note(fl, "%s", j->error);
		job_free(j);
		fl->server = 0;
		fl->attempt = 0;
		walk_next(fl);
		return;
	}
	if (j->check != SYM_OK) {
		/* A file that is not what we asked for: nothing stored, next source. */
		if (u) {
			u->st.rejected++;
			logf_(f, "upstream %s: %s: rejected: %s", u->url, fl->hex, j->error);
			walk_note(fl, "upstream %s: %s", u->url, j->error);
			fl->any_error = true;
			fl->server++;
		}
		job_free(j);
		fl->attempt = 0;
		walk_next(fl);
		return;
	}
	if (j->stored == STOR_E_EXISTS) {
		/* Debuginfo arrived meanwhile (an upload): that is the answer. */
		stor_meta m;
		if (stor_get_meta(f->store, fl->id.bytes, fl->id.len, &m, NULL) == STOR_OK) {
			j->kind = m.kind;
			j->size = m.size;
			snprintf(j->source, sizeof(j->source), "%s", m.source);
			memset(&j->info, 0, sizeof(j->info));
			j->info.has_alt = m.alt_len > 0;
			j->info.alt_build_id.len = m.alt_len;
			memcpy(j->info.alt_build_id.bytes, m.alt_id, m.alt_len);
		}
		j->stored = STOR_OK;
	}
	if (j->stored != STOR_OK) {
		fl->res.status = j->stored == STOR_E_TOO_LARGE ? SVC_FETCH_TOO_LARGE : SVC_FETCH_ERROR;
		snprintf(fl->res.error, sizeof(fl->res.error), "%s", j->error);
		if (fl->res.status == SVC_FETCH_TOO_LARGE)
			f->st.too_large++;
		else
			f->st.errors++;
		logf_(f, "%s: %s", fl->hex, j->error);
		job_free(j);
		finish(fl);
		return;
	}
	if (from_upstream)
		f->st.upstream_hits++;
	else
		f->st.local_hits++;
	succeed(fl, j);
	job_free(j);
}

/* ---- HTTP --------------------------------------------------------------- */

static void retry_or_next(flight *fl, upstream *u, const char *why)
{
	svc_fetcher *f = fl->f;
	u->st.failures++;
	fl->any_error = true;
	walk_note(fl, "upstream %s: %s", u->url, why);
	breaker_failure(f, u, why);
	if (fl->attempt < f->cfg.upstream_retries && breaker_allows(u)) {
		int64_t base = f->cfg.upstream_retry_backoff_ms;
		int64_t delay = base << fl->attempt;
		if (delay > BACKOFF_MAX_MS)
			delay = BACKOFF_MAX_MS;
		delay += base > 0 ? rand() % (base / 2 + 1) : 0; /* jitter */
		fl->attempt++;
		schedule(fl, delay);
		return;
	}
	fl->server++;
	fl->attempt = 0;
	walk_next(fl);
}

static void http_done(svc_http_result *res, void *arg)
{
	flight *fl = arg;
	svc_fetcher *f = fl->f;
	upstream *u = &f->ups[fl->server];
	fl->req = NULL;
	f->active--;
	u->active--;
	u->probing = false;
	char why[256];
	if (res->failure == SVC_HTTP_OK && res->status == 200) {
		u->st.ok++;
		u->st.bytes += res->size;
		breaker_success(f, u);
		job *j = calloc(1, sizeof(*j));
		if (j) {
			j->type = JOB_STORE;
			j->want = fl->want;
			j->data = res->body;
			j->size = res->size;
			res->body = NULL;
			snprintf(j->source, sizeof(j->source), "%s", u->url);
			if (fl->want == STOR_KIND_EXECUTABLE) {
				j->meta_in.neg_expiry = now_real_ms() + (fl->dbg_status == SVC_FETCH_ERROR
										 ? f->cfg.error_cache_ttl_ms
										 : f->cfg.negative_cache_ttl_ms);
				snprintf(j->meta_in.last_error, sizeof(j->meta_in.last_error), "%s",
					 fl->dbg_error);
			}
		}
		if (!j || !job_submit(fl, j)) {
			fl->any_error = true;
			walk_note(fl, "out of memory");
			fl->server++;
			walk_next(fl);
		}
	} else if (res->failure == SVC_HTTP_OK && res->status == 404) {
		u->st.not_found++;
		breaker_success(f, u);
		fl->server++;
		fl->attempt = 0;
		walk_next(fl);
	} else if ((res->failure == SVC_HTTP_OK && res->status == 406) ||
		   res->failure == SVC_HTTP_TOO_LARGE) {
		u->st.too_large++;
		breaker_success(f, u);
		fl->too_large = true;
		if (res->failure == SVC_HTTP_OK)
			walk_note(fl, "upstream %s: HTTP 406 (over %llu bytes)", u->url,
				  (unsigned long long)f->cfg.max_debuginfo_size);
		else
			walk_note(fl, "upstream %s: %s", u->url, res->error);
		/* Every server gets the same cap: asking the next one is pointless. */
		fl->server = f->n_ups;
		walk_next(fl);
	} else if (res->failure == SVC_HTTP_OK && res->status >= 500) {
		snprintf(why, sizeof(why), "HTTP %ld", res->status);
		retry_or_next(fl, u, why);
	} else if (res->failure == SVC_HTTP_OK && res->status == 429) {
		retry_or_next(fl, u, "HTTP 429");
	} else if (res->failure == SVC_HTTP_OK) {
		/* Another client error: the server works, it will not change its mind. */
		u->st.failures++;
		fl->any_error = true;
		walk_note(fl, "upstream %s: HTTP %ld", u->url, res->status);
		fl->server++;
		fl->attempt = 0;
		walk_next(fl);
	} else {
		retry_or_next(fl, u, res->error);
	}
	queue_dispatch(f);
}

static void request_start(flight *fl)
{
	svc_fetcher *f = fl->f;
	upstream *u = &f->ups[fl->server];
	char url[2048];
	snprintf(url, sizeof(url), "%s/buildid/%s/%s", u->url, fl->hex,
		 fl->want == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable");
	svc_http_opts o = {
		.timeout_ms = f->cfg.upstream_timeout_ms,
		.min_progress = f->cfg.upstream_min_progress,
		.max_size = f->cfg.max_debuginfo_size,
	};
	if (breaker_state(u, now_mono_ms()) == SVC_BREAKER_HALF_OPEN)
		u->probing = true;
	f->active++;
	u->active++;
	u->st.requests++;
	fl->req = svc_http_get(f->http, url, &o, http_done, fl);
	if (!fl->req) {
		f->active--;
		u->active--;
		u->probing = false;
		fl->any_error = true;
		walk_note(fl, "upstream %s: could not start a request", u->url);
		fl->server++;
		schedule(fl, 0);
	}
}

/* ---- the walk --------------------------------------------------------- */

/* Asks the next upstream (fl->server) that may be asked, or ends the walk. */
static void walk_next(flight *fl)
{
	svc_fetcher *f = fl->f;
	while (fl->server < f->n_ups) {
		upstream *u = &f->ups[fl->server];
		if (breaker_allows(u)) {
			request_slot(fl);
			return;
		}
		u->st.skipped++;
		fl->any_error = true;
		walk_note(fl, "upstream %s: skipped, circuit breaker open", u->url);
		fl->server++;
		fl->attempt = 0;
	}
	walk_exhausted(fl);
}

static void walk_start(flight *fl, stor_kind want)
{
	fl->want = want;
	fl->server = 0;
	fl->attempt = 0;
	fl->any_error = fl->too_large = false;
	fl->walk_error[0] = '\0';
	if (fl->f->cfg.n_debug_dirs) {
		job *j = calloc(1, sizeof(*j));
		if (j) {
			j->type = JOB_LOCAL;
			j->want = want;
			if (want == STOR_KIND_EXECUTABLE) {
				j->meta_in.neg_expiry = now_real_ms() + (fl->dbg_status == SVC_FETCH_ERROR
										 ? fl->f->cfg.error_cache_ttl_ms
										 : fl->f->cfg.negative_cache_ttl_ms);
				snprintf(j->meta_in.last_error, sizeof(j->meta_in.last_error), "%s",
					 fl->dbg_error);
			}
			if (job_submit(fl, j))
				return;
		}
	}
	walk_next(fl);
}

/* The flight's timer: first the store check, later backoff expiries. */
static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flight *fl = arg;
	svc_fetcher *f = fl->f;
	if (fl->want != STOR_KIND_NONE) {
		/* Backoff over (or a request that could not start): ask again. */
		walk_next(fl);
		return;
	}
	stor_meta m;
	int64_t now = now_real_ms();
	if (stor_get_meta(f->store, fl->id.bytes, fl->id.len, &m, NULL) == STOR_OK) {
		bool fresh = now < m.neg_expiry;
		if (m.state == STOR_STATE_PRESENT &&
		    (m.kind == STOR_KIND_DEBUGINFO || fresh || fl->kind == SVC_FETCH_DEBUGINFO)) {
			f->st.cache_hits++;
			fl->res.status = SVC_FETCH_OK;
			fl->res.cached = true;
			fl->res.kind = m.kind;
			fl->res.size = m.size;
			snprintf(fl->res.source, sizeof(fl->res.source), "%s", m.source);
			snprintf(fl->res.error, sizeof(fl->res.error), "%s", m.last_error);
			if (m.alt_len && fl->kind == SVC_FETCH_SYMBOLS) {
				fl->res.has_alt = true;
				fl->res.alt_id.len = m.alt_len;
				memcpy(fl->res.alt_id.bytes, m.alt_id, m.alt_len);
				if (start_alt(fl))
					return;
				fl->res.alt_status = SVC_FETCH_ERROR;
			}
			finish(fl);
			return;
		}
		if (m.state != STOR_STATE_PRESENT && fresh) {
			f->st.cache_hits++;
			fl->res.cached = true;
			fl->res.status = m.state == STOR_STATE_NOT_FOUND   ? SVC_FETCH_NOT_FOUND
					 : m.state == STOR_STATE_TOO_LARGE ? SVC_FETCH_TOO_LARGE
									   : SVC_FETCH_ERROR;
			snprintf(fl->res.error, sizeof(fl->res.error), "%s", m.last_error);
			finish(fl);
			return;
		}
		if (m.state == STOR_STATE_PRESENT) {
			/* Only the executable, and time to look for debug info again. */
			fl->holding_exec = true;
			snprintf(fl->dbg_error, sizeof(fl->dbg_error), "%s", m.last_error);
		}
	}
	walk_start(fl, STOR_KIND_DEBUGINFO);
}

static void finish(flight *fl)
{
	svc_fetcher *f = fl->f;
	flight_unmap(f, fl);
	fl->res.build_id = fl->id;
	/* Callbacks may start new fetches, of this build ID too: it is unmapped. */
	while (fl->waiters) {
		waiter *w = fl->waiters;
		fl->waiters = w->next;
		w->cb(&fl->res, w->arg);
		free(w);
	}
	stor_unpin(f->store, fl->id.bytes, fl->id.len);
	flight_free(fl);
}

/* ---- API -------------------------------------------------------------- */

sym_errc svc_fetch_start(svc_fetcher *f, const sym_build_id *id, svc_fetch_kind kind,
			 svc_fetch_cb cb, void *arg)
{
	if (!id || id->len == 0 || id->len > SYM_BUILD_ID_MAX || !cb)
		return SYM_E_INVALID;
	if (f->shutting_down)
		return SYM_E_INVALID;
	waiter *w = calloc(1, sizeof(*w));
	if (!w)
		return SYM_E_NOMEM;
	w->cb = cb;
	w->arg = arg;
	f->st.started++;
	flight *fl = flight_find(f, id);
	if (fl) {
		/* Single flight. A SYMBOLS request joining a DEBUGINFO-only flight
		 * gets what that flight finds (the dwz case: files with no executable). */
		f->st.joined++;
		*fl->wtail = w;
		fl->wtail = &w->next;
		return SYM_OK;
	}
	fl = calloc(1, sizeof(*fl));
	if (!fl) {
		free(w);
		return SYM_E_NOMEM;
	}
	fl->f = f;
	fl->id = *id;
	sym_build_id_to_hex(id, fl->hex);
	fl->kind = kind;
	fl->waiters = w;
	fl->wtail = &w->next;
	fl->timer = evtimer_new(f->base, timer_cb, fl);
	if (!fl->timer) {
		flight_free(fl);
		return SYM_E_NOMEM;
	}
	if (f->n_flights + 1 > f->n_buckets) {
		size_t nb = f->n_buckets * 2;
		flight **b = calloc(nb, sizeof(*b));
		if (b) {
			for (size_t i = 0; i < f->n_buckets; i++)
				for (flight *x = f->buckets[i], *next; x; x = next) {
					next = x->hnext;
					size_t h = bucket_in(nb, &x->id);
					x->hnext = b[h];
					b[h] = x;
				}
			free(f->buckets);
			f->buckets = b;
			f->n_buckets = nb;
		}
	}
	size_t h = bucket_of(f, id);
	fl->hnext = f->buckets[h];
	f->buckets[h] = fl;
	f->n_flights++;
	stor_pin(f->store, id->bytes, id->len);
	schedule(fl, 0);
	return SYM_OK;
}

static char **dup_list(char *const *src, size_t n)
{
	char **l = calloc(n ? n : 1, sizeof(*l));
	if (!l)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(l[i] = strdup(src[i]))) {
			while (i--)
				free(l[i]);
			free(l);
			return NULL;
		}
	return l;
}

svc_fetcher *svc_fetcher_create(const svc_fetcher_options *o, sym_error *err)
{
	if (!o || !o->base || !o->store || !o->config) {
		sym_error_set(err, SYM_E_INVALID, "fetcher: base, store and config are required");
		return NULL;
	}
	svc_fetcher *f = calloc(1, sizeof(*f));
	if (!f) {
		sym_error_set(err, SYM_E_NOMEM, "fetcher: out of memory");
		return NULL;
	}
	f->base = o->base;
	f->store = o->store;
	f->log = o->log;
	f->log_arg = o->log_arg;
	f->cfg = *o->config;
	f->cfg.data_dir = NULL;
	f->cfg.debug_dirs = dup_list(o->config->debug_dirs, o->config->n_debug_dirs);
	f->cfg.upstreams = dup_list(o->config->upstreams, o->config->n_upstreams);
	if (f->cfg.max_concurrent_fetches < 1)
		f->cfg.max_concurrent_fetches = 1;
	if (f->cfg.max_fetches_per_upstream < 1)
		f->cfg.max_fetches_per_upstream = 1;
	if (f->cfg.fetch_workers < 1)
		f->cfg.fetch_workers = 1;
	char ua[128];
	snprintf(ua, sizeof(ua), "symbolizer/%s (+debuginfod client)", SYMBOLIZER_VERSION);
	f->user_agent = strdup(o->user_agent ? o->user_agent : ua);
	f->n_buckets = 64;
	f->buckets = calloc(f->n_buckets, sizeof(*f->buckets));
	f->n_ups = o->config->n_upstreams;
	f->ups = calloc(f->n_ups ? f->n_ups : 1, sizeof(*f->ups));
	if (!f->cfg.debug_dirs || !f->cfg.upstreams || !f->user_agent || !f->buckets || !f->ups) {
		sym_error_set(err, SYM_E_NOMEM, "fetcher: out of memory");
		svc_fetcher_destroy(f);
		return NULL;
	}
	for (size_t i = 0; i < f->n_ups; i++) {
		f->ups[i].url = f->cfg.upstreams[i];
		f->ups[i].st.url = f->ups[i].url;
	}
	f->http = svc_http_create(f->base, f->user_agent);
	f->pool = svc_pool_create(f->base, f->cfg.fetch_workers);
	if (!f->http || !f->pool) {
		sym_error_set(err, SYM_E_NOMEM, "fetcher: cannot start HTTP client or workers");
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
	/* Stop downloads (no callbacks) and the workers (their jobs are dropped). */
	svc_http_destroy(f->http);
	f->http = NULL;
	svc_pool_destroy(f->pool);
	f->pool = NULL;
	/* Owe every external waiter an answer; internal (alt) waiters are dropped
	 * since their flight is being destroyed as well. */
	for (size_t i = 0; f->buckets && i < f->n_buckets; i++) {
		while (f->buckets[i]) {
			flight *fl = f->buckets[i];
			f->buckets[i] = fl->hnext;
			svc_fetch_result res;
			memset(&res, 0, sizeof(res));
			res.build_id = fl->id;
			res.status = SVC_FETCH_ERROR;
			snprintf(res.error, sizeof(res.error), "fetcher shutting down");
			for (waiter *w = fl->waiters; w; w = w->next)
				if (w->cb != alt_done)
					w->cb(&res, w->arg);
			stor_unpin(f->store, fl->id.bytes, fl->id.len);
			flight_free(fl);
		}
	}
	free(f->buckets);
	free(f->ups);
	for (size_t i = 0; f->cfg.debug_dirs && i < f->cfg.n_debug_dirs; i++)
		free(f->cfg.debug_dirs[i]);
	for (size_t i = 0; f->cfg.upstreams && i < f->cfg.n_upstreams; i++)
		free(f->cfg.upstreams[i]);
	free(f->cfg.debug_dirs);
	free(f->cfg.upstreams);
	free(f->user_agent);
	free(f);
}

void svc_fetcher_get_stats(const svc_fetcher *f, svc_fetcher_stats *out)
{
	*out = f->st;
	out->in_flight = f->n_flights;
	out->downloads = (size_t)f->active;
	out->queued = f->n_queued;
}

size_t svc_fetcher_get_upstreams(const svc_fetcher *f, svc_upstream_stats *out, size_t max)
{
	int64_t now = now_mono_ms();
	size_t n = f->n_ups < max ? f->n_ups : max;
	for (size_t i = 0; i < n; i++) {
		const upstream *u = &f->ups[i];
		out[i] = u->st;
		out[i].breaker = breaker_state(u, now);
		out[i].breaker_remaining_ms = out[i].breaker == SVC_BREAKER_OPEN ? u->open_until - now : 0;
		out[i].active = u->active;
	}
	return n;
}
