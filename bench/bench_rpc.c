// SPDX-License-Identifier: Apache-2.0
/*
 * bench_rpc: end-to-end load generator for symbolizerd's Symbolize RPC.
 *
 * N client threads, each with one blocking HTTP/1.1 keep-alive connection to
 * 127.0.0.1:PORT, send M Connect unary requests (POST
 * /symbolizer.v1.SymbolizerService/Symbolize, application/proto) of B
 * addresses each, one request at a time per client, and time each request from
 * the first byte written to the last byte of the response read. The addresses
 * come from ADDR_FILE (one hex ELF address per line, as bench_symbolize.sh
 * writes them); each request is a random slice of it. Request bodies are
 * encoded with protobuf-c before the clock starts; every response is read
 * inside the clock (a real client reads its answers) to check the mapping
 * status and count the frames (Line entries): by a walk over the wire format
 * (default), or by protobuf-c's decoder (--decode protobuf-c), which costs the
 * client more CPU than the call costs the daemon.
 *
 * Prints one `key value` line per figure (frames/s, requests/s, p50/p99/max
 * latency, client CPU), as bench_rpc.sh reads them. Not a test: no figure is
 * checked. With --warm it instead repeats one request until the mapping is OK
 * (the index is built and cached) and exits.
 *
 * usage: bench_rpc --port P --build-id HEX --addrs FILE [--clients N]
 *                  [--requests M] [--batch B] [--seed S]
 *                  [--decode walk|protobuf-c] [--gzip] [--json] [--grpc] [--warm]
 *
 * --gzip sends Accept-Encoding: gzip (as Connect clients do by default) and
 * inflates the gzipped responses (libdeflate, checked whole), inside the
 * clock. --json sends the requests in Connect JSON (application/json) and
 * reads the JSON responses by a scan of their text (bench_rpc_json.c);
 * --warm stays binary. --grpc calls over gRPC instead (h2c with prior
 * knowledge, one stream at a time on each client's connection, nghttp2 in
 * bench_rpc_grpc.c), binary only.
 *
 * This file: the flags, the client threads, the report; the HTTP client is in
 * bench_rpc_http.c, the messages in bench_rpc_wire.c and bench_rpc_json.c.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "bench/bench_io.h"
#include "bench/bench_rpc_impl.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"

#define N_BODIES 32 /* distinct pre-encoded requests, cycled */

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bench_rpc: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct shared {
	int port;
	int requests;
	size_t batch;
	bool gzip;       /* --gzip */
	bool decode_pbc; /* --decode protobuf-c */
	bool json;       /* --json */
	bool grpc;       /* --grpc */
	const struct body *bodies;
	pthread_barrier_t start;
};

struct client {
	struct shared *sh;
	int id;
	double *lat; /* seconds, one per request */
	uint64_t frames, located, not_ok, reconnects;
	uint64_t wire_bytes, plain_bytes; /* of the timed responses */
	double t_end;
	double cpu; /* thread CPU seconds */
	pthread_t th;
};

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct shared *sh = cl->sh;
	struct conn c = {.port = sh->port, .accept_gzip = sh->gzip, .json = sh->json};
	int (*call_fn)(struct conn *, const struct body *, size_t *) = sh->grpc ? grpc_call : call;
	if (sh->grpc)
		grpc_open(&c);
	else
		conn_open(&c);
	size_t len;
	/* One untimed exchange: connection set up, server and client warm. */
	int st = call_fn(&c, &sh->bodies[cl->id % N_BODIES], &len);
	if (st != 200)
		die("warm-up request: HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
	if (!sh->json)
		decode(c.buf, len, sh->batch, true, sh->decode_pbc);
	pthread_barrier_wait(&sh->start);
	c.wire_bytes = c.plain_bytes = 0;
	double cpu0 = base_thread_cpu_s();
	for (int i = 0; i < sh->requests; i++) {
		const struct body *b = &sh->bodies[(size_t)(cl->id * 7 + i) % N_BODIES];
		double t0 = base_mono_s();
		st = call_fn(&c, b, &len);
		if (st != 200)
			die("HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
		struct outcome o = sh->json ? decode_json(c.buf, len)
					    : decode(c.buf, len, sh->batch, false, sh->decode_pbc);
		cl->lat[i] = base_mono_s() - t0;
		cl->frames += o.frames;
		cl->located += o.located;
		cl->not_ok += o.status != SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK;
	}
	cl->t_end = base_mono_s();
	cl->cpu = base_thread_cpu_s() - cpu0;
	cl->reconnects = c.reconnects;
	cl->wire_bytes = c.wire_bytes;
	cl->plain_bytes = c.plain_bytes;
	grpc_close(&c);
	conn_close(&c);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_rpc --port P --build-id HEX --addrs FILE [--clients N] "
			"[--requests M] [--batch B] [--seed S] [--decode walk|protobuf-c] [--gzip] [--json] "
			"[--grpc] [--warm]\n");
	exit(2);
}

struct opts {
	int port, clients, requests;
	size_t batch;
	uint64_t seed;
	const char *build_id, *addr_path;
	bool warm, gzip, decode_pbc, json, grpc;
};

/* The command line into o; usage() on bad usage. */
static void parse_args(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--decode") && i + 1 < argc) {
			const char *d = argv[++i];
			if (strcmp(d, "protobuf-c") && strcmp(d, "walk"))
				die("--decode protobuf-c or walk");
			o->decode_pbc = !strcmp(d, "protobuf-c");
			continue;
		}
		if (!strcmp(a, "--gzip")) {
			o->gzip = true;
			continue;
		}
		if (!strcmp(a, "--json")) {
			o->json = true;
			continue;
		}
		if (!strcmp(a, "--grpc")) {
			o->grpc = true;
			continue;
		}
		if (!strcmp(a, "--warm")) {
			o->warm = true;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--port"))
			o->port = atoi(v);
		else if (!strcmp(a, "--build-id"))
			o->build_id = v;
		else if (!strcmp(a, "--addrs"))
			o->addr_path = v;
		else if (!strcmp(a, "--clients"))
			o->clients = atoi(v);
		else if (!strcmp(a, "--requests"))
			o->requests = atoi(v);
		else if (!strcmp(a, "--batch"))
			o->batch = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 10);
		else
			usage();
		i++;
	}
	if (o->port <= 0 || o->port > 65535 || !o->build_id || !o->addr_path || o->clients < 1 ||
	    o->requests < 1 || o->batch < 1)
		usage();
	if (o->grpc && (o->json || o->gzip))
		die("--grpc sends binary, uncompressed calls (no --json, no --gzip)");
}

/* --warm: one request repeated until the mapping is OK (the index built and cached). */
static void warm_up(const struct opts *o, const uint64_t *pool, size_t n_pool)
{
	struct body b = encode(o->build_id, pool, n_pool, 0, o->batch, 60000);
	struct conn c = {.port = o->port, .accept_gzip = o->gzip};
	conn_open(&c);
	double t0 = base_mono_s();
	for (;;) {
		size_t len;
		int st = call(&c, &b, &len);
		if (st != 200)
			die("warm-up: HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
		struct outcome out = decode(c.buf, len, o->batch, true, o->decode_pbc);
		if (out.status == SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK) {
			printf("warm_seconds %.3f\n", base_mono_s() - t0);
			printf("warm_frames %" PRIu64 "\n", out.frames);
			break;
		}
		if (out.status != SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_PENDING)
			die("warm-up: mapping status %d (not OK, not PENDING)", out.status);
		if (base_mono_s() - t0 > 300)
			die("warm-up: still PENDING after 300 s");
	}
	conn_close(&c);
	free(b.data);
}

/* What the clients did, summed. */
struct totals {
	double wall; /* seconds from the start barrier to the last client's end */
	double cpu;  /* the process's CPU seconds over the run */
	uint64_t frames, located, not_ok, reconnects;
	uint64_t wire_bytes, plain_bytes;
	double *lat; /* every request's latency, sorted */
	size_t n_lat;
};

/* The joined clients' figures into t (their latencies freed). */
static void gather(struct client *cl, int clients, int requests, double t0, struct totals *t)
{
	double t_end = 0;
	size_t k = 0;
	t->n_lat = (size_t)clients * (size_t)requests;
	t->lat = malloc(t->n_lat * sizeof(double));
	if (!t->lat)
		die("out of memory");
	for (int i = 0; i < clients; i++) {
		if (cl[i].t_end > t_end)
			t_end = cl[i].t_end;
		t->frames += cl[i].frames;
		t->located += cl[i].located;
		t->not_ok += cl[i].not_ok;
		t->reconnects += cl[i].reconnects;
		t->wire_bytes += cl[i].wire_bytes;
		t->plain_bytes += cl[i].plain_bytes;
		memcpy(t->lat + k, cl[i].lat, (size_t)requests * sizeof(double));
		k += (size_t)requests;
		free(cl[i].lat);
	}
	t->wall = t_end - t0;
	qsort(t->lat, t->n_lat, sizeof(double), cmp_double);
}

/* The clients started together on the barrier, run and joined. */
static void run_clients(struct shared *sh, int clients, struct totals *t)
{
	pthread_barrier_init(&sh->start, NULL, (unsigned)clients + 1);
	struct client *cl = calloc((size_t)clients, sizeof(*cl));
	if (!cl)
		die("out of memory");
	for (int i = 0; i < clients; i++) {
		cl[i].sh = sh;
		cl[i].id = i;
		cl[i].lat = calloc((size_t)sh->requests, sizeof(double));
		if (!cl[i].lat || pthread_create(&cl[i].th, NULL, client_main, &cl[i]) != 0)
			die("cannot start client %d", i);
	}
	struct rusage ru0, ru1;
	pthread_barrier_wait(&sh->start);
	double t0 = base_mono_s();
	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < clients; i++)
		pthread_join(cl[i].th, NULL);
	getrusage(RUSAGE_SELF, &ru1);
	gather(cl, clients, sh->requests, t0, t);
	t->cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
		 (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		 (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	pthread_barrier_destroy(&sh->start);
	free(cl);
}

/* One `key value` line per figure, as bench_rpc.sh reads them. */
static void report(const struct opts *o, const struct totals *t, size_t body_bytes)
{
	double wall = t->wall, cpu = t->cpu;
	size_t n_lat = t->n_lat;
	double addresses = (double)n_lat * (double)o->batch;
	printf("clients %d\n", o->clients);
	printf("batch %zu\n", o->batch);
	printf("requests %zu\n", n_lat);
	printf("request_bytes_avg %.0f\n", (double)body_bytes / N_BODIES);
	printf("seconds %.3f\n", wall);
	printf("response_wire_bytes_avg %.0f\n", (double)t->wire_bytes / (double)n_lat);
	printf("response_bytes_avg %.0f\n", (double)t->plain_bytes / (double)n_lat);
	printf("frames %" PRIu64 "\n", t->frames);
	printf("frames_per_address %.3f\n", (double)t->frames / addresses);
	printf("found_fraction %.4f\n", (double)t->located / addresses);
	printf("not_ok_responses %" PRIu64 "\n", t->not_ok);
	printf("reconnects %" PRIu64 "\n", t->reconnects);
	printf("frames_per_second %.0f\n", (double)t->frames / wall);
	printf("addresses_per_second %.0f\n", addresses / wall);
	printf("requests_per_second %.1f\n", (double)n_lat / wall);
	printf("latency_p50_ms %.3f\n", pct(t->lat, n_lat, 0.50) * 1e3);
	printf("latency_p99_ms %.3f\n", pct(t->lat, n_lat, 0.99) * 1e3);
	printf("latency_max_ms %.3f\n", t->lat[n_lat - 1] * 1e3);
	printf("client_decode %s%s%s\n", o->json ? "json" : o->decode_pbc ? "protobuf-c" : "walk",
	       o->gzip ? "+gzip" : "", o->grpc ? "+grpc" : "");
	printf("client_cpu_seconds %.3f\n", cpu);
	printf("client_cpu_fraction %.3f\n", cpu / wall);
}

int main(int argc, char **argv)
{
	struct opts o = {.clients = 1, .requests = 100, .batch = 1000, .seed = 1};
	parse_args(argc, argv, &o);
	size_t n_pool;
	uint64_t *pool = read_addrs(o.addr_path, &n_pool);
	if (o.warm) {
		warm_up(&o, pool, n_pool);
		free(pool);
		return 0;
	}

	struct body bodies[N_BODIES];
	uint64_t rs = o.seed;
	size_t body_bytes = 0;
	for (int i = 0; i < N_BODIES; i++) {
		size_t start = (size_t)(rng_next(&rs) % n_pool);
		bodies[i] = o.json ? encode_json(o.build_id, pool, n_pool, start, o.batch, 0)
				   : encode(o.build_id, pool, n_pool, start, o.batch, 0);
		body_bytes += bodies[i].len;
	}
	struct shared sh = {.port = o.port,
			    .requests = o.requests,
			    .batch = o.batch,
			    .gzip = o.gzip,
			    .decode_pbc = o.decode_pbc,
			    .json = o.json,
			    .grpc = o.grpc,
			    .bodies = bodies};
	struct totals t = {0};
	run_clients(&sh, o.clients, &t);
	report(&o, &t, body_bytes);
	for (int i = 0; i < N_BODIES; i++)
		free(bodies[i].data);
	free(t.lat);
	free(pool);
	return t.not_ok ? 3 : 0;
}
