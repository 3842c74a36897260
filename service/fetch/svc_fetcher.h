/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fetch: finds the file of a build ID and puts it in the store, on an event loop.
 *
 * svc_fetch_start(fetcher, id, kind, policy, cb, arg) answers from the store
 * when it can (a file held, or a negative result not yet expired); otherwise
 * it searches, in order, the local debug directories (DIR/.build-id/xx/
 * rest.debug), the caller's sources (the package archives), then each
 * upstream the policy allows (the peer tier, then the upstreams), each a
 * provider of its URL's protocol (debuginfod over HTTP: the debuginfo of the
 * build ID). When no source has debug info, it looks for the executable the
 * same way so that .symtab and .dynsym symbolization still works; the store
 * records that it holds only the executable, and once the negative-cache time
 * has passed the next fetch looks for debug info again and replaces the
 * executable when it finds it.
 *
 * The list is built once, from the configuration, when the fetcher is made
 * (svc_fetch_sources.c); the local debug directories and the caller's
 * sources are sources (source/src_source.h), asked in order through that
 * interface; each file found or downloaded goes through src_check_file before
 * it is stored.
 *
 * One fetcher serves every request; a request's policy says which upstreams
 * it may ask and whether its negative result is remembered. A flight is one
 * (build ID, policy): a local-only request never joins a full one, nor the
 * reverse. Each upstream has one circuit breaker, whatever the policies.
 *
 * Rules (issue 3):
 *  - single flight: one search per build ID however many callers want it;
 *  - a global limit on downloads and one per server (FIFO wait otherwise);
 *    at most max_queued flights wait (SVC_FETCH_QUEUE_MAX by default): past
 *    that a flight that would wait ends as ERROR ("download queue full");
 *  - 404: next server; 404 everywhere: NOT_FOUND, remembered negative_cache_ttl;
 *  - 406 or a body over max_debuginfo_size: TOO_LARGE;
 *  - 5xx, timeouts, refused or reset connections: retried on the same server with
 *    exponential backoff, then the next server; the result is ERROR, remembered
 *    error_cache_ttl only; a server failing breaker_failures times in a row is
 *    skipped for breaker_cooldown (its circuit breaker is open; logged, and in
 *    svc_fetcher_get_upstreams), then tried again with one request;
 *  - a file is stored only when it is an ELF whose GNU build-ID note equals the
 *    requested ID; otherwise ERROR naming the server, and nothing is stored;
 *  - a debug file with .gnu_debugaltlink gets its dwz supplementary file fetched
 *    the same way (by the build ID in that section) before the callback runs;
 *    when the debug file came from a local dir, the dwz file is also looked
 *    for at the path the link names (inside a debug dir, build ID checked);
 *  - all attempts on one server share one deadline (upstream_timeout_ms from
 *    the first request); a server whose every slot has been busy for
 *    upstream_busy_defer_ms is put off: the servers after it are asked first;
 *  - downloads are spooled to DATA/tmp (never whole in memory); redirects are
 *    followed per upstream_redirects; upstream URLs are shown with their
 *    userinfo redacted (svc_url_display), credentials may come from a netrc.
 *
 * Threads: create, start and destroy on the event_base's thread; callbacks run
 * there too, always after svc_fetch_start has returned. Blocking work (local
 * files, ELF checks, store writes) runs on the fetcher's own worker threads.
 * The fetcher pins a build ID in the store while its fetch is in flight and
 * during the callbacks: a callback that wants the file to stay (e.g. for an
 * index build) calls stor_pin() before it returns.
 */
#ifndef SVC_FETCH_H
#define SVC_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_config.h"
#include "service/core/svc_error.h"
#include "service/fetch/svc_upstream_http.h"
#include "source/src_source.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"

struct event_base;

typedef enum svc_fetch_status {
	SVC_FETCH_OK = 0,       /* the store holds a file (see result.kind) */
	SVC_FETCH_NOT_FOUND,    /* no source has it */
	SVC_FETCH_ERROR,        /* sources failed; try again later */
	SVC_FETCH_TOO_LARGE,    /* larger than max_debuginfo_size (or the store) */
	SVC_FETCH_PENDING,      /* none yet, but a source could still have it (a package
				 * scan under way): ask again soon; nothing remembered */
} svc_fetch_status;

const char *svc_fetch_status_name(svc_fetch_status s); /* "ok", "not_found", ... */

typedef enum svc_fetch_kind {
	SVC_FETCH_SYMBOLS = 0,  /* debug info, else the executable */
	SVC_FETCH_DEBUGINFO,    /* debug info only (e.g. a dwz supplementary file) */
} svc_fetch_kind;

typedef struct svc_fetch_result {
	sym_build_id build_id;
	svc_fetch_status status;
	stor_kind kind;          /* OK: what the store holds (debuginfo or executable) */
	bool cached;             /* answered from the store; no source was asked */
	uint64_t size;           /* OK: bytes of the file */
	char source[STOR_SOURCE_MAX];  /* OK: directory or upstream URL it came from */
	/* Not OK: why. OK with kind executable: why there is no debug info. */
	char error[SYM_ERROR_MSG_MAX];
	bool has_alt;            /* the file needs a dwz supplementary file */
	sym_build_id alt_id;
	svc_fetch_status alt_status;  /* of that file's fetch */
} svc_fetch_result;

typedef void (*svc_fetch_cb)(const svc_fetch_result *res, void *arg);

/* What one request may ask. */
typedef struct svc_fetch_policy {
	bool upstreams;          /* the upstream servers */
	bool peers;              /* the peer tier */
	bool remember_negative;  /* a negative result is remembered for its TTL */
} svc_fetch_policy;

/* Everything (the normal case). */
#define SVC_FETCH_POLICY_FULL ((svc_fetch_policy){true, true, true})
/* A debuginfod request past --max-hops: the store and the local sources
 * (dirs, packages), no upstream, nothing negative remembered (the full search
 * may still find it). */
#define SVC_FETCH_POLICY_LOCAL ((svc_fetch_policy){false, false, false})
/* A request from a replica through the peer tier (we own the build ID): the
 * upstreams, never the peer tier again. */
#define SVC_FETCH_POLICY_OWNER ((svc_fetch_policy){true, false, true})

typedef struct svc_fetcher svc_fetcher;

/* Log sink for notable events (breakers opening/closing, rejected files). */
typedef void (*svc_log_fn)(void *arg, const char *line);

typedef struct svc_fetcher_options {
	struct event_base *base;
	stor_db *store;
	const svc_config *config;   /* copied; need not outlive the fetcher */
	const char *user_agent;     /* NULL: "symbolizer/<version> (+debuginfod client)" */
	svc_log_fn log;             /* NULL: lines to stderr */
	void *log_arg;
	/* Sources asked in order after the config's debug dirs and before the
	 * upstreams (the package archives' source, svc_packages_source); not
	 * owned, must outlive the fetcher. NULL: none. */
	src_source *const *sources;
	size_t n_sources;
	size_t max_queued;          /* flights waiting for a download slot; 0: SVC_FETCH_QUEUE_MAX */
} svc_fetcher_options;

/* Default bound of the download queue: flights (build IDs) waiting for a slot
 * while max_concurrent_fetches downloads run. A burst larger than this is
 * refused rather than held; each refused build ID is retried after the
 * error-cache TTL. */
#define SVC_FETCH_QUEUE_MAX 4096

/* SVC_E_INVALID when an upstream's URL scheme has no provider (the error
 * names it), SVC_E_NOMEM, SVC_E_IO (the spool directory). */
svc_fetcher *svc_fetcher_create(const svc_fetcher_options *opts, svc_error *err);

/* Stops everything: downloads are aborted, workers joined, and callbacks still
 * owed are called with SVC_FETCH_ERROR ("shutting down"). NULL is a no-op. */
void svc_fetcher_destroy(svc_fetcher *f);

/* Starts (or joins) the fetch of a build ID under policy. cb runs later,
 * exactly once. SVC_E_INVALID for an empty build ID or no callback,
 * SVC_E_SHUTTING_DOWN once the fetcher stops, SVC_E_NOMEM when out of memory. */
svc_errc svc_fetch_start(svc_fetcher *f, const sym_build_id *id, svc_fetch_kind kind,
			 svc_fetch_policy policy, svc_fetch_cb cb, void *arg);

/*
 * A source file from the upstreams (svc_fetch_source.c), for the debuginfod
 * source endpoint: asked of each server the policy allows, in order, the
 * first one found is the answer, not stored. res (OK only) holds the body spooled (res->fd) or
 * in memory (res->body), either may be taken; from: the server's URL for
 * display; error: why not, otherwise.
 */
typedef struct svc_fetch_source_req svc_fetch_source_req;
typedef void (*svc_fetch_source_cb)(void *arg, svc_fetch_status st, svc_http_result *res,
				    const char *from, const char *error);

/* Starts the relay; cb runs later on the loop, exactly once (ERROR "shutting
 * down" when the fetcher is destroyed first). max_size: the body's cap (0 or
 * more than max_debuginfo_size: that). SVC_E_SHUTTING_DOWN, SVC_E_NOMEM. */
svc_errc svc_fetch_source_start(svc_fetcher *f, const sym_build_id *id, const char *path,
				uint64_t max_size, svc_fetch_policy policy,
				svc_fetch_source_cb cb, void *arg);

typedef enum svc_breaker_state {
	SVC_BREAKER_CLOSED = 0,  /* requests flow */
	SVC_BREAKER_OPEN,        /* server skipped until open_until */
	SVC_BREAKER_HALF_OPEN,   /* one probe request allowed */
} svc_breaker_state;

/* After this many executable 404s in a row (and never an executable served
 * after a debuginfo 404), an upstream is asked for /debuginfo only: one
 * request per unknown build ID, not two; still asked one walk in
 * SVC_FETCH_EXEC_REPROBE, in case it starts serving executables. */
#define SVC_FETCH_EXEC_LEARN 16
#define SVC_FETCH_EXEC_REPROBE 64

/* A failure of an upstream request, as its circuit breaker remembers it. */
#define SVC_BREAKER_NOTES 4
typedef struct svc_breaker_failure_note {
	int64_t at_ms;           /* monotonic in the breaker; Unix ms in svc_upstream_stats */
	char why[160];
} svc_breaker_failure_note;

typedef struct svc_upstream_stats {
	const char *url;         /* valid while the fetcher lives */
	uint64_t requests, ok, not_found, too_large, failures, rejected, skipped;
	uint64_t bytes;          /* body bytes of 200 answers */
	uint64_t breaker_opens;
	svc_breaker_state breaker;
	int64_t breaker_remaining_ms;  /* OPEN: until it half-opens */
	int64_t breaker_opened_at_ms;  /* Unix ms of the last opening (0: never opened) */
	int consecutive_failures;
	/* The last failures, oldest first; and those that opened the breaker last. */
	unsigned n_recent, n_opened_by;
	svc_breaker_failure_note recent[SVC_BREAKER_NOTES], opened_by[SVC_BREAKER_NOTES];
	/* Learned: whether the server ever served an executable after a debuginfo
	 * 404, and executable 404s since (svc_fetch_walk.c asks for executables). */
	bool serves_executables;
	uint32_t executable_misses;
	int active;              /* downloads in flight now */
} svc_upstream_stats;

typedef struct svc_fetcher_stats {
	uint64_t started;        /* svc_fetch_start calls */
	uint64_t joined;         /* ... that joined a flight in progress */
	uint64_t cache_hits;     /* answered from the store */
	uint64_t local_hits;     /* found in a local debug dir */
	uint64_t upstream_hits;  /* downloaded */
	uint64_t not_found, errors, too_large;
	uint64_t pending;        /* nothing yet, a package scan under way (nothing remembered) */
	uint64_t deferred;       /* a busy server put off: the next ones asked first */
	size_t in_flight;        /* build IDs being fetched now */
	size_t downloads;        /* downloads in flight now */
	size_t queued;           /* waiting for a download slot */
} svc_fetcher_stats;

void svc_fetcher_get_stats(const svc_fetcher *f, svc_fetcher_stats *out);

/* Fills up to max entries (one per upstream, in order); returns the count. */
size_t svc_fetcher_get_upstreams(const svc_fetcher *f, svc_upstream_stats *out, size_t max);

/* The last outcome of one source for one build ID (svc_fetcher_describe). */
typedef enum svc_source_outcome_kind {
	SVC_SOURCE_NONE = 0,     /* not asked (yet) */
	SVC_SOURCE_FOUND,        /* the file came from there */
	SVC_SOURCE_NOT_FOUND,    /* 404, or no file in the directory */
	SVC_SOURCE_TOO_LARGE,    /* 406, or over the size cap */
	SVC_SOURCE_ERROR,        /* 5xx, timeout, broken connection, queue full */
	SVC_SOURCE_REJECTED,     /* a file that is not an ELF with that build ID */
	SVC_SOURCE_SKIPPED,      /* not asked: circuit breaker open, or no executables there */
	SVC_SOURCE_PENDING,      /* not there yet: its listing is incomplete (a package scan) */
} svc_source_outcome_kind;

const char *svc_source_outcome_name(svc_source_outcome_kind k); /* "found", ... */

typedef struct svc_source_outcome {
	const char *source;      /* directory, upstream URL, or the source's name (fetcher's) */
	const char *type;        /* "upstream", or the source's ops name ("local", ...) */
	const char *want;        /* "debuginfo" or "executable" */
	svc_source_outcome_kind outcome;
	char error[160];         /* "" when none */
	int64_t at_ms;           /* Unix ms */
} svc_source_outcome;

/* Build IDs whose per-source outcomes are kept (the oldest forgotten first). */
#define SVC_FETCH_TRACE_MAX 2048

/*
 * The last outcome of each source asked for id (up to max, in source order;
 * local sources first, then upstreams), and whether a fetch of id is in
 * flight (under any policy). Cheap: memory only, no fetch. Loop thread.
 */
size_t svc_fetcher_describe(const svc_fetcher *f, const sym_build_id *id, svc_source_outcome *out,
			    size_t max, bool *in_flight);

/*
 * Writes the fetcher's Prometheus families into out (base_expo):
 * symbolizer_fetches_total, symbolizer_fetches_in_flight,
 * symbolizer_upstream_requests_total, symbolizer_upstream_bytes_total and
 * symbolizer_upstream_breaker_open, each with its HELP and TYPE lines. On the
 * event_base's thread, like the stats calls.
 */
void svc_fetcher_metrics_render(const svc_fetcher *f, base_buf *out);

/* The shared S3 tier's client (svc_s3.h), NULL when none is configured: the
 * upload room writes through it before it answers, the resolver writes built
 * indexes behind through it. Lives as long as the fetcher. */
struct svc_s3 *svc_fetcher_s3(const svc_fetcher *f);

/* A read of one object of the S3 tier by its key (svc_s3_key) on the
 * fetcher's multi handle, verified as the S3 provider verifies files (the
 * size, and the SHA-256 it was written with against the body's, hashed as it
 * arrives): the resolver's index objects, which are no file of the fetch walk.
 * done is called once, on the loop, with the body (malloc'ed: done takes it)
 * or NULL and why (not in S3, not verified, S3 failing, the fetcher going
 * away); never after svc_fetcher_s3_read_cancel. NULL when it could not start
 * (no S3 tier, shutting down, out of memory). Loop thread. */
typedef struct svc_fetch_s3_read svc_fetch_s3_read;
typedef void (*svc_fetch_s3_read_fn)(void *arg, uint8_t *body, size_t size, const char *why);
svc_fetch_s3_read *svc_fetcher_s3_read(svc_fetcher *f, const char *key, uint64_t max,
				       svc_fetch_s3_read_fn done, void *arg);
/* Stops a read whose callback has not run (it will not). */
void svc_fetcher_s3_read_cancel(svc_fetch_s3_read *rd);

/* DATA/tmp, where bodies are spooled (svc_spool.h); NULL without a data dir. */
const char *svc_fetcher_spool_dir(const svc_fetcher *f);

#endif
