/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_upload: uploads of private binaries (issue 13, item 3).
 *
 * PUT /buildid/ID/debuginfo and PUT /buildid/ID/executable put a file in the
 * store when:
 *   - uploads are enabled (a token was configured; else 403),
 *   - the peer is on loopback, unless allow_remote (we have no TLS; else 403),
 *   - the request carries "Authorization: Bearer TOKEN" with the configured
 *     token (compared in constant time; else 401),
 *   - the body is at most max_upload_bytes (else 413; no Content-Length and
 *     not chunked: 411),
 *   - the body is an ELF whose GNU build ID is the one in the URL, checked by
 *     src_check_file as every fetched file is (else 400); /debuginfo needs
 *     DWARF in it,
 *   - the store holds nothing as good: files rank executable (no DWARF) <
 *     debug file without .debug_line < debug file with lines. A better file
 *     replaces a weaker one (200, "replaced"); the same bytes again answer
 *     200 "unchanged"; anything else 409 Conflict unless ?force=1. Nothing
 *     held: 201.
 * The stored file's old index goes with it (the store deletes it in the same
 * batch; the replaced hook drops the loaded one, any remembered failure and
 * the built type layouts).
 * Uploads of one build ID run one after the other (a queue per build ID on the
 * loop), so concurrent uploads of one file store it once: one 201, the others
 * 200 "unchanged". A debug file using dwz (.gnu_debugaltlink) is accepted;
 * its supplementary file is then looked for through the fetcher (store, local
 * dirs, upstreams) before the answer, which says when it was found nowhere
 * (header X-Symbolizer-Alt: missing, and the build ID to upload it under).
 *
 * The body: libevent 2.1's evhttp reads a request's whole body before it
 * calls the route, so the server (service/http's svc_body_spool.c) writes an
 * authorized upload's body to an unlinked file of DATA/tmp as it arrives and
 * hands it to evhttp as one mapped segment: the request's input buffer is
 * then the file, mapped, not memory (a chunked body is held in memory). The
 * worker reads it in one piece from there (evbuffer_pullup of one segment),
 * checks it and writes it to the store (and the S3 tier, which takes the same
 * pointer: mapped file or memory alike). Bytes of uploads in flight are
 * counted against --upload-memory-bytes from their head on (503 past it).
 *
 * ShouldUpload (an RPC method, svc_upload_should.c): per build ID, whether the
 * server can find it anywhere (it asks the fetcher: store, local dirs,
 * upstreams, negative cache), waiting up to Options.max_wait_ms as Symbolize
 * does and answering PENDING past it.
 *
 * Loop thread only, but for the two pure helpers at the end.
 */
#ifndef SVC_UPLOAD_H
#define SVC_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"
#include "service/core/svc_pool.h"
#include "service/fetch/svc_fetcher.h"
#include "symbolizer/sym_build_id.h"
#include "service/rpc/svc_rpc.h"
#include "storage/stor_db.h"

struct event_base;
struct evhttp_request;
struct evbuffer;

#define SVC_UPLOAD_TOKEN_MAX 4096
/* The shortest token accepted (svc_upload_auth.c). */
#define SVC_UPLOAD_TOKEN_MIN 16

typedef void (*svc_upload_reply_fn)(void *arg, struct evhttp_request *req, int status,
				    struct evbuffer *body);

typedef struct svc_upload_options {
	struct event_base *base;
	stor_db *store;
	svc_fetcher *fetcher;        /* ShouldUpload's searches, dwz supplementary files */
	/* After a file is stored (on the loop): the server drops what it built
	 * from the old one (loaded index, remembered failures, layouts). */
	void (*replaced)(void *arg, const sym_build_id *id);
	svc_pool *pool;              /* checks and store writes run here */
	const char *token_file;      /* NULL or "": uploads disabled */
	bool allow_remote;           /* accept uploads from non-loopback peers */
	const char *trusted_proxies; /* --trusted-proxies: judged by X-Forwarded-For (NULL: none) */
	uint64_t max_upload_bytes;
	int64_t default_wait_ms;     /* ShouldUpload: as Symbolize's */
	int64_t max_wait_ms;
	uint32_t max_candidates;     /* ShouldUpload: build IDs per call */
	svc_upload_reply_fn reply;
	void *arg;
} svc_upload_options;

typedef struct svc_upload svc_upload;

/* NULL with err set when the token file cannot be read or is empty, or out of memory. */
svc_upload *svc_upload_create(const svc_upload_options *o, svc_error *err);
/* After the pool and the fetcher are destroyed (their callbacks use it). NULL: no-op. */
void svc_upload_destroy(svc_upload *u);

/* Whether uploads are enabled (a token is configured). */
bool svc_upload_enabled(const svc_upload *u);

/* Whether a request from peer ("127.0.0.1") with this Authorization value
 * (NULL: none) may send an upload's body: uploads on, the peer allowed, the
 * token right. Decided from the head, before the body is read (the server's
 * cap on it); the handler checks again and answers 403/401. Any thread. */
bool svc_upload_may_send(const svc_upload *u, const char *peer, const char *authorization);

/* Handles req when it is a PUT under /buildid/ (path without the query,
 * query or NULL); false (nothing done) otherwise. */
bool svc_upload_handle(svc_upload *u, struct evhttp_request *req, const char *path,
		       const char *query);

/* Uploads accepted and not answered yet (a stopping server waits for them). */
unsigned svc_upload_in_flight(const svc_upload *u);

/* The ShouldUpload method (ctx: the svc_upload). */
void svc_upload_should_handle(void *ctx, svc_rpc_call *call);

/* symbolizer_uploads_total{result}, symbolizer_upload_bytes_total,
 * symbolizer_should_upload_total{answer}. */
void svc_upload_render_metrics(const svc_upload *u, base_buf *out);

/* ---- pure helpers (any thread), public for their unit tests ---- */

/* Whether the Authorization header value is "Bearer TOKEN" with token (of
 * token_len bytes); the time it takes depends on token_len only. */
bool svc_upload_token_ok(const char *authorization, const char *token, size_t token_len);

/* Whether a peer address (as evhttp_connection_get_peer gives it: "127.0.0.1",
 * "::1", "::ffff:127.0.0.2") may upload: loopback always, others only with
 * allow_remote. */
bool svc_upload_peer_allowed(const char *address, bool allow_remote);

/* --trusted-proxies (svc_upload_proxy.c): addresses and CIDR blocks. */
#define SVC_PROXIES_MAX 64
#define SVC_FORWARDED_MAX 4096   /* longest X-Forwarded-For read */
typedef struct svc_proxy_net {
	uint8_t addr[16];        /* IPv4 as ::ffff:a.b.c.d */
	int bits;                /* prefix length over the 16 bytes */
} svc_proxy_net;
typedef struct svc_proxies {
	svc_proxy_net nets[SVC_PROXIES_MAX];
	size_t n;
} svc_proxies;

/* Parses "10.0.0.0/8, 127.0.0.1, ::1" ("" or NULL: none); false with err set
 * naming the bad entry. */
bool svc_proxies_parse(svc_proxies *p, const char *list, svc_error *err);

/* The client's address into out: the peer, unless the peer is a trusted
 * proxy with an X-Forwarded-For (forwarded; NULL: none), then the rightmost
 * address of it that is not a trusted proxy. False when it cannot be told
 * (a malformed peer or header, a header over SVC_FORWARDED_MAX). */
bool svc_proxies_client(const svc_proxies *p, const char *peer, const char *forwarded,
			char *out, size_t cap);

#endif
