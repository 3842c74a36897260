// SPDX-License-Identifier: Apache-2.0
/*
 * bench_response: the in-process cost of a Symbolize call's work, without the
 * network: svc_lookup_run (normalization, lookups, string and function
 * tables, encoding) over batches of addresses, next to the bare lookups of
 * the same addresses in the same run, so the response's share is visible.
 *
 * Builds and loads the index of ELF, splits ADDR_FILE's addresses (one hex
 * ELF address per line, as the bench scripts draw them) into batches of B,
 * and runs every batch through svc_lookup_run with a response pool, as the
 * daemon does (best of several passes, one thread). Prints `key value` lines.
 *
 * usage: bench_response ELF ADDR_FILE [--batch B] [--passes N] [--gzip] [--run-only]
 *                       [--json]
 * (--gzip: responses gzipped, as for a client that sends Accept-Encoding: gzip;
 * --run-only: no bare-lookup passes, for a profiler's count of the run alone;
 * --json: each response written as Connect JSON, as the daemon does for an
 * application/json call: by svc_lookup_run itself with the codec, before any
 * gzip).
 * response_checksum is a hash of every response's bytes (of the first pass):
 * equal before and after a change that must not change the responses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "base/base_clock.h"
#include "bench/bench_io.h"
#include "service/resolve/svc_index_cache.h"
#include "service/rpc/svc_rpc.h"
#include "service/rpc/svc_rpc_json.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_index.h"

/* The response gzipped, as the RPC layer does for a response of 1 KiB or more. */
static bool gzip_body(struct evbuffer **body)
{
	size_t n = evbuffer_get_length(*body);
	if (n < 1024)
		return true;
	struct evbuffer *z = evbuffer_new();
	const void *plain = evbuffer_pullup(*body, -1);
	if (!z || !plain || !svc_gzip(plain, n, z)) {
		if (z)
			evbuffer_free(z);
		return false;
	}
	evbuffer_free(*body);
	*body = z;
	return true;
}

static void free_blob(void *p)
{
	free(p);
}

struct args {
	const char *elf_path, *addr_path;
	size_t batch;
	int passes;
	bool gzip;
	bool run_only;
	bool json;
};

/* The command line into a; false (told) on bad usage. */
static bool parse_args(int argc, char **argv, struct args *a)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_response ELF ADDR_FILE [--batch B] [--passes N] "
				"[--gzip] [--run-only] [--json]\n");
		return false;
	}
	a->elf_path = argv[1];
	a->addr_path = argv[2];
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--gzip"))
			a->gzip = true;
		else if (!strcmp(argv[i], "--run-only"))
			a->run_only = true;
		else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			a->batch = (size_t)strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			a->passes = atoi(argv[++i]);
		else {
			fprintf(stderr, "bench_response: unknown argument %s\n", argv[i]);
			return false;
		}
	}
	if (a->batch == 0)
		a->batch = 1;
	return true;
}

/* The index of the ELF file, held in an index cache as the daemon holds it. */
struct held {
	sym_index *idx;
	svc_index_cache *cache;
	svc_index_entry *entry;
	svc_response_pool *pool;
	svc_rpc_json *json;  /* SymbolizeResponse's JSON codec (--json) */
};

/* The index of ELF built, loaded and put in a cache, ELF freed; false (told) on failure. */
static bool hold(void *elf, size_t elf_size, struct held *h)
{
	sym_build_options opts = {0};
	sym_error err = {0};
	void *blob = NULL;
	size_t blob_size = 0;
	if (sym_index_build(elf, elf_size, &opts, &blob, &blob_size, &err) != SYM_OK ||
	    sym_index_load(blob, blob_size, &h->idx, &err) != SYM_OK) {
		fprintf(stderr, "bench_response: index: %s\n", err.msg);
		return false;
	}
	free(elf);
	h->cache = svc_index_cache_create(blob_size * 2);
	sym_build_id id = {.len = 4, .bytes = {1, 2, 3, 4}};
	h->entry = svc_index_cache_put(h->cache, &id, blob, blob_size, free_blob, h->idx);
	h->pool = svc_response_pool_create();
	if (!h->cache || !h->entry || !h->pool) {
		fprintf(stderr, "bench_response: out of memory\n");
		return false;
	}
	return true;
}

/* FNV-1a over a response's bytes: a checksum that stays the same across
 * builds (base_hash_bytes, the tables' hash, may change). */
static uint64_t checksum_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

struct figures {
	uint64_t frames, bytes, batches; /* of the first pass */
	uint64_t checksum;               /* of the first pass's response bytes */
	double best;                     /* seconds of the fastest pass */
};

/*
 * svc_lookup_run over every batch of the N locations, one request per batch
 * over the same Location array (and its arrays, all: built once, as the
 * daemon builds them when it decodes a request), a.passes times; false
 * (told) on failure.
 */
static bool measure_run(const struct args *a, const struct held *h,
			Symbolizer__V1__Location **locp, const svc_request_locations *all,
			size_t n, struct figures *f)
{
	Symbolizer__V1__Mapping pm = SYMBOLIZER__V1__MAPPING__INIT;
	Symbolizer__V1__Mapping *pmp = &pm;
	svc_lookup_mapping map = {.pb = &pm, .status = 1, .entry = h->entry};
	f->best = 1e30;
	for (int p = 0; p < a->passes; p++) {
		double t0 = base_mono_s();
		for (size_t off = 0; off < n; off += a->batch) {
			Symbolizer__V1__SymbolizeRequest req = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
			req.n_mappings = 1;
			req.mappings = &pmp;
			req.n_locations = n - off < a->batch ? n - off : a->batch;
			req.locations = locp + off;
			svc_request_locations locs = {req.n_locations, all->address + off,
						      all->mapping_index + off,
						      all->is_return + off};
			base_arena arena;
			base_arena_init(&arena, 64u << 20);
			svc_lookup_result res;
			svc_lookup_result_init(&res);
			struct evbuffer *body = evbuffer_new();
			if (!body)
				return false;
			svc_lookup_run(&req, &locs, &map, &arena, h->pool, a->json ? h->json : NULL,
				       body, &res);
			if (res.err.code != SVC_OK) {
				fprintf(stderr, "bench_response: %s\n", res.err.msg);
				return false;
			}
			if (a->gzip && !gzip_body(&body)) {
				fprintf(stderr, "bench_response: response encoding failed\n");
				return false;
			}
			if (p == 0) {
				f->frames += res.frames;
				f->bytes += evbuffer_get_length(body);
				f->batches++;
				size_t len = evbuffer_get_length(body);
				const void *bytes = evbuffer_pullup(body, -1);
				f->checksum = f->checksum * 0x100000001b3ull ^
					      (bytes ? checksum_bytes(bytes, len) : 0);
			}
			evbuffer_free(body);
			base_arena_deinit(&arena);
		}
		double t = base_mono_s() - t0;
		if (t < f->best)
			f->best = t;
	}
	return true;
}

/* The bare lookups of the same addresses, in the same process: the fastest pass. */
static double measure_lookups(const sym_index *idx, const uint64_t *addrs, size_t n, int passes,
			      uint64_t *sink)
{
	sym_frame fr[SVC_RESPONSE_MAX_LINES];
	double best = 1e30;
	for (int p = 0; p < passes; p++) {
		double t0 = base_mono_s();
		for (size_t i = 0; i < n; i++) {
			size_t k = sym_index_lookup(idx, addrs[i], fr, SVC_RESPONSE_MAX_LINES);
			*sink += k ? fr[0].line : 0;
		}
		double t = base_mono_s() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	struct args a = {.batch = 1000, .passes = 5};
	if (!parse_args(argc, argv, &a))
		return 2;
	size_t elf_size, n;
	void *elf = read_file(a.elf_path, &elf_size);
	uint64_t *addrs = read_addrs(a.addr_path, &n);
	struct held h = {0};
	if (!hold(elf, elf_size, &h))
		return 1;
	if (a.json && !(h.json = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor))) {
		fprintf(stderr, "bench_response: out of memory\n");
		return 1;
	}

	Symbolizer__V1__Location *locs = calloc(n, sizeof(*locs));
	Symbolizer__V1__Location **locp = calloc(n, sizeof(*locp));
	for (size_t i = 0; i < n; i++) {
		symbolizer__v1__location__init(&locs[i]);
		locs[i].address = addrs[i];
		locp[i] = &locs[i];
	}
	Symbolizer__V1__SymbolizeRequest whole = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	whole.n_locations = n;
	whole.locations = locp;
	base_arena arrays;
	base_arena_init(&arrays, 0);
	svc_request_locations all;
	struct figures f = {0};
	if (!svc_request_locations_of(&whole, &arrays, &all) ||
	    !measure_run(&a, &h, locp, &all, n, &f))
		return 1;
	uint64_t sink = 0;
	double best_lookup = a.run_only ? 0 : measure_lookups(h.idx, addrs, n, a.passes, &sink);
	printf("addresses %zu\n", n);
	printf("batch %zu\n", a.batch);
	printf("gzip %d\n", a.gzip);
	printf("json %d\n", a.json);
	printf("frames_per_address %.3f\n", (double)f.frames / (double)n);
	printf("response_bytes_avg %.0f\n", (double)f.bytes / (double)f.batches);
	printf("run_frames_per_second %.0f\n", (double)f.frames / f.best);
	printf("run_ns_per_address %.1f\n", f.best * 1e9 / (double)n);
	if (!a.run_only) {
		printf("lookup_frames_per_second %.0f\n", (double)f.frames / best_lookup);
		printf("lookup_ns_per_address %.1f\n", best_lookup * 1e9 / (double)n);
		printf("checksum %" PRIu64 "\n", sink);
	}
	printf("response_checksum %016" PRIx64 "\n", f.checksum);
	svc_index_entry_release(h.cache, h.entry);
	svc_index_cache_destroy(h.cache);
	svc_response_pool_destroy(h.pool);
	svc_rpc_json_destroy(h.json);
	base_arena_deinit(&arrays);
	free(locs);
	free(locp);
	free(addrs);
	return 0;
}
