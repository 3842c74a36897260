/*
 * svc_server_options: the daemon's own settings and their flags (the store and
 * source settings are svc_config's); see svc_server.h.
 */
#include <stddef.h>
#include <string.h>

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
}

enum kind { K_STR, K_INT, K_SIZE, K_DUR };

static const struct {
	const char *name;
	enum kind kind;
	size_t offset;
	const char *help;
} flags[] = {
	{"--listen", K_STR, offsetof(svc_server_options, listen),
	 "ADDR        HOST:PORT, [IPV6]:PORT or :PORT to serve on (127.0.0.1:8080)"},
	{"--workers", K_INT, offsetof(svc_server_options, workers),
	 "N          threads for index builds and big lookups (0: one per CPU)"},
	{"--index-cache-bytes", K_SIZE, offsetof(svc_server_options, index_cache_bytes),
	 "SIZE  bound of the loaded indexes kept in memory (1G)"},
	{"--max-request-bytes", K_SIZE, offsetof(svc_server_options, max_request_bytes),
	 "SIZE  largest request body, after gzip too (8M)"},
	{"--max-mappings", K_INT, offsetof(svc_server_options, max_mappings),
	 "N       mappings per call (10000)"},
	{"--max-locations", K_INT, offsetof(svc_server_options, max_locations),
	 "N      locations per call (200000)"},
	{"--default-wait", K_DUR, offsetof(svc_server_options, default_wait_ms),
	 "DUR     how long a call waits for fetches and index builds before\n"
	 "                             it answers PENDING, when it sets no max_wait_ms (2s)"},
	{"--max-wait", K_DUR, offsetof(svc_server_options, max_wait_ms),
	 "DUR         cap on a call's max_wait_ms (60s)"},
	{"--max-inflight-calls", K_INT, offsetof(svc_server_options, max_inflight_calls),
	 "N calls in progress at once; more get resource_exhausted (1024)"},
	{"--worker-lookup-min", K_INT, offsetof(svc_server_options, worker_lookup_min),
	 "N  locations from which a call's lookups run on a worker (256)"},
	{"--gzip-min-bytes", K_SIZE, offsetof(svc_server_options, gzip_min_bytes),
	 "SIZE  smallest response gzipped for clients that accept gzip (1K);\n"
	 "                         gzip costs several times the CPU of the lookups:\n"
	 "                         raise it (e.g. 1G) on a fast network"},
};

int svc_server_parse_arg(svc_server_options *o, int argc, char **argv, int *i, sym_error *err)
{
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		const char *val;
		int got = svc_flag_value(argc, argv, i, flags[f].name, &val, err);
		if (got <= 0) {
			if (got < 0)
				return -1;
			continue;
		}
		char *base = (char *)o + flags[f].offset;
		switch (flags[f].kind) {
		case K_STR:
			*(const char **)base = val;
			return 1;
		case K_INT: {
			long v;
			if (svc_flag_count(flags[f].name, val, 100000000, &v, err) < 0)
				return -1;
			*(uint32_t *)base = (uint32_t)v;
			return 1;
		}
		case K_SIZE:
			return svc_flag_size(flags[f].name, val, (uint64_t *)base, err);
		case K_DUR:
			return svc_flag_duration(flags[f].name, val, (int64_t *)base, err);
		}
	}
	return 0;
}

void svc_server_usage(FILE *out)
{
	fprintf(out, "Server flags:\n");
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		fprintf(out, "  %s %s\n", flags[f].name, flags[f].help);
}

