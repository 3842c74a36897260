/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_server_impl: the server's state, shared by the files of the HTTP room
 * (svc_server.c: routes and lifecycle; svc_metrics.c: /metrics).
 * Not for use outside service/http/.
 */
#ifndef SVC_SERVER_IMPL_H
#define SVC_SERVER_IMPL_H

#include <stdbool.h>

#include "service/fetch/svc_fetcher.h"
#include "service/resolve/svc_index_cache.h"
#include "service/http/svc_metrics.h"
#include "service/core/svc_pool.h"
#include "service/resolve/svc_packages.h"
#include "service/resolve/svc_resolver.h"
#include "service/rpc/svc_rpc.h"
#include "service/symbolize/svc_response.h"
#include "service/layout/svc_layout.h"
#include "service/debuginfod/svc_debuginfod.h"
#include "service/upload/svc_upload.h"
#include "service/symbolize/svc_profile.h"
#include "service/symbolize/svc_symbolize.h"
#include "service/http/svc_server.h"
#include "storage/stor_db.h"

struct evhttp;
struct evhttp_request;
struct evhttp_bound_socket;

struct svc_server {
	struct event_base *base;
	svc_server_options o;
	svc_config config;
	struct evhttp *http;
	struct evhttp_bound_socket *bound;
	char address[128];
	stor_db *store;
	svc_fetcher *fetcher;
	svc_fetcher *local_fetcher;  /* no upstreams: debuginfod requests past --max-hops */
	svc_fetcher *owner_fetcher;  /* no peer tier: requests from it (NULL: no peers) */
	svc_packages *packages;      /* --package-dir: scanner and source (NULL: none) */
	src_source **sources;        /* debug dirs, then packages: the fetchers' sources */
	size_t n_sources;
	svc_pool *pool;
	svc_response_pool *responses;  /* response tables lent to calls */
	svc_index_cache *cache;
	svc_resolver *resolver;
	svc_symbolize *symbolize;    /* the Symbolize method */
	svc_profile *profile;        /* the SymbolizeProfile method */
	svc_layout *layout;          /* the GetTypeLayouts method */
	svc_rpc *rpc;                /* the Connect handler and its methods */
	svc_debuginfod *debuginfod;  /* GET/HEAD /buildid/... */
	svc_upload *upload;          /* PUT /buildid/..., ShouldUpload */
	svc_metrics metrics;
	unsigned replies_writing;    /* replies handed to evhttp, not yet written */
	bool stopping;
	struct event *stop_check;
};

#endif
