// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod_source: GET and HEAD /buildid/ID/source/PATH, a source file of
 * a build ID, as elfutils' debuginfod serves it from -debugsource packages.
 *
 * The build ID is resolved first (svc_resolver: its index from memory or the
 * store, else its debug info from every source, then an index build), so the
 * request is answered only for a path the build ID's own debug info names
 * (sym_index_names_file, both sides canonical): an uploaded debug file cannot
 * make the server hand out any other file a package holds. The file itself
 * comes from the package catalogue (svc_packages_find_source): a member of a
 * package under --package-dir, from the package nearest the one holding the
 * build ID's debug file; else it is relayed from the upstreams
 * (svc_fetch_source_start: through the fetcher the request's hops choose,
 * none past the hop limit), spooled, sent, not stored. The path never touches
 * the local file system.
 *
 * 404: unknown build ID, a path its debug info does not name, or one no
 * package holds; 406: larger than X-DEBUGINFOD-MAXSIZE; 503: sources failing,
 * a package changed since its scan, or no worker free. Headers as for the
 * other files, with X-DEBUGINFOD-FILE (the path) and X-DEBUGINFOD-ARCHIVE (the
 * package).
 */
#include "service/debuginfod/svc_debuginfod_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "service/core/svc_evbuffer.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_packages.h"
#include "service/resolve/svc_resolver.h"
#include "symbolizer/sym_index.h"

enum { RELAY = 1 };  /* status: no package holds it; ask the upstreams */

typedef struct sreq {
	svc_debuginfod *d;
	struct evhttp_request *req;
	bool head;
	sym_build_id id;
	uint64_t max_size;           /* X-DEBUGINFOD-MAXSIZE; UINT64_MAX: none */
	uint64_t limit;              /* the smaller of max_size and the server's cap */
	svc_fetcher *relay;          /* asked when no package holds it; NULL: none */
	svc_fetch_policy policy;     /* which of its upstreams */
	char path[SVC_DEBUGINFOD_SOURCE_MAX + 1];
	svc_index_entry *entry;      /* the build ID's index, referenced */
	/* filled on a worker */
	int status;
	char why[160];
	svc_package_file file;
} sreq;

static void sreq_free(sreq *r)
{
	if (r->entry)
		svc_resolver_release(r->d->o.resolver, r->entry);
	free(r->file.data);
	free(r);
}

static void fail(sreq *r, int status, const char *why)
{
	svc_dbg_reply_error(r->d, r->req, K_SOURCE, status, why);
	sreq_free(r);
}

/* On a worker: the file-table check, then the package member. */
static void find(void *job)
{
	sreq *r = job;
	if (!sym_index_names_file(r->entry->index, r->path)) {
		r->status = 404;
		snprintf(r->why, sizeof(r->why), "the build ID's debug info does not name this file");
		return;
	}
	if (!r->d->o.packages) {
		r->status = RELAY;
		return;
	}
	uint64_t limit = r->limit;
	svc_error err = {0};
	svc_errc e = svc_packages_find_source(r->d->o.packages, &r->id, r->path, limit, &r->file,
					      &err);
	switch (e) {
	case SVC_OK:
		r->status = 200;
		return;
	case SVC_E_TOO_LARGE:
		r->status = limit == r->max_size ? 406 : 404;
		snprintf(r->why, sizeof(r->why), "%s",
			 r->status == 406 ? "larger than X-DEBUGINFOD-MAXSIZE"
					  : "larger than the server's cap on source files");
		return;
	case SVC_E_NOT_FOUND:
		r->status = RELAY;
		return;
	default:
		r->status = 503;  /* a package changed since its scan: a rescan is coming */
		snprintf(r->why, sizeof(r->why), "package unreadable now; try again");
		return;
	}
}

/* The headers; archive: the package it came from, or NULL (relayed). */
static void headers(sreq *r, size_t size, const char *archive)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	char v[32];
	snprintf(v, sizeof(v), "%zu", size);
	evhttp_add_header(h, "Content-Length", v);
	evhttp_add_header(h, "X-DEBUGINFOD-SIZE", v);
	evhttp_add_header(h, "X-DEBUGINFOD-FILE", r->path);
	if (archive) {
		evhttp_add_header(h, "X-DEBUGINFOD-ARCHIVE", archive);
		svc_dbg_last_modified(r->req, r->file.mtime_ns / 1000000);
	}
	evhttp_add_header(h, "Content-Type", "application/octet-stream");
}

/* On the loop: the upstreams' answer. */
static void relayed(void *arg, svc_fetch_status st, svc_http_result *res, const char *from,
		    const char *error)
{
	sreq *r = arg;
	(void)from;
	char why[SYM_ERROR_MSG_MAX + 32];
	if (st == SVC_FETCH_NOT_FOUND)
		return fail(r, 404, "no package archive or upstream holds this file");
	if (st == SVC_FETCH_TOO_LARGE)
		return fail(r, r->limit == r->max_size ? 406 : 404,
			    r->limit == r->max_size ? "larger than X-DEBUGINFOD-MAXSIZE"
						    : "larger than the server's cap on source files");
	if (st != SVC_FETCH_OK) {
		snprintf(why, sizeof(why), "upstream trouble; try again (%s)", error);
		return fail(r, 503, why);
	}
	struct evbuffer *body = evbuffer_new();
	if (!body)
		return fail(r, 500, "out of memory");
	int rc = 0;
	if (!r->head && res->size) {
		if (res->fd >= 0) {
			rc = evbuffer_add_file(body, res->fd, 0, (ev_off_t)res->size);
			res->fd = rc == 0 ? -1 : res->fd;  /* the evbuffer closes it */
		} else {
			rc = svc_evbuffer_give(body, res->body, res->size) ? 0 : -1;
			res->body = rc == 0 ? NULL : res->body;
		}
	}
	if (rc != 0) {
		evbuffer_free(body);
		return fail(r, 500, "out of memory");
	}
	if (!r->head)
		r->d->bytes += res->size;
	headers(r, res->size, NULL);
	svc_dbg_reply(r->d, r->req, K_SOURCE, 200, body);
	evbuffer_free(body);
	sreq_free(r);
}

/* On the loop: the reply. */
static void found(void *job, bool cancelled)
{
	sreq *r = job;
	if (cancelled)
		return fail(r, 503, "shutting down");
	if (r->status == RELAY) {
		if (!r->relay)
			return fail(r, 404, "no package archive holds this file");
		svc_resolver_release(r->d->o.resolver, r->entry);
		r->entry = NULL;
		if (svc_fetch_source_start(r->relay, &r->id, r->path, r->limit, r->policy, relayed,
					   r) != SVC_OK)
			fail(r, 503, "cannot ask the upstreams now");
		return;
	}
	if (r->status != 200)
		return fail(r, r->status, r->why);
	struct evbuffer *body = evbuffer_new();
	if (!body)
		return fail(r, 500, "out of memory");
	if (!r->head && r->file.size) {
		if (!svc_evbuffer_give(body, r->file.data, r->file.size)) {
			evbuffer_free(body);
			return fail(r, 500, "out of memory");
		}
		r->file.data = NULL;  /* freed once written */
		r->d->bytes += r->file.size;
	}
	headers(r, r->file.size, r->file.package);
	svc_dbg_reply(r->d, r->req, K_SOURCE, 200, body);
	evbuffer_free(body);
	sreq_free(r);
}

static void resolved(void *arg, svc_resolution *res)
{
	sreq *r = arg;
	if (res->status != SVC_RESOLVE_OK) {
		char why[SYM_ERROR_MSG_MAX + 32];
		snprintf(why, sizeof(why), "build ID %s: %s", svc_resolve_status_name(res->status),
			 res->error);
		bool again = res->status == SVC_RESOLVE_ERROR || res->status == SVC_RESOLVE_PENDING;
		return fail(r, again ? 503 : 404, why);
	}
	r->entry = res->entry;
	if (!svc_pool_submit(r->d->o.pool, r, find, found))
		fail(r, 503, "busy; try again");
}

void svc_debuginfod_source(svc_debuginfod *d, struct evhttp_request *req, const sym_build_id *id,
			   const char *path, uint64_t max_size, svc_fetcher *relay,
			   svc_fetch_policy policy)
{
	if (!d->o.resolver) {
		svc_dbg_reply_error(d, req, K_SOURCE, 404, "no sources here");
		return;
	}
	sreq *r = calloc(1, sizeof(*r));
	if (!r) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	r->d = d;
	r->req = req;
	r->head = evhttp_request_get_command(req) == EVHTTP_REQ_HEAD;
	r->id = *id;
	r->max_size = max_size;
	uint64_t cap = d->o.max_source_bytes ? d->o.max_source_bytes : UINT64_MAX;
	r->limit = max_size < cap ? max_size : cap;
	r->relay = relay;
	r->policy = policy;
	snprintf(r->path, sizeof(r->path), "%s", path);
	svc_resolution now = {0};
	if (!svc_resolver_resolve(d->o.resolver, id, resolved, r, &now))
		resolved(r, &now);
}
