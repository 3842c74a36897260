/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_debuginfod: the daemon as a debuginfod server (issue 13, items 1 and 2).
 *
 * GET and HEAD of /buildid/ID/debuginfo, /buildid/ID/executable,
 * /buildid/ID/section/NAME and /buildid/ID/source/PATH (svc_debuginfod_source.c:
 * a file a package archive holds, served when the build ID's debug info names
 * it) (and GET /buildid/ID/status, the daemon's own
 * JSON page of why a build ID is or is not symbolized, through a callback), answered from the store, else through the fetcher
 * (local debug dirs, then upstreams; single flight, negative cache) without
 * blocking the loop: store reads and section inflation run on the pool.
 * Headers as elfutils' debuginfod sends them; a request's
 * X-DEBUGINFOD-MAXSIZE is honoured (406). The path is percent-decoded before it
 * is validated: build IDs are lowercase hex of 2..128 digits, section names
 * printable, without '/', at most SVC_DEBUGINFOD_SECTION_MAX bytes (else 400).
 *
 * Federation loops: a request carrying X-Symbolizer-Hops >= max_hops is
 * answered under SVC_FETCH_POLICY_LOCAL (store and local sources, no
 * upstream); every upstream request of the fetcher carries
 * X-Symbolizer-Hops: 1. A request carrying X-Symbolizer-Peer (from a replica
 * through the peer tier, i.e. the nginx front that routed it here, the build
 * ID's owner) is answered under SVC_FETCH_POLICY_OWNER: every source but the
 * peer tier, so it never loops back.
 *
 * Bodies: the store's pinned value (its decompressed blob: one buffer of the
 * file's size) is handed to evhttp by reference, shared by every reply that
 * sends the same build ID at the same time, and released after the last one
 * is written (svc_debuginfod_body.c).
 *
 * On the event_base's thread only.
 */
#ifndef SVC_DEBUGINFOD_H
#define SVC_DEBUGINFOD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/fetch/svc_fetcher.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

struct evhttp_request;
struct evbuffer;

#define SVC_DEBUGINFOD_SECTION_MAX 128

typedef void (*svc_debuginfod_reply_fn)(void *arg, struct evhttp_request *req, int status,
					struct evbuffer *body);

/* GET /buildid/ID/status: writes the document into body, returns the HTTP
 * status (the daemon's status page, svc_status.c; answered at once). */
typedef int (*svc_debuginfod_status_fn)(void *arg, const sym_build_id *id, struct evbuffer *body);

typedef struct svc_debuginfod_options {
	stor_db *store;
	svc_fetcher *fetcher;        /* asked under each request's policy */
	struct svc_pool *pool;       /* store reads and section inflation run here */
	/* Asked for /executable when the store holds a debug file without code
	 * (it keeps one file per build ID); the executable is read, not stored. */
	char *const *debug_dirs;
	size_t n_debug_dirs;
	uint32_t max_hops;
	uint64_t max_section_bytes;  /* cap of a decompressed image (section requests) */
	svc_debuginfod_reply_fn reply;
	void *arg;
	svc_debuginfod_status_fn status;  /* NULL: /status is 404 */
	void *status_arg;
	/* /buildid/ID/source/PATH: the build ID's index says whether its debug
	 * info names PATH; the package catalogue holds the file. NULL: 404. */
	struct svc_resolver *resolver;
	struct svc_packages *packages;
	uint64_t max_source_bytes;   /* cap of one source file (0: none) */
} svc_debuginfod_options;

typedef struct svc_debuginfod svc_debuginfod;

/* NULL when out of memory or a debug dir's source cannot be made. */
svc_debuginfod *svc_debuginfod_create(const svc_debuginfod_options *o);
void svc_debuginfod_destroy(svc_debuginfod *d);  /* NULL: no-op */

/* Handles path (the request's path, query removed) when it starts with
 * /buildid/ and the method is GET or HEAD; false otherwise. */
bool svc_debuginfod_handle(svc_debuginfod *d, struct evhttp_request *req, const char *path);

/* symbolizer_debuginfod_requests_total{kind,code}, symbolizer_debuginfod_bytes_total */
void svc_debuginfod_render_metrics(const svc_debuginfod *d, base_buf *out);

#endif
