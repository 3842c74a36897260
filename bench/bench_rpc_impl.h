/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_rpc_impl: what bench_rpc's files share (bench_rpc.c: flags, client
 * threads, report; bench_rpc_http.c: the HTTP/1.1 keep-alive client;
 * bench_rpc_grpc.c: the gRPC client on nghttp2, --grpc; bench_rpc_wire.c:
 * requests encoded, responses read). Not for use outside
 * bench_rpc.
 */
#ifndef BENCH_RPC_IMPL_H
#define BENCH_RPC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_HEADER 16384
#define MAX_BODY (512u << 20)

/* Prints "bench_rpc: ..." to stderr and exits 1 (bench_rpc.c). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A request body, encoded before the clock starts. */
struct body {
	uint8_t *data;
	size_t len;
};

/* One request of BATCH addresses from POOL starting at START (wrapping). */
struct body encode(const char *build_id, const uint64_t *pool, size_t n_pool, size_t start,
		   size_t batch, uint32_t max_wait_ms);

/* The same request in Connect JSON (bench_rpc_json.c). */
struct body encode_json(const char *build_id, const uint64_t *pool, size_t n_pool, size_t start,
			size_t batch, uint32_t max_wait_ms);

struct outcome {
	uint64_t frames;
	uint64_t located; /* locations with at least one line */
	int status;       /* of the first mapping */
};

/*
 * What a response says: by the wire walk, or by protobuf-c when WITH_PBC (and
 * by both, which must agree, when FIRST).
 */
struct outcome decode(const uint8_t *data, size_t len, size_t batch, bool first, bool with_pbc);

/* What a JSON response says (a scan of its text). */
struct outcome decode_json(const uint8_t *data, size_t len);

struct conn {
	int fd;
	int port;
	char hdr[MAX_HEADER + 1];
	uint8_t *buf; /* bytes read past the header (body and beyond) */
	size_t buf_cap;
	size_t carry; /* bytes of the next response already read */
	uint64_t reconnects;
	uint64_t wire_bytes, plain_bytes; /* response bodies as received, and inflated */
	bool accept_gzip; /* --gzip: requests carry Accept-Encoding: gzip */
	bool json;        /* --json: Content-Type application/json */
	bool gzipped;     /* the last response had Content-Encoding: gzip */
	struct libdeflate_decompressor *inflater; /* made at the first gzipped body */
	uint8_t *plain;   /* the other buffer, which a gzipped body inflates into */
	size_t plain_cap;
	struct bench_h2 *h2; /* --grpc: the nghttp2 session (bench_rpc_grpc.c) */
};

/* Lets go of the connection's buffers and inflater (and closes it). */
void conn_close(struct conn *c);

/* Connects to 127.0.0.1:c->port. */
void conn_open(struct conn *c);

/*
 * One request B and its response, read into c->buf (inflated when gzipped);
 * reconnects when the server closes the connection. Returns the HTTP status
 * and sets *len to the body's length.
 */
int call(struct conn *c, const struct body *b, size_t *len);

/*
 * --grpc (bench_rpc_grpc.c): conn_open and an HTTP/2 client session on it;
 * one gRPC call of B, its message read into c->buf (returns 200, dies on
 * any other outcome); the session let go (conn_close closes the rest).
 */
void grpc_open(struct conn *c);
int grpc_call(struct conn *c, const struct body *b, size_t *len);
void grpc_close(struct conn *c);

#endif
