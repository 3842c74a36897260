/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_fetch_impl: what the files of service/fetch/ share; not for use outside
 * this room (its public header is svc_fetcher.h).
 *
 * A fetch of one build ID is a "flight", a small state machine on the event
 * loop:
 *
 *   start -> store check -> sources (worker) -> upstream 0..n (HTTP, then a
 *   worker checks and stores the body) -> [alt fetch] -> done
 *
 * and, when the debuginfo walk comes back empty, the same sources/upstream walk
 * for the executable. Every transition runs on the loop thread; workers only
 * run a job's work and hand the job back. The files, by noun:
 *
 *   svc_fetcher.c         the object: create, destroy, start, stats
 *   svc_fetch_flight.c    the flight table (build ID -> flight), waiters, finish
 *   svc_fetch_walk.c      the walk: store check, sources, upstreams, outcomes
 *   svc_fetch_job.c       worker jobs: find in the sources, check and store a file
 *   svc_fetch_download.c  one upstream request and what its answer means
 *   svc_fetch_queue.c     download slots and the bounded queue of flights waiting
 *   svc_fetch_breaker.c   the circuit breaker of one upstream server
 *   svc_fetch_url.c       upstream URLs, built whole
 *   svc_fetch_source.c    source files relayed from the upstreams (not stored)
 *   svc_fetch_trace.c     each source's last outcome per build ID (status pages)
 *   svc_fetch_metrics.c   the fetcher's Prometheus families
 *   svc_upstream_http.c   the libcurl-multi driver on the event loop
 */
#ifndef SVC_FETCH_IMPL_H
#define SVC_FETCH_IMPL_H

#include <event2/util.h>

#include "base/base_hash_map.h"
#include "service/core/svc_error.h"
#include "service/core/svc_flight.h"
#include "service/core/svc_pool.h"
#include "service/fetch/svc_fetcher.h"
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
/* An upstream request ended (not 200: a 200 is noted when its body is checked). */
void svc_trace_http(svc_fetch_flight *fl, const svc_http_result *res);

/* ---- the fetcher's objects ---- */

typedef struct svc_upstream {
	char *url;               /* for display: userinfo redacted (svc_url_display) */
	const char *fetch_url;   /* as configured, credentials included: requests only */
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
} svc_fetch_waiter;

typedef struct svc_fetch_flight svc_fetch_flight;

/* A fetch of one build ID (svc_flight first: its build ID and waiters, kept
 * by the single-flight table of service/core/svc_flight.h). */
struct svc_fetch_flight {
	svc_flight base;
	svc_fetcher *f;
	char hex[SYM_BUILD_ID_HEX_MAX];
	svc_fetch_kind kind;
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
	bool exec_probe;         /* asks this upstream for an executable it may not serve */
	/* Outcome of the walk in progress, and of the debuginfo walk once done. */
	bool any_error, too_large;
	char walk_error[SYM_ERROR_MSG_MAX];
	svc_fetch_status dbg_status;
	char dbg_error[SYM_ERROR_MSG_MAX];
	struct event *timer;     /* kick, backoff */
	svc_http_req *req;
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

struct svc_fetcher {
	struct event_base *base;
	stor_db *store;
	svc_config cfg;          /* copy; lists owned */
	svc_http *http;
	svc_pool *pool;
	svc_log_fn log;
	void *log_arg;
	src_source **sources;    /* searched in order before the upstreams */
	size_t n_sources;
	bool owns_sources;       /* made from cfg.debug_dirs (else the caller's) */
	svc_upstream *ups;
	size_t n_ups;
	svc_flight_table flights; /* build ID -> its flight */
	svc_fetch_queue queue;
	struct event *defer_timer; /* moves queued flights off busy servers */
	char *spool_dir;         /* DATA/tmp: downloads land here; NULL: in memory */
	svc_fetch_trace trace;   /* each source's last outcome per build ID */
	int active;              /* downloads in flight */
	bool shutting_down;
	svc_fetch_source_req *source_reqs;  /* source relays in flight (svc_fetch_source.c) */
	svc_fetcher_stats st;
	char *user_agent;
};

/* ---- svc_fetch_source.c ---- */

/* Shutdown (after the HTTP driver is gone): every relay answered ERROR. */
void svc_fetch_source_abort_all(svc_fetcher *f);

/* ---- svc_fetcher.c ---- */

void svc_fetch_log(svc_fetcher *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- the flight table (svc_fetch_flight.c) ---- */

svc_fetch_flight *svc_fetch_flight_find(svc_fetcher *f, const sym_build_id *id);
/* A new flight of id with its first waiter, in the table, pinned, its store
 * check scheduled. NULL when out of memory (w is then still the caller's). */
svc_fetch_flight *svc_fetch_flight_create(svc_fetcher *f, const sym_build_id *id,
					  svc_fetch_kind kind, svc_fetch_waiter *w);
void svc_fetch_flight_add_waiter(svc_fetch_flight *fl, svc_fetch_waiter *w);
/* Runs the flight's timer after delay_ms (the walk goes on from there). */
void svc_fetch_flight_schedule(svc_fetch_flight *fl, int64_t delay_ms);
/* Out of the table, the waiters called, the pin dropped, freed. */
void svc_fetch_flight_finish(svc_fetch_flight *fl);
/* Shutdown: every flight's external waiters get SVC_FETCH_ERROR, all freed. */
void svc_fetch_flight_abort_all(svc_fetcher *f, const char *why);

/* ---- the walk (svc_fetch_walk.c) ---- */

/* The flight's timer: the store check first, then ask again after a backoff. */
void svc_walk_on_timer(svc_fetch_flight *fl);
void svc_walk_start(svc_fetch_flight *fl, stor_kind want);
/* Asks the next upstream that may be asked, or ends the walk. */
void svc_walk_next(svc_fetch_flight *fl);
/* Moves the cursor to the next server: the following one, and past the last,
 * the deferred ones in order (fl->server == n_ups when none is left). */
void svc_walk_advance(svc_fetch_flight *fl);
/* Keeps the first error of a walk (the most telling: the best server's). */
void svc_walk_note(svc_fetch_flight *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For a walk of the executable: the expiry and text that say why there is no
 * debug info, stored with it. */
void svc_walk_exec_meta(const svc_fetch_flight *fl, stor_meta *m);
/* The file is in the store: the result, then the dwz file when it needs one. */
void svc_walk_succeed(svc_fetch_flight *fl, stor_kind kind, uint64_t size, const char *source,
		      const sym_elf_info *info);
/* An executable walk at an upstream learned to serve none (SVC_FETCH_EXEC_LEARN);
 * skip: noted, and the walk's server moves on (the caller goes on from there). */
bool svc_walk_executable_unwanted(const svc_fetch_flight *fl);
void svc_walk_skip_executable(svc_fetch_flight *fl);
/* The waiter callback of a dwz file's fetch. */
void svc_walk_alt_done(const svc_fetch_result *res, void *arg);

/* ---- worker jobs (svc_fetch_job.c) ---- */

typedef enum svc_job_type { SVC_JOB_LOCAL, SVC_JOB_STORE } svc_job_type;

/* Work for a worker thread: find in the sources and/or check and store a file. */
typedef struct svc_fetch_job {
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
	size_t asked;            /* JOB_LOCAL: sources asked */
	svc_trace_row *per_source; /* JOB_LOCAL: the outcome of each (n_sources) */
	sym_errc check;          /* src_check_file */
	stor_errc stored;
	stor_kind kind;
	sym_elf_info info;
	char error[SYM_ERROR_MSG_MAX];
} svc_fetch_job;

/* A zeroed job; NULL when out of memory. */
svc_fetch_job *svc_job_new(svc_job_type type, stor_kind want);
/* Hands the job to a worker; false (job freed) when that cannot be done. */
bool svc_job_submit(svc_fetch_flight *fl, svc_fetch_job *j);

static inline src_kind svc_fetch_src_kind(stor_kind k)
{
	return k == STOR_KIND_DEBUGINFO ? SRC_KIND_DEBUGINFO : SRC_KIND_EXECUTABLE;
}

static inline stor_kind svc_fetch_stor_kind(src_kind k)
{
	return k == SRC_KIND_DEBUGINFO ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
}

/* ---- downloads (svc_fetch_download.c, svc_fetch_queue.c) ---- */

/* Starts the request of fl->server now (a slot is free). */
void svc_download_start(svc_fetch_flight *fl);

void svc_queue_init(svc_fetch_queue *q, size_t max);
/* Appends; false when the queue holds max flights already. */
bool svc_queue_push(svc_fetch_queue *q, svc_fetch_flight *fl);
/* Takes fl out (no-op when it is not queued). */
void svc_queue_remove(svc_fetch_queue *q, svc_fetch_flight *fl);
/* Starts fl's request when a slot is free, else queues it; when the queue is
 * full, refuses: SVC_E_OVERLOADED, and the caller ends the walk. */
svc_errc svc_slot_request(svc_fetch_flight *fl, svc_error *err);
/* Starts queued flights whose server has room, oldest first. */
void svc_slot_dispatch(svc_fetcher *f);
/* Should fl put its server off (every slot busy for --upstream-busy-defer,
 * and another server after it)? */
bool svc_slot_should_defer(const svc_fetch_flight *fl, int64_t now_ms);
/* The download of a server started or ended: its busy time. */
void svc_slot_busy_update(svc_fetcher *f, svc_upstream *u);
/* The request options of a GET to u under the fetcher's settings. */
svc_http_opts svc_slot_http_opts(const svc_fetcher *f, const svc_upstream *u, int64_t total_ms,
				 uint64_t max_size);
/* Starts a GET to u, counted in the fetcher's and u's active requests, u's
 * breaker and its request count; NULL when it cannot start (then only the
 * request count keeps it, as an attempt). */
svc_http_req *svc_slot_get(svc_fetcher *f, svc_upstream *u, const char *url,
			   const svc_http_opts *o, svc_http_done_fn done, void *arg);
/* A request svc_slot_get started has ended (its callback ran). */
void svc_slot_release(svc_fetcher *f, svc_upstream *u);
/* The fetcher's defer timer: queued flights move off busy servers. */
void svc_slot_defer_cb(evutil_socket_t fd, short what, void *arg);

/* ---- URLs (svc_fetch_url.c) ---- */

/* Longest URL we build; longer ones are refused, never cut. */
#define SVC_FETCH_URL_MAX 65536

/*
 * "{base}/buildid/{hex}/{what}" in a malloc'ed string of exactly its length;
 * NULL with SVC_E_INVALID when it would be over SVC_FETCH_URL_MAX bytes, or
 * SVC_E_NOMEM.
 */
char *svc_fetch_url(const char *base, const char *hex, const char *what, svc_error *err);

#endif
