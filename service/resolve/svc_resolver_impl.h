/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_resolver_impl: what the resolver's files share inside service/resolve/
 * (not for use outside it): the resolver object, a flight (one build ID and
 * kind of derived artifact on its way through the stages, on svc_flight's
 * single-flight table of its kind), the kinds, and the steps each file owns.
 *
 * One stage driver (svc_resolve_drive.c) names the stages in order and is
 * the only file that starts one or goes from one to the next; the stage files
 * are leaves: they do their step (on a worker, or with the fetcher's answer)
 * and say which stage comes next, and never call the driver back. Calls go
 * one way, down this list:
 *   svc_resolver.c           create/destroy, the API (memory, then a flight)
 *   svc_resolve_set.c        resolve-and-wait for a call (svc_resolve_set.h)
 *   svc_resolve_drive.c      THE STAGE DRIVER: memory cache -> the file's
 *                            resolution (derived kinds) -> store index ->
 *                            store file / fetch -> build -> done
 *   svc_resolve_kinds.c      the kinds of derived artifact: their steps, their caches
 *   svc_resolve_load.c       store index: the symbol index from the store (worker)
 *   svc_resolve_fetch.c      store file / fetch: the fetcher's answer, the file pinned
 *   svc_resolve_build.c      build: the symbol index build (worker)
 *   svc_resolve_layout.c     the layout index: from the store or built (worker)
 *   svc_resolve_budget.c     the memory budget of index builds, and their queue
 *   svc_resolve_failed.c     the index builds that failed, not retried at once
 *   svc_resolve_flight.c     a flight's record, its result, its end (cache it,
 *                            or remember it; the waiters called)
 *   svc_resolve_negative.c   the failures remembered for a while (LRU, by count)
 *   svc_resolve_describe.c   what the resolver knows of a build ID (status pages)
 *   svc_resolver_metrics.c   the resolver's metric families
 * Loop thread only, except the *_work functions, which run on a worker and
 * touch only their flight.
 */
#ifndef SVC_RESOLVER_IMPL_H
#define SVC_RESOLVER_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_hash_map.h"
#include "service/core/svc_flight.h"
#include "service/resolve/svc_resolver.h"

#define SVC_RESOLVE_NEG_TTL_CAP_MS 60000

/* The stages of a flight, in the order the driver runs them; a kind skips
 * those it has not (svc_resolve_kind). The memory cache comes first, before
 * there is a flight (svc_resolver.c). */
enum svc_resolve_stage {
	SVC_RESOLVE_STAGE_DEPEND,  /* a derived kind: the file's resolution (the symbol index) */
	SVC_RESOLVE_STAGE_LOAD,    /* the artifact stored for the build ID, loaded (worker) */
	SVC_RESOLVE_STAGE_FETCH,   /* the file: in the store, else from the sources (fetcher) */
	SVC_RESOLVE_STAGE_S3,      /* the index of the S3 tier: read on the fetcher's multi
				    * handle, then loaded (worker); else on to s3_then */
	SVC_RESOLVE_STAGE_BUILD,   /* the artifact built from the stored file, stored (worker) */
	SVC_RESOLVE_STAGE_DONE,    /* cached, or remembered; the waiters called */
};

struct svc_resolve_waiter {
	svc_flight_waiter fw;     /* first: the waiter of svc_flight */
	svc_resolve_cb cb;
	void *arg;
};

typedef struct svc_resolve_flight {
	svc_flight fl;            /* first: the flight of svc_flight (id, waiters) */
	svc_resolver *r;
	svc_artifact_kind kind;
	enum svc_resolve_stage stage;
	struct svc_resolve_waiter *dep;  /* DEPEND: waits on the file's resolution */
	bool from_executable;     /* the index is (to be) built from an executable alone */
	bool recheck;             /* started by a cache hit on such an index, to find debug info */
	bool pinned, alt_pinned;
	bool has_alt;
	sym_build_id alt_id;
	svc_fetch_status alt_status;
	/* Filled on the worker. */
	void *blob;               /* the index blob (malloc'ed, 8-byte aligned) */
	size_t blob_size;
	sym_index *index;         /* SYMBOLS */
	svc_string_rank strings;  /* SYMBOLS: its strings numbered (svc_resolve_rank) */
	void *artifact;           /* another kind's object (svc_resolve_kind.free_artifact) */
	svc_resolve_status status;
	char error[SYM_ERROR_MSG_MAX];
	double build_seconds;
	bool stored_rejected;
	stor_blob alt_blob;       /* the dwz file while a build runs */
	bool alt_held;
	int64_t file_time;        /* fetch_time of the stored file the build reads */
	/* The memory budget (svc_resolve_budget.c): the build's estimate, whether
	 * it holds it, whether the worker found no room (both written by the
	 * worker, read on the loop once it is done), and whether it waits in the
	 * queue (loop only). */
	uint64_t build_bytes;
	bool build_reserved, build_no_room, build_waiting;
	bool s3_index;               /* the index came from the S3 tier (no build) */
	bool s3_index_tried;         /* ... asked once per flight (after LOAD or FETCH) */
	bool s3_ask;                 /* LOAD: no index stored and no file held here */
	enum svc_resolve_stage s3_then; /* S3 found none: FETCH (after LOAD) or BUILD */
	svc_fetch_s3_read *s3_read;  /* S3: the read in flight (loop) */
	uint8_t *s3_body;            /* S3: the object read, for the worker to load */
	size_t s3_body_size;
	struct svc_resolve_flight *qnext;
} svc_resolve_flight;

/* A failure remembered until expiry_ms (monotonic). */
typedef struct svc_resolve_negative {
	sym_build_id id;
	struct svc_resolve_negative *prev, *next;  /* LRU: prev is older */
	svc_resolve_status status;
	char error[SYM_ERROR_MSG_MAX];
	int64_t expiry_ms;
	uint64_t catalogue;      /* svc_packages_generation when remembered */
} svc_resolve_negative;

/* Keyed by a pointer to the record's own id: 16 bytes a slot. */
typedef const sym_build_id *svc_resolve_neg_key;

static inline uint64_t svc_resolve_neg_hash(const svc_resolve_neg_key *k)
{
	return sym_build_id_hash(*k);
}

static inline bool svc_resolve_neg_eq(const svc_resolve_neg_key *a, const svc_resolve_neg_key *b)
{
	return sym_build_id_equal(*a, *b);
}

BASE_HASH_MAP(svc_resolve_neg_map, svc_resolve_neg_key, svc_resolve_negative *,
	      svc_resolve_neg_hash, svc_resolve_neg_eq)

/* An index build that failed: not tried again before retry_ms (monotonic),
 * unless the stored file changes (its fetch_time). */
typedef struct svc_resolve_failed {
	sym_build_id id;
	svc_resolve_status status;
	char error[SYM_ERROR_MSG_MAX];
	int64_t file_time;
	int64_t retry_ms;
	uint32_t failures;
} svc_resolve_failed;

typedef const sym_build_id *svc_resolve_failed_key;
BASE_HASH_MAP(svc_resolve_failed_map, svc_resolve_failed_key, svc_resolve_failed *,
	      svc_resolve_neg_hash, svc_resolve_neg_eq)

#define SVC_RESOLVE_FAILED_BACKOFF_MIN_MS (60 * 1000)
/* Longest wait before a failed build is tried again with the same file. */
#define SVC_RESOLVE_FAILED_BACKOFF_MAX_MS (60 * 60 * 1000)
/* Failed builds remembered at most (the oldest retry first goes). */
#define SVC_RESOLVE_FAILED_MAX 4096

/*
 * A kind of derived artifact: the stages it has and its steps. A new kind is
 * a file with its load and build steps (on a worker: from the store, or built
 * from the stored file and stored), a row in svc_resolve_kinds.c, and a value
 * of svc_artifact_kind.
 */
typedef struct svc_resolve_kind {
	/* Built from the file of the build ID's symbol resolution (DEPEND, no
	 * FETCH); else the kind fetches the file itself (the symbol index). */
	bool derived;
	/* Failures are remembered (svc_resolve_negative.c) and counted. */
	bool remembered;
	/* What a waiter is told the flight is doing, by stage. */
	const char *doing[SVC_RESOLVE_STAGE_DONE];
	/* LOAD, on a worker: the stored artifact into the flight (status OK), or nothing. */
	void (*load_work)(svc_resolve_flight *f);
	/* ... back on the loop: the next stage (DONE with it, else on). */
	enum svc_resolve_stage (*load_next)(svc_resolve_flight *f, bool cancelled);
	/* BUILD, on a worker: the artifact built from the stored file, stored. */
	void (*build_work)(svc_resolve_flight *f);
	/* ... back on the loop: DONE, or BUILD again when it waits for room (queued). */
	enum svc_resolve_stage (*build_next)(svc_resolve_flight *f, bool cancelled);
	/* The flight's artifact into the kind's cache (referenced), or NULL. */
	svc_index_entry *(*cache_put)(svc_index_cache *c, svc_resolve_flight *f);
	void (*free_artifact)(void *artifact);
} svc_resolve_kind;

extern const svc_resolve_kind svc_resolve_kinds[SVC_ARTIFACT_KINDS];

struct svc_resolver {
	svc_resolver_options o;
	svc_flight_table flights[SVC_ARTIFACT_KINDS];
	svc_index_cache *caches[SVC_ARTIFACT_KINDS];  /* SYMBOLS: o.cache; the others own */
	svc_resolve_neg_map negs;
	svc_resolve_negative *neg_lru, *neg_mru;
	size_t neg_max;
	svc_resolve_failed_map failed;
	/* The build memory budget: estimates held by running builds, and the
	 * flights waiting for room, oldest first (loop thread). */
	uint64_t build_max, build_in_use, build_peak;
	svc_resolve_flight *bq_head, *bq_tail;
	size_t bq_len;
	bool stopping;
	svc_resolver_stats st;
};

static inline svc_resolve_flight *svc_resolve_flight_of(svc_flight *f)
{
	return (svc_resolve_flight *)f;
}

/* svc_resolve_drive.c: the stage driver. */
/* Resolution with a waiter: memory, else the flight joined (started when none). */
svc_resolve_waiter *svc_resolve_join(svc_resolver *r, const sym_build_id *id,
				     svc_artifact_kind kind, svc_resolve_cb cb, void *arg,
				     svc_resolution *now);
/* Looking again for the debug info of an index built from an executable alone. */
void svc_resolve_recheck(svc_resolver *r, svc_index_entry *e);

/* svc_resolve_flight.c */
/* A new flight for id and kind at stage, in the table (NULL: out of memory). */
svc_resolve_flight *svc_resolve_flight_new(svc_resolver *r, const sym_build_id *id,
					   svc_artifact_kind kind, enum svc_resolve_stage stage);
/* Takes a flight that never started out of the table and frees it. */
void svc_resolve_flight_drop(svc_resolve_flight *f);
/* Sets the flight's result: status, and the error text fmt with what. */
void svc_resolve_flight_fail(svc_resolve_flight *f, svc_resolve_status status, const char *fmt,
			     const char *what);
/* Ends a flight: caches or remembers the result, then calls every waiter. */
void svc_resolve_flight_finish(svc_resolve_flight *f);
/* The interval between two looks for the debug info of an index built from
 * an executable alone. */
int64_t svc_resolve_recheck_interval_ms(const svc_resolver *r);
/* What the flight is doing, for a waiter. */
const char *svc_resolve_flight_doing(const svc_resolve_flight *f);

/* The stage steps (leaves: they set the flight's result and name the next stage). */
void svc_resolve_load_work(svc_resolve_flight *f);                       /* load.c */
enum svc_resolve_stage svc_resolve_load_next(svc_resolve_flight *f, bool cancelled);
enum svc_resolve_stage svc_resolve_fetch_next(svc_resolve_flight *f,     /* fetch.c */
					      const svc_fetch_result *res);
void svc_resolve_build_work(svc_resolve_flight *f);                      /* build.c */
/* The index's strings numbered for the responses (f->strings), on the
 * worker that loaded or built it: a pass over its string table. Worker. */
void svc_resolve_rank(svc_resolve_flight *f);
/* The S3 stage: whether to ask the S3 tier for the index (a tier, the symbol
 * index, not asked yet in this flight); starting the read (false: it could
 * not start); loading what it read (worker: f->s3_index when loaded); and
 * the stage after it. */
bool svc_resolve_s3_wanted(const svc_resolve_flight *f);
bool svc_resolve_s3_start(svc_resolve_flight *f, svc_fetch_s3_read_fn done);
void svc_resolve_s3_load_work(svc_resolve_flight *f);
enum svc_resolve_stage svc_resolve_s3_next(svc_resolve_flight *f, bool cancelled);
enum svc_resolve_stage svc_resolve_build_next(svc_resolve_flight *f, bool cancelled);
void svc_resolve_layout_load_work(svc_resolve_flight *f);                /* layout.c */
enum svc_resolve_stage svc_resolve_layout_load_next(svc_resolve_flight *f, bool cancelled);
void svc_resolve_layout_build_work(svc_resolve_flight *f);
enum svc_resolve_stage svc_resolve_layout_build_next(svc_resolve_flight *f, bool cancelled);
svc_index_entry *svc_resolve_layout_cache_put(svc_index_cache *c, svc_resolve_flight *f);
void svc_resolve_layout_free(void *artifact);

/* svc_resolve_negative.c */
const svc_resolve_negative *svc_resolve_neg_find(svc_resolver *r, const sym_build_id *id);
/* The same without using it (no recency change, nothing removed). */
const svc_resolve_negative *svc_resolve_neg_peek(const svc_resolver *r, const sym_build_id *id);
void svc_resolve_neg_remember(svc_resolver *r, const sym_build_id *id, svc_resolve_status status,
			      const char *error);
void svc_resolve_neg_clear(svc_resolver *r);
/* Drops the remembered failure of id (an upload). */
void svc_resolve_neg_forget(svc_resolver *r, const sym_build_id *id);

/* svc_resolve_failed.c */
/* True (the flight failed with the remembered reason) when the build of the
 * flight's file failed before and its retry time has not come. */
bool svc_resolve_failed_check(svc_resolve_flight *f);
/* After a build: remembers a failure (backoff doubling), forgets on success. */
void svc_resolve_failed_update(svc_resolve_flight *f);
const svc_resolve_failed *svc_resolve_failed_peek(const svc_resolver *r, const sym_build_id *id);
void svc_resolve_failed_clear(svc_resolver *r);

/* svc_resolve_budget.c */
/* On the worker: takes the build's estimate from the budget when it fits (or
 * nothing else runs); false (build_no_room): the flight is to wait in the queue. */
bool svc_resolve_budget_take(svc_resolve_flight *f);
/* On the loop, after the worker: a flight with no room goes into the queue;
 * else its estimate goes back. */
void svc_resolve_budget_give(svc_resolve_flight *f);
/* The oldest queued build that fits now, out of the queue with its estimate
 * taken (the driver starts it); NULL: none. */
svc_resolve_flight *svc_resolve_budget_next(svc_resolver *r);
/* Shutdown: forgets the queue (its flights end with the others). */
void svc_resolve_budget_drop_queue(svc_resolver *r);

#endif
