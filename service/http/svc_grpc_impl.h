/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_grpc_impl: the gRPC pieces of the HTTP room shared by its transports
 * (HTTP/2: svc_h2_*.c; gRPC-Web over HTTP/1.1: svc_grpc_web.c): the services
 * every gRPC server has beside its own (svc_grpc_services.c), gRPC-Web and
 * CORS on the RPC routes. Loop thread only. Not for use outside service/http/.
 */
#ifndef SVC_GRPC_IMPL_H
#define SVC_GRPC_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/rpc/svc_rpc.h"

struct evbuffer;
struct evhttp_request;

/* The paths of the services of svc_grpc_services.c (for the router). */
#define SVC_GRPC_HEALTH_PREFIX "/grpc.health.v1.Health/"

/* grpc.health.v1.Health and server reflection answered like a method
 * (serving: what Check says); false: path is not theirs. */
bool svc_grpc_services_serve(svc_rpc *rpc, bool serving, const char *path, const uint8_t *msg,
			     size_t len, bool compressed, const svc_rpc_sink *sink);

/* svc_grpc_reflection.c: the paths of ServerReflectionInfo (v1, v1alpha). */
#define SVC_GRPC_REFLECTION_V1 "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
#define SVC_GRPC_REFLECTION_V1ALPHA                                                          \
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
/* The ServerReflectionResponse to one ServerReflectionRequest (req, len),
 * appended to out; false: out of memory. The two versions' messages are the
 * same bytes. Any thread. */
bool svc_grpc_reflection_answer(const uint8_t *req, size_t len, struct evbuffer *out);

/* ---- svc_grpc_web.c ---- */

typedef struct svc_grpc_web svc_grpc_web;
typedef struct svc_grpc_web_options {
	svc_rpc *rpc;
	uint64_t max_message_bytes;
	/* --cors-allowed-origins: "*", or origins separated by commas; NULL
	 * or "": CORS off (no header, preflights get 405). */
	const char *cors_allowed_origins;
	bool (*serving)(void *arg);
	/* Sends a reply (the HTTP room's accounting). */
	void (*reply)(void *arg, struct evhttp_request *req, int status, struct evbuffer *body);
	void *arg;
} svc_grpc_web_options;

svc_grpc_web *svc_grpc_web_create(const svc_grpc_web_options *o);
void svc_grpc_web_destroy(svc_grpc_web *w);
/*
 * On an RPC route: adds the CORS headers for an allowed Origin, answers a
 * preflight (OPTIONS), and serves a gRPC-Web call (application/grpc-web,
 * +proto, -text, -text+proto). False: req is another protocol's (Connect),
 * untouched but for the CORS headers.
 */
bool svc_grpc_web_handle(svc_grpc_web *w, struct evhttp_request *req, const char *path);

#endif
