// SPDX-License-Identifier: Apache-2.0
/*
 * svc_server_options: the daemon's own settings and their flags (the store and
 * source settings are svc_config's); see svc_server.h.
 */
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "service/http/svc_rooms.h"
#include "service/http/svc_server.h"

void svc_server_options_init(svc_server_options *o)
{
	memset(o, 0, sizeof(*o));
	o->listen = "127.0.0.1:8080";
	o->workers = 0;
	o->index_cache_bytes = 1024ull * 1024 * 1024;
	o->max_request_bytes = 8ull * 1024 * 1024;
	o->max_mappings = 10000;
	o->max_locations = 200000;
	o->default_wait_ms = 2000;
	o->max_wait_ms = 60000;
	o->max_inflight_calls = 1024;
	o->worker_lookup_min = 256;
	o->gzip_min_bytes = 1024;
	o->gzip_level = SVC_GZIP_LEVEL_DEFAULT;
	o->max_hops = 1;
	o->max_upload_bytes = 1024ull * 1024 * 1024;
	o->build_memory_bytes = 0;
	o->negative_cache_entries = 10000;
	o->max_new_lookups_per_call = 256;
	o->max_connections = 0;
	o->waiting_calls_bytes = 512ull * 1024 * 1024;
	o->request_timeout_ms = 30000;
	o->max_concurrent_streams = 100;
	o->otlp_queue_bytes = 64ull * 1024 * 1024;
	o->otlp_max_wait_ms = 2000;
	o->rooms = svc_daemon_rooms;
	o->n_rooms = svc_daemon_n_rooms;
}

static bool parse_gzip_library(void *obj, const char *value, char *err, size_t err_size)
{
	svc_server_options *o = obj;
	if (svc_gzip_library_parse(value, &o->gzip_library))
		return true;
	snprintf(err, err_size, "%s: expected isal or libdeflate", value);
	return false;
}

static bool parse_gzip_level(void *obj, const char *value, char *err, size_t err_size)
{
	svc_server_options *o = obj;
	char *end;
	long v = strtol(value, &end, 10);
	if (*value && !*end && v >= 0 && v <= 12) {
		o->gzip_level = (int)v;
		return true;
	}
	snprintf(err, err_size, "%s: expected a level from 0 to 12", value);
	return false;
}

#define F(name, meta, kind, field, max, help) \
	{name, meta, kind, offsetof(svc_server_options, field), max, NULL, help}
static const base_flag flags[] = {
	F("--listen", "ADDR", BASE_FLAG_STRING, listen, 0,
	  "HOST:PORT, [IPV6]:PORT or :PORT to serve on (127.0.0.1:8080)"),
	F("--workers", "N", BASE_FLAG_U32, workers, 100000000,
	  "threads for index builds and big lookups (0: one per CPU)"),
	F("--index-cache-bytes", "SIZE", BASE_FLAG_SIZE, index_cache_bytes, 0,
	  "bound of the loaded indexes kept in memory (1G)"),
	F("--max-request-bytes", "SIZE", BASE_FLAG_SIZE, max_request_bytes, 0,
	  "largest request body, after gzip too (8M)"),
	F("--max-mappings", "N", BASE_FLAG_U32, max_mappings, 100000000, "mappings per call (10000)"),
	F("--max-locations", "N", BASE_FLAG_U32, max_locations, 100000000,
	  "locations per call (200000)"),
	F("--default-wait", "DUR", BASE_FLAG_DURATION, default_wait_ms, 0,
	  "how long a call waits for fetches and index builds before\n"
	  "it answers PENDING, when it sets no max_wait_ms (2s)"),
	F("--max-wait", "DUR", BASE_FLAG_DURATION, max_wait_ms, 0, "cap on a call's max_wait_ms (60s)"),
	F("--max-inflight-calls", "N", BASE_FLAG_U32, max_inflight_calls, 100000000,
	  "calls in progress at once; more get resource_exhausted (1024)"),
	F("--worker-lookup-min", "N", BASE_FLAG_U32, worker_lookup_min, 100000000,
	  "locations from which a call's lookups run on a worker (256)"),
	F("--gzip-min-bytes", "SIZE", BASE_FLAG_SIZE, gzip_min_bytes, 0,
	  "smallest response gzipped for clients that accept gzip (1K);\n"
	  "gzip costs several times the CPU of the lookups:\n"
	  "raise it (e.g. 1G) on a fast network"),
	{"--gzip-library", "NAME", BASE_FLAG_CUSTOM, 0, 0, parse_gzip_library,
	 "what gzips responses: isal (ISA-L's igzip, about 2.5 times\n"
	 "libdeflate's speed at level 1) or libdeflate (isal)"},
	{"--gzip-level", "N", BASE_FLAG_CUSTOM, 0, 0, parse_gzip_level,
	 "the library's level: isal 0 to 3, libdeflate 0 to 12; higher is\n"
	 "smaller and slower (isal 0: a seventh faster than its 1, for\n"
	 "a tenth more bytes; libdeflate 1)"},
	F("--max-hops", "N", BASE_FLAG_U32, max_hops, 1000,
	  "debuginfod requests forwarded this many times (X-Symbolizer-Hops)\n"
	  "are answered from the store and local dirs only (1)"),
	F("--upload-token-file", "FILE", BASE_FLAG_STRING, upload_token_file, 0,
	  "file holding the bearer token of PUT /buildid/ID/debuginfo|executable\n"
	  "uploads (none: uploads are disabled); mode 600, 16 bytes or more"),
	F("--max-upload-bytes", "SIZE", BASE_FLAG_SIZE, max_upload_bytes, 0,
	  "largest upload body (1G); a body is written to DATA/tmp as it\n"
	  "arrives, not held in memory"),
	F("--upload-memory-bytes", "SIZE", BASE_FLAG_SIZE, upload_memory_bytes, 0,
	  "bytes of the uploads being received or stored at once; an upload\n"
	  "past it is answered 503 with Retry-After before its body is read\n"
	  "(0: twice --max-upload-bytes; one upload always goes)"),
	F("--upload-allow-remote", "0|1", BASE_FLAG_U32, upload_allow_remote, 1,
	  "1: accept uploads from any peer; 0: over loopback only, as there\n"
	  "is no TLS (0)"),
	F("--trusted-proxies", "ADDR[/BITS][,...]", BASE_FLAG_STRING, trusted_proxies, 0,
	  "proxies (the nginx front) whose X-Forwarded-For names the\n"
	  "client of an upload; none by default"),
	F("--build-memory-bytes", "SIZE", BASE_FLAG_SIZE, build_memory_bytes, 0,
	  "expected memory of the index builds running at once; more wait\n"
	  "in a queue; also the inflate cap of compressed debug sections\n"
	  "(0: a quarter of RAM, at least 512M, at most 4G)"),
	F("--negative-cache-entries", "N", BASE_FLAG_U32, negative_cache_entries, 100000000,
	  "build IDs whose failure is remembered, in memory and in the\n"
	  "store; least recently used out (10000; 0: no bound)"),
	F("--max-new-lookups-per-call", "N", BASE_FLAG_U32, max_new_lookups_per_call, 100000000,
	  "build IDs one call may start looking up; the others answer\n"
	  "PENDING and are started by the next calls (256; 0: no bound)"),
	F("--waiting-calls-bytes", "SIZE", BASE_FLAG_SIZE, waiting_calls_bytes, 0,
	  "memory the calls that wait for fetches and builds may hold\n"
	  "(their decoded requests); past it a call gets resource_exhausted\n"
	  "(512M; 0: no bound)"),
	F("--max-connections", "N", BASE_FLAG_U32, max_connections, 100000000,
	  "open client connections; at the cap the longest idle one is\n"
	  "closed, else accepting pauses (0: the open-files limit less\n"
	  "a quarter, at least 128, kept for the store and upstreams)"),
	F("--request-timeout", "DUR", BASE_FLAG_DURATION, request_timeout_ms, 0,
	  "time from a request's first byte to its last, header and body;\n"
	  "a slower client is disconnected (30s; 0: none)"),
	F("--max-concurrent-streams", "N", BASE_FLAG_U32, max_concurrent_streams, 100000,
	  "gRPC's HTTP/2 streams open at once on one connection,\n"
	  "its SETTINGS_MAX_CONCURRENT_STREAMS (100)"),
	F("--cors-allowed-origins", "LIST", BASE_FLAG_STRING, cors_allowed_origins, 0,
	  "browser origins allowed to call the RPC methods (Connect and\n"
	  "gRPC-Web), separated by commas, or * for any (none: CORS off)"),
	F("--otlp-forward", "URL", BASE_FLAG_STRING, otlp_forward, 0,
	  "where OTLP profiles received (POST /v1development/profiles,\n"
	  "gRPC ProfilesService/Export) go once symbolized: http:// or\n"
	  "https:// for OTLP/HTTP, grpc:// for OTLP/gRPC over HTTP/2\n"
	  "without TLS, grpcs:// with it (none: they are symbolized,\n"
	  "counted and not passed on)"),
	F("--otlp-queue-bytes", "SIZE", BASE_FLAG_SIZE, otlp_queue_bytes, 0,
	  "memory of the OTLP forward queue; a request past it is\n"
	  "answered 503 with Retry-After (64M)"),
	F("--otlp-max-wait", "DUR", BASE_FLAG_DURATION, otlp_max_wait_ms, 0,
	  "how long a received OTLP profile waits for its build IDs to\n"
	  "be fetched and indexed; then it goes on with what is\n"
	  "resolved (2s)"),
};
#undef F

base_flag_group svc_server_flags(svc_server_options *o)
{
	return (base_flag_group){"Server flags", flags, sizeof(flags) / sizeof(flags[0]), o};
}
