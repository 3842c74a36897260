/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_resolver: from a build ID to a loaded index, through the tiers of
 * DESIGN.md: the in-memory index cache, the index in the store, the debug
 * info in the store, then the sources (the fetcher: local debug dirs, then the
 * upstream debuginfod servers), then an index build on a worker.
 *
 * Single flight: one resolution per build ID is in progress at a time, and
 * every caller that needs it waits on that one. A waiter may give up (its
 * call's deadline came): the work goes on, and a later call finds the index in
 * the cache. Results other than OK are remembered in memory for a short while
 * (error TTL for failures, at most a minute for "not found", "no symbols" and
 * "too large") so that a flood of calls for a missing build ID costs nothing.
 *
 * An index built from an executable alone (no source had debug info) answers
 * with symbols; while it is used, the resolver asks the fetcher again at most
 * once a negative-cache period (capped at a minute) in the background, and
 * the fetcher looks for debug info again once its own negative entry
 * expires. When debug info turns up (an upstream got it, a -dbg package was
 * installed), the index is rebuilt with it and replaces the old one in the
 * cache; calls go on being answered from the old one meanwhile.
 *
 * Derived artifacts by kind (svc_artifact_kind): the symbol index is one; the
 * type-layout index is another, built once the symbol resolution brought the
 * file into the store. Each kind has its single flight, its memory cache
 * under a byte budget, its blob in the store, and is forgotten with the file
 * (svc_resolver_forget). A call that resolves several identities and waits
 * within a budget uses svc_resolve_set.h.
 *
 * Loop thread only; loads and builds run on the worker pool.
 */
#ifndef SVC_RESOLVER_H
#define SVC_RESOLVER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "base/base_histogram.h"
#include "service/fetch/svc_fetcher.h"
#include "service/resolve/svc_index_cache.h"
#include "service/core/svc_pool.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_error.h"
#include "symbolizer/sym_layout.h"

struct event_base;

typedef enum svc_resolve_status {
	SVC_RESOLVE_OK = 0,        /* entry holds the index */
	SVC_RESOLVE_NOT_FOUND,     /* no source has the build ID */
	SVC_RESOLVE_ERROR,         /* sources failed, or the file could not be indexed */
	SVC_RESOLVE_NO_SYMBOLS,    /* the file has neither debug info nor symbols */
	SVC_RESOLVE_TOO_LARGE,     /* over a size cap */
	SVC_RESOLVE_PENDING,       /* nothing yet, but a package scan under way may bring it:
				    * ask again (remembered SVC_RESOLVE_PENDING_TTL_MS) */
} svc_resolve_status;

/* How long a PENDING answer stands before the sources are asked again. */
#define SVC_RESOLVE_PENDING_TTL_MS 1000

const char *svc_resolve_status_name(svc_resolve_status s);

typedef struct svc_resolution {
	svc_resolve_status status;
	svc_index_entry *entry;   /* OK: referenced; release with svc_resolver_release() */
	char error[SYM_ERROR_MSG_MAX];  /* not OK: why */
} svc_resolution;

typedef void (*svc_resolve_cb)(void *arg, svc_resolution *res);

/*
 * The derived artifacts of a resolution, by kind: each is built on a worker
 * from the resolved file, once (single flight), kept in memory under a byte
 * budget and in the store, and forgotten when an upload replaces the file.
 */
typedef enum svc_artifact_kind {
	SVC_ARTIFACT_SYMBOLS = 0,  /* the symbol index: entry->index */
	SVC_ARTIFACT_LAYOUT,       /* the type-layout index: entry->artifact, a svc_layout_artifact */
	SVC_ARTIFACT_KINDS
} svc_artifact_kind;

/*
 * A type-layout index (SVC_ARTIFACT_LAYOUT), built from the file the symbol
 * resolution brought into the store (and its dwz file): the layouts, or why
 * the file has none (its answer is NO_SYMBOLS, kept like the layouts).
 */
typedef struct svc_layout_artifact {
	sym_layout *layout;                 /* NULL: no type information */
	char no_layout[SYM_ERROR_MSG_MAX];  /* ... why */
} svc_layout_artifact;

typedef struct svc_resolver svc_resolver;
typedef struct svc_resolve_waiter svc_resolve_waiter;

typedef struct svc_resolver_options {
	struct event_base *base;
	stor_db *store;
	svc_fetcher *fetcher;
	svc_pool *pool;             /* index loads and builds run here */
	svc_index_cache *cache;     /* the symbol indexes (the other kinds: caches of their own) */
	/* The package archives (NULL: none): a failure remembered before the
	 * catalogue's latest addition is not trusted (svc_packages_generation). */
	const struct svc_packages *packages;
	size_t layout_cache_bytes;  /* layout indexes kept in memory (0: SVC_RESOLVE_LAYOUT_CACHE_DEFAULT) */
	unsigned build_threads;     /* DWARF walk threads per build (0: per CPU) */
	uint64_t max_decompressed_bytes; /* cap for compressed debug sections (0: default) */
	int64_t error_ttl_ms;       /* how long a failure is remembered */
	int64_t negative_ttl_ms;    /* ... and not found / no symbols / too large (capped at 60 s) */
	size_t negative_entries;    /* bound of the remembered failures (LRU); 0: default */
	/* Memory budget of the index builds running at once (their estimates);
	 * builds past it wait in a queue. 0: SVC_RESOLVE_BUILD_MEMORY_DEFAULT. */
	uint64_t build_memory_bytes;
} svc_resolver_options;

#define SVC_RESOLVE_NEG_ENTRIES_DEFAULT 10000
#define SVC_RESOLVE_LAYOUT_CACHE_DEFAULT (256u << 20)
#define SVC_RESOLVE_BUILD_MEMORY_DEFAULT (2ull << 30)

typedef struct svc_resolver_stats {
	uint64_t memory_hits, memory_misses;    /* index cache */
	uint64_t negative_hits;                 /* answered from the remembered failures */
	uint64_t store_index_hits, store_index_misses;
	uint64_t store_file_hits;               /* debug info already in the store */
	uint64_t source_fetches;                /* fetched from a local dir or an upstream */
	uint64_t builds_ok, builds_failed;
	uint64_t builds_skipped;                /* not built: the same file failed before */
	uint64_t builds_queued;                 /* waited for the memory budget */
	uint64_t negative_evictions;            /* remembered failures pushed out (LRU) */
	uint64_t stored_index_rejected;         /* stored index of another version or corrupt */
	uint64_t s3_index_hits;                 /* indexes read from the S3 tier, not built */
	uint64_t joined;                        /* waiters that joined a flight in progress */
	/* Indexes built from an executable alone: searches for debug info since,
	 * and those that found it (the index was rebuilt with it). */
	uint64_t rechecks, upgrades;
	size_t in_flight;
	base_histogram build_seconds;
} svc_resolver_stats;

svc_resolver *svc_resolver_create(const svc_resolver_options *opts);

/*
 * Shutdown, in this order: svc_resolver_stop() (flights end at their next step
 * with ERROR "shutting down" instead of going on), then destroy the pool and
 * the fetcher (their pending callbacks end the flights), then
 * svc_resolver_destroy(), which ends any flight left the same way.
 */
void svc_resolver_stop(svc_resolver *r);
void svc_resolver_destroy(svc_resolver *r);

/*
 * Resolves a build ID. When the answer is known now (index in memory, or a
 * remembered failure), fills *now and returns NULL; otherwise registers cb,
 * which runs later on the loop, exactly once unless cancelled, and returns
 * the waiter. *now->entry (OK) is referenced either way.
 */
svc_resolve_waiter *svc_resolver_resolve(svc_resolver *r, const sym_build_id *id,
					 svc_resolve_cb cb, void *arg, svc_resolution *now);

/* The same for a kind of derived artifact (svc_resolver_resolve: SYMBOLS). */
svc_resolve_waiter *svc_resolver_resolve_kind(svc_resolver *r, const sym_build_id *id,
					      svc_artifact_kind kind, svc_resolve_cb cb, void *arg,
					      svc_resolution *now);

/* The caller no longer waits: cb will not run. The work goes on. */
void svc_resolver_cancel(svc_resolver *r, svc_resolve_waiter *w);

/* What the flight a waiter waits on is doing ("fetching debug info", ...). */
const char *svc_resolver_waiter_stage(const svc_resolve_waiter *w);

void svc_resolver_release(svc_resolver *r, svc_index_entry *e);

/*
 * The store got a new file for id (an upload): the loaded artifacts of every
 * kind and any remembered failure are dropped, so the next call loads or
 * builds them from the new file. Calls holding the old ones finish with them.
 */
void svc_resolver_forget(svc_resolver *r, const sym_build_id *id);
/* Whether resolving id now would start new work (nothing in memory, nothing
 * remembered, no flight): what a call's bound on new lookups counts. */
bool svc_resolver_is_new(const svc_resolver *r, const sym_build_id *id);

/* What the resolver knows of a build ID, from memory only (status pages). */
typedef struct svc_resolver_info {
	bool loaded;                 /* the index is in the index cache */
	size_t index_bytes;          /* ... its size */
	bool from_executable;        /* ... built from the executable alone */
	sym_index_source source;     /* ... what it was built from: DWARF, Go pclntab, symbols */
	const char *stage;           /* a flight in progress: "loading the index", ...; NULL */
	bool build_queued;           /* ... waiting for the build memory budget */
	bool negative;               /* a remembered failure answers calls */
	svc_resolve_status neg_status;
	char neg_error[SYM_ERROR_MSG_MAX];
	int64_t neg_expires_ms;      /* Unix ms */
	bool build_failed;           /* the build of the stored file failed */
	svc_resolve_status failed_status;
	char failed_error[SYM_ERROR_MSG_MAX];
	uint32_t failures;
	int64_t failed_file_time;    /* fetch_time of the file that failed (Unix ms) */
	int64_t retry_at_ms;         /* Unix ms: the next build of that file, not before */
} svc_resolver_info;

void svc_resolver_describe(const svc_resolver *r, const sym_build_id *id, svc_resolver_info *out);

/* The build memory budget, in use now, its high-water mark, builds queued. */
void svc_resolver_build_memory(const svc_resolver *r, uint64_t *max, uint64_t *in_use,
			       uint64_t *peak, size_t *queued);

const svc_resolver_stats *svc_resolver_get_stats(const svc_resolver *r);

/*
 * Appends the resolver's families to the /metrics exposition:
 * symbolizer_cache_requests_total, symbolizer_resolutions_in_flight,
 * symbolizer_index_builds_total, symbolizer_index_build_duration_seconds,
 * symbolizer_stored_index_rejected_total, symbolizer_debuginfo_rechecks_total,
 * symbolizer_index_build_memory_{bytes,peak_bytes,max_bytes}, symbolizer_index_builds_queued,
 * symbolizer_negative_cache_entries, symbolizer_negative_cache_evictions_total.
 */
void svc_resolver_metrics_render(const svc_resolver *r, base_buf *out);

#endif
