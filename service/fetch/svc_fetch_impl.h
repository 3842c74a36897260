/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_fetch_impl: what the files of service/fetch/ share; not for use outside
 * this room (its public header is svc_fetcher.h).
 *
 * A fetch of one build ID under one policy is a "flight", a small state
 * machine on the event loop. One driver, svc_fetch_run (svc_fetch_run.c),
 * names its stages in order and moves it from one to the next:
 *
 *   STORE -> SOURCES (worker) -> PROVIDERS -> REQUEST (a provider) -> CHECK
 *   (worker: check and store) -> [EXHAUSTED: the executable walk, from
 *   SOURCES again] -> [ALT: the dwz file's flight] -> DONE
 *
 * Every transition runs on the loop thread; workers only run a job's work and
 * hand the job back. The stage files are leaves: each does one stage's work
 * and returns the next stage; none calls the driver or another stage file
 * that calls it (the driver's callbacks reach them as function pointers).
 * The files, by noun:
 *
 *   svc_fetcher.c           the object: create, destroy, start, stats
 *   svc_fetch_sources.c     the ordered source list, built from the config
 *   svc_fetch_run.c         the stage driver, and the callbacks that resume it
 *   svc_fetch_flight.c      the flight table ((build ID, policy) -> flight), finish
 *   svc_fetch_walk.c        stages STORE, PROVIDERS (which one next), EXHAUSTED;
 *                           the result of a success
 *   svc_fetch_job.c         stages SOURCES and CHECK: worker jobs and their outcome
 *   svc_fetch_download.c    stage REQUEST: one provider request and its answer
 *   svc_fetch_queue.c       download slots and the bounded queue of flights waiting
 *   svc_fetch_breaker.c     the circuit breaker of one upstream
 *   svc_fetch_source.c      source files relayed from the upstreams (not stored)
 *   svc_fetch_trace.c       each source's last outcome per build ID (status pages)
 *   svc_fetch_metrics.c     the fetcher's Prometheus families
 *   svc_fetch_log.c         the fetcher's log lines
 *   svc_provider_table.c    the table of provider kinds (one row per protocol)
 *   svc_provider_debuginfod.c  debuginfod over libcurl: the first provider
 *   svc_upstream_http.c     the libcurl-multi driver on the event loop
 */
#ifndef SVC_FETCH_IMPL_H
#define SVC_FETCH_IMPL_H

#include <event2/event.h>
#include <event2/util.h>

#include "base/base_hash_map.h"
#include "service/core/svc_error.h"
#include "service/core/svc_flight.h"
#include "service/core/svc_pool.h"
#include "service/fetch/svc_fetcher.h"
#include "service/fetch/svc_provider_impl.h"
#include "service/fetch/svc_upstream_http.h"
#include "source/src_source.h"

#define SVC_FETCH_BACKOFF_MAX_MS 10000

/* ---- the circuit breaker of one server (svc_fetch_breaker.c) ---- */

typedef struct svc_breaker {
	int consecutive_failures;
	int64_t open_until;      /* monotonic ms; 0 = closed */
	int64_t opened_at;       /* monotonic ms of the last opening (0: never) */
	bool probing;            /* half-open: the one probe is in flight */
	/* The last failures (a ring, newest at recent_next - 1), and those that
	 * opened the breaker last, for status pages and error texts. */
	svc_breaker_failure_note recent[SVC_BREAKER_NOTES];
	unsigned n_recent, recent_next;
	svc_breaker_failure_note opened_by[SVC_BREAKER_NOTES];
	unsigned n_opened_by;
} svc_breaker;

svc_breaker_state svc_breaker_state_at(const svc_breaker *b, int64_t now_ms);
/* May a request go to the server now? */
bool svc_breaker_allows(const svc_breaker *b, int64_t now_ms);
/* A request starts: when half-open, it is the probe. */
void svc_breaker_request(svc_breaker *b, int64_t now_ms);
/* The request ended (before its outcome is counted). */
void svc_breaker_request_end(svc_breaker *b);
/* The server answered; true when that closed an open breaker. */
bool svc_breaker_success(svc_breaker *b);
/* The server failed; true when that opened the breaker (for cooldown_ms). A
 * threshold of 0 never opens it from closed. */
bool svc_breaker_failure(svc_breaker *b, int64_t now_ms, int threshold, int64_t cooldown_ms);
/* Notes why a request failed (before svc_breaker_failure, so that an opening
 * keeps it among the failures that opened the breaker). */
void svc_breaker_note(svc_breaker *b, int64_t now_ms, const char *why);
/* The notes oldest first into out (SVC_BREAKER_NOTES); returns the count. */
unsigned svc_breaker_recent(const svc_breaker *b, svc_breaker_failure_note *out);
/* "open since Ns after N failures in a row (last: why)" for error texts. */
void svc_breaker_describe(const svc_breaker *b, int64_t now_ms, char *out, size_t cap);

/* ---- each source's last outcome per build ID (svc_fetch_trace.c) ---- */

typedef struct svc_fetch_flight svc_fetch_flight;

typedef struct svc_trace_row {
	int64_t at_ms;           /* Unix ms; 0: never asked */
	uint8_t outcome;         /* svc_source_outcome_kind */
	char error[160];
} svc_trace_row;

/* One build ID: two rows (debuginfo, executable) per source, then per upstream. */
typedef struct svc_trace_rec {
	sym_build_id id;
	svc_trace_row rows[];
} svc_trace_rec;

typedef const sym_build_id *svc_trace_key;

static inline uint64_t svc_trace_hash(const svc_trace_key *k)
{
	return sym_build_id_hash(*k);
}

static inline bool svc_trace_eq(const svc_trace_key *a, const svc_trace_key *b)
{
	return sym_build_id_equal(*a, *b);
}

BASE_HASH_MAP(svc_trace_map, svc_trace_key, svc_trace_rec *, svc_trace_hash, svc_trace_eq)

typedef struct svc_fetch_trace {
	svc_trace_map map;
	svc_trace_rec **ring;    /* insertion order: the oldest goes first */
	size_t head, len, cap;
} svc_fetch_trace;

bool svc_trace_init(svc_fetch_trace *t, size_t cap);
void svc_trace_deinit(svc_fetch_trace *t);
/* Notes the outcome of source slot (local sources 0..n_sources-1, then the
 * upstreams) for the flight's build ID and current want. */
void svc_trace_note(svc_fetch_flight *fl, size_t slot, svc_source_outcome_kind oc,
		    const char *error);
/* A provider's answer, classified (FOUND is noted when its file is checked);
 * also what it teaches about the server (whether it serves executables). */
void svc_trace_answer(svc_fetch_flight *fl, const svc_provider_answer *a);

/* ---- the fetcher's objects ---- */

/* One upstream of the fetcher, in the order they are asked: a provider (its
 * protocol's ops, svc_provider_impl.h) and what the walk keeps of it. */
typedef struct svc_upstream {
	char *url;               /* for display: userinfo redacted (svc_url_display) */
	svc_provider *prov;      /* asks it (the configured URL, credentials included) */
	bool peer;               /* of the peer tier: X-Symbolizer-Peer, its 404 is final */
	int active;
	int64_t busy_since;      /* monotonic ms since every slot is taken; 0: not */
	uint32_t exec_skips;     /* executable walks that skipped it */
	svc_breaker breaker;
	svc_upstream_stats st;
} svc_upstream;

/* One caller waiting on a flight (svc_flight_waiter first: the table's part). */
typedef struct svc_fetch_waiter {
	svc_flight_waiter base;
	svc_fetch_cb cb;
	void *arg;
	bool internal;           /* a flight waiting for its dwz file's flight */
} svc_fetch_waiter;

/* The stages of a flight, in the order the driver runs them (svc_fetch_run.c). */
typedef enum svc_fetch_stage {
	SVC_STAGE_STORE = 0,     /* the store's record: answered, or a walk starts */
	SVC_STAGE_SOURCES,       /* the sources in order, on a worker */
	SVC_STAGE_PROVIDERS,     /* the next upstream that may be asked */
	SVC_STAGE_REQUEST,       /* a slot is the flight's: the provider's request */
	SVC_STAGE_CHECK,         /* a provider's file: checked and stored on a worker */
	SVC_STAGE_EXHAUSTED,     /* a walk found nothing: the executable walk, or a negative */
	SVC_STAGE_ALT,           /* the dwz file, by its own flight */
	SVC_STAGE_DONE,          /* the waiters get the result */
	SVC_STAGE_WAIT,          /* for a worker, a request, a slot, a timer or the dwz flight */
} svc_fetch_stage;

typedef struct svc_fetch_job svc_fetch_job;

/* A fetch of one build ID under one policy (svc_flight first: its build ID and
 * waiters, kept by the single-flight table of service/core/svc_flight.h). */
struct svc_fetch_flight {
	svc_flight base;
	svc_fetcher *f;
	char hex[SYM_BUILD_ID_HEX_MAX];
	svc_fetch_kind kind;
	svc_fetch_policy policy;
	svc_fetch_stage stage;   /* the driver's */
	svc_fetch_stage resume;  /* where the flight's timer resumes it */
	svc_fetch_flight *qnext;       /* download queue */
	bool queued;
	stor_kind want;          /* what the current walk looks for; NONE before the store check */
	bool holding_exec;       /* the store holds the executable; look for debuginfo only */
	size_t server;
	int attempt;
	int64_t deadline;        /* of the attempts on this server (monotonic ms) */
	uint64_t deferred;       /* servers put off while busy, asked after the others */
	bool revisit;            /* the walk is past the last server, on the deferred ones */
	char *path_hint;         /* a dwz file: where the file needing it says it is */
	char *alt_where;         /* the dwz file of this flight's file: its path, if known */
	bool alt_hint_read;      /* ALT: the stored file's link was read for alt_where */
	bool exec_probe;         /* asks this upstream for an executable it may not serve */
	/* Outcome of the walk in progress, and of the debuginfo walk once done. */
	bool any_error, too_large;
	bool any_pending;        /* a source's listing is incomplete: PENDING, not NOT_FOUND */
	char walk_error[SYM_ERROR_MSG_MAX];
	svc_fetch_status dbg_status;
	char dbg_error[SYM_ERROR_MSG_MAX];
	struct event *timer;     /* kick, backoff */
	svc_provider_req *req;   /* the request in flight, of ups[server] */
	svc_fetch_job *job;      /* CHECK: the job the driver hands a worker next */
	bool job_running;        /* a worker holds a job of this flight */
	svc_fetch_flight *alt_wait;    /* the flight of the dwz file this one waits for */
	svc_fetch_result res;
};

/* Flights waiting for a download slot, oldest first, at most max of them. */
typedef struct svc_fetch_queue {
	svc_fetch_flight *head, *tail;
	size_t len, max;
	bool full_logged;        /* a refusal was logged; cleared when room is made */
} svc_fetch_queue;

/* Flight tables: one per policy, so a flight is keyed by (build ID, policy). */
#define SVC_FETCH_POLICIES 8

struct svc_fetcher {
	struct event_base *base;
	stor_db *store;
	svc_config cfg;          /* copy; lists owned */
	svc_http *http;          /* the libcurl transport the providers share */
	svc_pool *pool;
	svc_log_fn log;
	void *log_arg;
	src_source **sources;    /* searched in order before the upstreams */
	size_t n_sources;
	size_t n_owned;          /* the first n_owned (the debug dirs') are the fetcher's */
	svc_upstream *ups;       /* the peer tier, then the upstreams */
	size_t n_ups;
	svc_flight_table flights[SVC_FETCH_POLICIES]; /* build ID -> its flight, per policy */
	svc_fetch_queue queue;
	struct event *defer_timer; /* moves queued flights off busy servers */
	char *spool_dir;         /* DATA/tmp: downloads land here; NULL: in memory */
	svc_fetch_trace trace;   /* each source's last outcome per build ID */
	int active;              /* downloads in flight */
	bool shutting_down;
	svc_fetch_source_req *source_reqs;  /* source relays in flight (svc_fetch_source.c) */
	svc_fetcher_stats st;
	char *user_agent;
	struct svc_s3 *s3;       /* the shared S3 tier (svc_s3.h); NULL: none */
	svc_fetch_s3_read *s3_reads; /* svc_fetcher_s3_read's in flight */
};

/* The index of a policy's flight table. */
static inline unsigned svc_fetch_policy_index(svc_fetch_policy p)
{
	return (p.upstreams ? 1u : 0u) | (p.peers ? 2u : 0u) | (p.remember_negative ? 4u : 0u);
}

/* May a flight under policy p ask upstream u? */
static inline bool svc_fetch_policy_allows(svc_fetch_policy p, const svc_upstream *u)
{
	return u->peer ? p.peers : p.upstreams;
}

/* ---- the source list (svc_fetch_sources.c) ---- */

/* The fetcher's sources (the config's debug dirs, then the caller's) and its
 * upstreams (the peer tier, then the upstreams, each a provider chosen by its
 * URL's scheme); false with err set (an unknown scheme names itself). */
bool svc_fetch_sources_build(svc_fetcher *f, const svc_fetcher_options *o, svc_error *err);
void svc_fetch_sources_free(svc_fetcher *f);

/* ---- svc_fetch_source.c ---- */

/* Shutdown: every relay's request cancelled, every relay answered ERROR. */
void svc_fetch_source_abort_all(svc_fetcher *f);

/* ---- svc_fetch_s3.c ---- */

/* Creates f->s3 from f->cfg.s3 and checks the bucket; false with err set. */
bool svc_fetch_s3_start(svc_fetcher *f, svc_error *err);
/* Every S3 read in flight answered NULL ("fetcher shutting down"), before
 * the multi handle goes. */
void svc_fetch_s3_reads_abort(svc_fetcher *f);
/* Write-behind of a file stored from source (not S3 itself); any thread. */
void svc_fetch_s3_behind(svc_fetcher *f, const sym_build_id *id, stor_kind kind,
			 const char *source, const uint8_t *data, size_t size);

/* ---- svc_fetch_log.c ---- */

void svc_fetch_log(svc_fetcher *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the stage driver (svc_fetch_run.c) ---- */

/* Runs fl's stages from fl->stage until one waits or the flight is done. */
void svc_fetch_run(svc_fetch_flight *fl);
/* A flight's timer: resumes it at fl->resume. */
void svc_fetch_on_timer(evutil_socket_t fd, short what, void *arg);
/* Starts queued flights whose server has room, oldest first. */
void svc_fetch_dispatch(svc_fetcher *f);
/* The fetcher's defer timer: queued flights move off busy servers. */
void svc_fetch_on_defer(evutil_socket_t fd, short what, void *arg);

/* ---- the flight table (svc_fetch_flight.c) ---- */

svc_fetch_flight *svc_fetch_flight_find(svc_fetcher *f, const sym_build_id *id,
					svc_fetch_policy policy);
/* w joins the flight of (id, policy), made when there is none (in the table,
 * pinned, its timer (on_timer) set to run the store check); counted in the
 * fetcher's started and joined. NULL when out of memory (w is then still the
 * caller's). */
svc_fetch_flight *svc_fetch_flight_get(svc_fetcher *f, const sym_build_id *id,
				       svc_fetch_kind kind, svc_fetch_policy policy,
				       svc_fetch_waiter *w, event_callback_fn on_timer);
/* Resumes the flight at stage after delay_ms (its timer; the stage is WAIT now). */
svc_fetch_stage svc_fetch_flight_resume_in(svc_fetch_flight *fl, svc_fetch_stage at,
					   int64_t delay_ms);
/* Out of the table, the waiters called, the pin dropped, freed. */
void svc_fetch_flight_finish(svc_fetch_flight *fl);
/* Shutdown: every flight's external waiters get SVC_FETCH_ERROR, all freed. */
void svc_fetch_flight_abort_all(svc_fetcher *f, const char *why);
/* Any flight of id in flight, whatever its policy? */
bool svc_fetch_flight_any(const svc_fetcher *f, const sym_build_id *id);
size_t svc_fetch_flight_count(const svc_fetcher *f);

/* ---- the walk (svc_fetch_walk.c): stages STORE, PROVIDERS, EXHAUSTED ---- */

/* STORE: answers from the store's record (DONE, or ALT for a dwz file), or
 * starts the debuginfo walk (SOURCES). */
svc_fetch_stage svc_walk_store_check(svc_fetch_flight *fl);
/* A walk for want starts (cursor at the first server): SOURCES. */
svc_fetch_stage svc_walk_begin(svc_fetch_flight *fl, stor_kind want);
/* PROVIDERS: moves the cursor to the next upstream that may be asked now
 * (skipping, and noting, those the policy, the breaker, a busy spell or what
 * the server taught exclude); false when none is left. */
bool svc_walk_pick(svc_fetch_flight *fl);
/* The download queue is full: the walk ends here (noted, logged once). */
void svc_walk_queue_full(svc_fetch_flight *fl, const char *why);
/* EXHAUSTED: the executable walk (SOURCES), or the negative result (DONE). */
svc_fetch_stage svc_walk_exhausted(svc_fetch_flight *fl);
/* Moves the cursor to the next server: the following one, and past the last,
 * the deferred ones in order (fl->server == n_ups when none is left). */
void svc_walk_advance(svc_fetch_flight *fl);
/* Ends the walk's tour of the upstreams (the next PROVIDERS finds none). */
void svc_walk_stop(svc_fetch_flight *fl);
/* Keeps the first error of a walk (the most telling: the best server's). */
void svc_walk_note(svc_fetch_flight *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How long a negative result of status st is remembered under fl's policy. */
int64_t svc_walk_ttl(const svc_fetch_flight *fl, svc_fetch_status st);
/* For a walk of the executable: the expiry and text that say why there is no
 * debug info, stored with it. */
void svc_walk_exec_meta(const svc_fetch_flight *fl, stor_meta *m);
/* The file is in the store: the result; ALT when it needs its dwz file, else DONE. */
svc_fetch_stage svc_walk_succeed(svc_fetch_flight *fl, stor_kind kind, uint64_t size,
				 const char *source, const sym_elf_info *info);
/* An executable walk at an upstream learned to serve none (SVC_FETCH_EXEC_LEARN);
 * skip: noted, and the walk's server moves on. */
bool svc_walk_executable_unwanted(const svc_fetch_flight *fl);
void svc_walk_skip_executable(svc_fetch_flight *fl);

/* ---- worker jobs (svc_fetch_job.c): stages SOURCES and CHECK ---- */

/* LOCAL: ask the sources; STORE: check and store a download; ALT_HINT: read
 * where the stored file's dwz link points (its path is not in the store). */
typedef enum svc_job_type { SVC_JOB_LOCAL, SVC_JOB_STORE, SVC_JOB_ALT_HINT } svc_job_type;

/* Work for a worker thread: find in the sources and/or check and store a file. */
struct svc_fetch_job {
	svc_fetch_flight *fl;
	svc_job_type type;
	stor_kind want;
	/* in */
	void *data;              /* JOB_STORE: the downloaded body (owned) */
	int fd;                  /* JOB_STORE: the spooled body (owned), or -1 */
	bool mapped;             /* data is fd's mapping */
	size_t size;
	char path_hint[SRC_PATH_MAX]; /* JOB_LOCAL: also look here (a dwz file's path) */
	char alt_where[SRC_PATH_MAX]; /* out: where the found file's dwz file is */
	char source[STOR_SOURCE_MAX];
	stor_meta meta_in;       /* neg_expiry/last_error for an executable */
	/* out */
	src_status found;        /* JOB_LOCAL */
	bool pending;            /* JOB_LOCAL: a source answered SRC_PENDING */
	size_t asked;            /* JOB_LOCAL: sources asked */
	svc_trace_row *per_source; /* JOB_LOCAL: the outcome of each (n_sources) */
	sym_errc check;          /* src_check_file */
	stor_errc stored;
	stor_kind kind;
	sym_elf_info info;
	char error[SYM_ERROR_MSG_MAX];
};

/* SOURCES: the job that asks the sources for fl's want; NULL when there are
 * no sources (or no memory): the walk goes on to the upstreams. */
svc_fetch_job *svc_job_for_sources(svc_fetch_flight *fl);
/* CHECK: the job that checks and stores a provider's file (body or fd taken
 * from the answer); NULL when out of memory. */
svc_fetch_job *svc_job_for_file(svc_fetch_flight *fl, svc_provider_answer *a);
/* ALT: the job that reads the stored file's .gnu_debugaltlink (an absolute
 * path) into alt_where, for a file answered from the store whose dwz file is
 * not there (stored before by a route that left it behind). */
svc_fetch_job *svc_job_for_alt_hint(svc_fetch_flight *fl);
/* Hands the job to a worker, done back on the loop; false (job freed) when
 * that cannot be done. */
bool svc_job_submit(svc_fetch_flight *fl, svc_fetch_job *j, void (*done)(void *, bool));
/* The job came back: its outcome noted, the next stage. Frees j. */
svc_fetch_stage svc_job_outcome(svc_fetch_flight *fl, svc_fetch_job *j);
/* A job that comes back after its flight was dropped (shutdown). */
void svc_job_free(svc_fetch_job *j);
/* The job could not be handed to a worker: noted; the next stage. */
svc_fetch_stage svc_job_not_submitted(svc_fetch_flight *fl, svc_job_type type);

static inline src_kind svc_fetch_src_kind(stor_kind k)
{
	return k == STOR_KIND_DEBUGINFO ? SRC_KIND_DEBUGINFO : SRC_KIND_EXECUTABLE;
}

static inline stor_kind svc_fetch_stor_kind(src_kind k)
{
	return k == SRC_KIND_DEBUGINFO ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
}

/* ---- one provider request (svc_fetch_download.c): stage REQUEST ---- */

/* Starts the request of fl->server now (a slot is the flight's): WAIT, with
 * done called back on the loop; or, when it cannot start, noted and resumed
 * at PROVIDERS from the flight's timer. */
svc_fetch_stage svc_download_start(svc_fetch_flight *fl, svc_http_done_fn done);
/* The request ended: the slot given back, the answer classified by the
 * provider, noted; the next stage (CHECK with fl->job set for a file). */
svc_fetch_stage svc_download_done(svc_fetch_flight *fl, svc_http_result *res);

/* ---- slots and the queue (svc_fetch_queue.c) ---- */

void svc_queue_init(svc_fetch_queue *q, size_t max);
/* Appends; false when the queue holds max flights already. */
bool svc_queue_push(svc_fetch_queue *q, svc_fetch_flight *fl);
/* Takes fl out (no-op when it is not queued). */
void svc_queue_remove(svc_fetch_queue *q, svc_fetch_flight *fl);

typedef enum svc_slot_answer {
	SVC_SLOT_NOW = 0,        /* a slot is free: start the request */
	SVC_SLOT_QUEUED,         /* the flight waits in the queue */
	SVC_SLOT_FULL,           /* the queue is full: refused (err says so) */
} svc_slot_answer;

/* A slot for fl's server now, or a place in the queue. */
svc_slot_answer svc_slot_request(svc_fetch_flight *fl, svc_error *err);
/* Has upstream u a free slot (and the fetcher)? */
bool svc_slot_free(const svc_fetcher *f, const svc_upstream *u);
/* Should fl put its server off (every slot busy for --upstream-busy-defer,
 * and another server after it)? */
bool svc_slot_should_defer(const svc_fetch_flight *fl, int64_t now_ms);
/* Wakes the defer timer when the first queued flight could move on. */
void svc_slot_arm_defer(svc_fetcher *f);
/* Starts a request of u's provider, counted in the fetcher's and u's active
 * requests, u's breaker and its request count; NULL when it cannot start
 * (then only the request count keeps it, as an attempt). */
svc_provider_req *svc_slot_get(svc_fetcher *f, svc_upstream *u, const svc_provider_ask *ask,
			       svc_http_done_fn done, void *arg, svc_error *err);
/* A request svc_slot_get started has ended (its callback ran). */
void svc_slot_release(svc_fetcher *f, svc_upstream *u);

#endif
