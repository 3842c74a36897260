/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_status: GET /buildid/ID/status, "why is this build ID (not)
 * symbolized?" as JSON (json-c): what the store holds, the negative-cache
 * entries (store and memory) and when they expire, each source's last
 * outcome for the build ID, every upstream's circuit breaker (open since
 * when, and the failures that opened it), and the index (loaded, stored,
 * building, queued for build memory, or failed and why). From memory and one
 * store metadata read: it never starts a fetch or a build. The schema is
 * docs/api.md's (/buildid/ID/status).
 */
#ifndef SVC_STATUS_H
#define SVC_STATUS_H

#include "service/fetch/svc_fetcher.h"
#include "service/resolve/svc_resolver.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

struct evbuffer;

/* Writes the JSON document of id into out; returns the HTTP status (200, or
 * 500 when out of memory). Loop thread. */
int svc_status_render(stor_db *store, const svc_fetcher *fetcher, const svc_resolver *resolver,
		      const sym_build_id *id, struct evbuffer *out);

/* GET /status: the daemon's sources as a whole (the S3 tier's credentials
 * and queue, every upstream's breaker), as JSON into out. The HTTP status. */
int svc_status_global_render(const svc_fetcher *fetcher, struct evbuffer *out);

#endif
