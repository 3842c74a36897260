// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc_services: the gRPC services every gRPC server is expected to have
 * beside its own, answered over gRPC and gRPC-Web like a method of the table
 * (through an svc_rpc_sink): grpc.health.v1.Health/Check, SERVING while the
 * server is (the store open, not shutting down), for the empty
 * service name and symbolizer.v1.SymbolizerService; NOT_FOUND for another.
 * The messages are two fields: read and written by hand.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/http/svc_grpc_impl.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_grpc.h"

#define HEALTH_CHECK "/grpc.health.v1.Health/Check"
#define MAX_SERVICE 200

static void health_check(svc_rpc *rpc, bool serving, const uint8_t *msg, size_t len,
			 const svc_rpc_sink *sink)
{
	char service[MAX_SERVICE];
	svc_error err;
	if (!svc_grpc_health_request(msg, len, service, sizeof(service))) {
		svc_error_set(&err, SVC_E_INVALID, "grpc.health.v1.HealthCheckRequest: malformed");
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	if (service[0] && strcmp(service, svc_rpc_service(rpc)) != 0) {
		svc_error_set(&err, SVC_E_NOT_FOUND, "unknown service %s", service);
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	/* HealthCheckResponse{status: SERVING (1) | NOT_SERVING (2)} */
	uint8_t out[2] = {0x08, serving ? 1 : 2};
	struct evbuffer *b = evbuffer_new();
	if (!b || evbuffer_add(b, out, sizeof(out)) != 0) {
		if (b)
			evbuffer_free(b);
		svc_error_set(&err, SVC_E_NOMEM, "out of memory");
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	sink->answer(sink->arg, NULL, b, false);
	evbuffer_free(b);
}

bool svc_grpc_services_serve(svc_rpc *rpc, bool serving, const char *path, const uint8_t *msg,
			     size_t len, bool compressed, const svc_rpc_sink *sink)
{
	if (strcmp(path, HEALTH_CHECK) != 0)
		return false;
	void *plain = NULL;
	size_t plain_len = len;
	if (compressed) {
		svc_error err;
		svc_errc rc = svc_gunzip(msg, len, 4096, &plain, &plain_len);
		if (rc != SVC_OK) {
			svc_error_set(&err, rc, "grpc.health.v1 request: not valid gzip");
			sink->answer(sink->arg, &err, NULL, false);
			return true;
		}
		msg = plain;
	}
	health_check(rpc, serving, msg, plain_len, sink);
	free(plain);
	return true;
}
