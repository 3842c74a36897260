/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_server: symbolizerd's network face. One libevent loop serves HTTP/1.1
 * (evhttp) and drives libcurl (the fetcher); index loads, builds and the
 * lookups of big batches run on the worker pool.
 *
 * Routes:
 *   POST /symbolizer.v1.SymbolizerService/<Method>    Connect RPC (svc_rpc; the methods
 *                                                     are the rooms', svc_rooms.c)
 *   GET  /healthz                                     "ok" while serving
 *   GET  /metrics                                     Prometheus text (svc_metrics)
 *   GET|HEAD /buildid/ID/{debuginfo,executable,section/N} debuginfod (svc_debuginfod)
 *   GET  /buildid/ID/status                           why a build ID is (not) symbolized
 *                                                     (JSON, svc_status.c)
 *   PUT  /buildid/ID/{debuginfo,executable}           uploads (svc_upload)
 *   POST /v1development/profiles                      OTLP/HTTP profiles receiver (svc_otlp)
 *
 * svc_server_create() opens the store, starts the fetcher, the pool, the
 * caches, creates the rooms of the table (svc_server_options.rooms), and
 * binds the listening socket. svc_server_shutdown() stops
 * accepting, answers the calls that wait (PENDING where work is unfinished),
 * lets the replies in flight be written, and then exits the loop;
 * svc_server_destroy() joins the workers and flushes the store.
 */
#ifndef SVC_SERVER_H
#define SVC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base_flag.h"
#include "service/core/svc_config.h"
#include "service/core/svc_error.h"
#include "service/rpc/svc_gzip.h"

struct event_base;
struct svc_room;

typedef struct svc_server_options {
	const char *listen;          /* HOST:PORT, [V6]:PORT or :PORT (default 127.0.0.1:8080) */
	uint32_t workers;            /* pool threads (0: online CPUs) */
	uint64_t index_cache_bytes;  /* bound of the loaded indexes in memory */
	uint64_t max_request_bytes;  /* request body cap, after gzip too */
	uint32_t max_mappings;       /* per call */
	uint32_t max_locations;      /* per call */
	int64_t default_wait_ms;     /* how long a call waits for fetches/builds by default */
	int64_t max_wait_ms;         /* cap on a request's Options.max_wait_ms */
	uint32_t max_inflight_calls; /* calls past this get resource_exhausted */
	uint32_t worker_lookup_min;  /* locations from which lookups run on a worker */
	uint64_t gzip_min_bytes;     /* smallest response gzipped for a client accepting gzip */
	svc_gzip_library gzip_library; /* --gzip-library: isal (the default) or libdeflate */
	int gzip_level;              /* --gzip-level (SVC_GZIP_LEVEL_DEFAULT: the library's) */
	uint32_t max_hops;           /* debuginfod requests with this many X-Symbolizer-Hops: no upstreams */
	const char *upload_token_file; /* bearer token of PUT /buildid/... (NULL: uploads disabled) */
	uint64_t max_upload_bytes;   /* largest upload body */
	uint64_t upload_memory_bytes; /* uploads in flight at once, their bytes (0: 2 x max_upload_bytes) */
	uint32_t upload_allow_remote; /* 1: uploads from any peer, not only loopback */
	const char *trusted_proxies; /* judged by X-Forwarded-For (uploads' peer rule) */
	uint64_t build_memory_bytes; /* budget of index builds at once (0: a quarter of RAM, 512M..4G) */
	uint32_t negative_cache_entries; /* bound of remembered failures, in memory and in the store */
	uint32_t max_new_lookups_per_call; /* build IDs one call may start resolving (0: no bound) */
	uint64_t waiting_calls_bytes; /* memory of calls that wait for work, at most */
	uint32_t max_connections;    /* open client connections (0: from the open-files limit) */
	int64_t request_timeout_ms;  /* a request's first byte to its last (header and body) */
	uint32_t max_concurrent_streams; /* HTTP/2 (gRPC): streams open at once per connection */
	const char *cors_allowed_origins; /* CORS on the RPC routes: "*" or a list (NULL: off) */
	const char *otlp_forward;    /* --otlp-forward URL (NULL: received profiles not passed on) */
	uint64_t otlp_queue_bytes;   /* --otlp-queue-bytes: the forward queue's bound */
	int64_t otlp_max_wait_ms;    /* --otlp-max-wait: a received profile's wait for build IDs */
	const svc_config *config;    /* store and sources; copied where needed */
	/* The rooms the server is assembled from, in creation order (svc_room.h):
	 * symbolizerd's table (svc_rooms.h) by default; a test's may add rows. */
	const struct svc_room *const *rooms;
	size_t n_rooms;
} svc_server_options;

/* Defaults for everything but config; rooms: symbolizerd's table. */
void svc_server_options_init(svc_server_options *o);

/*
 * The daemon's own flags (store and source flags are svc_config's) as a
 * table bound to o: --listen ADDR --workers N --index-cache-bytes SIZE
 * --max-request-bytes SIZE --max-mappings N --max-locations N
 * --default-wait DUR --max-wait DUR --max-inflight-calls N
 * --worker-lookup-min N --gzip-min-bytes SIZE --gzip-library NAME --gzip-level N --max-hops N
 * --build-memory-bytes SIZE
 * --negative-cache-entries N --max-new-lookups-per-call N
 * --upload-token-file FILE --max-upload-bytes SIZE --upload-allow-remote 0|1
 * --worker-lookup-min N --gzip-min-bytes SIZE --max-hops N
 * --max-connections N --request-timeout DUR --waiting-calls-bytes SIZE
 * --max-concurrent-streams N --cors-allowed-origins LIST
 * --otlp-forward URL --otlp-queue-bytes SIZE --otlp-max-wait DUR
 */
base_flag_group svc_server_flags(svc_server_options *o);

typedef struct svc_server svc_server;

svc_server *svc_server_create(struct event_base *base, const svc_server_options *opts,
			      svc_error *err);

/* The bound address ("127.0.0.1:41234"), for logs and tests with port 0. */
const char *svc_server_address(const svc_server *s);

/* Graceful stop (see above); the loop exits once the last reply is written. */
void svc_server_shutdown(svc_server *s);

void svc_server_destroy(svc_server *s);

#endif
