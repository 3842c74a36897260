// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc_services: the gRPC services every gRPC server is expected to have
 * beside its own, answered on HTTP/2 like a method of the table (through an
 * svc_rpc_sink): grpc.health.v1.Health/Check, SERVING while the server is
 * (svc_h2_options.serving: the store open, not shutting down), for the empty
 * service name and symbolizer.v1.SymbolizerService; NOT_FOUND for another.
 * The messages are two fields: read and written by hand.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/http/svc_h2_impl.h"
#include "service/rpc/svc_connect.h"

#define HEALTH_CHECK "/grpc.health.v1.Health/Check"
#define MAX_SERVICE 200

/* HealthCheckRequest.service (field 1, a string), the only field we read;
 * others skipped. False: not a valid message. */
static bool health_request(const uint8_t *p, size_t len, char *service, size_t size)
{
	service[0] = '\0';
	size_t i = 0;
	while (i < len) {
		uint64_t key = 0;
		for (int shift = 0;; shift += 7) {
			if (i >= len || shift > 63)
				return false;
			key |= (uint64_t)(p[i] & 0x7f) << shift;
			if (!(p[i++] & 0x80))
				break;
		}
		unsigned wt = key & 7;
		uint64_t n = 0;
		if (wt == 0 || wt == 2) {
			for (int shift = 0;; shift += 7) {
				if (i >= len || shift > 63)
					return false;
				n |= (uint64_t)(p[i] & 0x7f) << shift;
				if (!(p[i++] & 0x80))
					break;
			}
		} else if (wt == 1 || wt == 5) {
			n = wt == 1 ? 8 : 4;
			if (len - i < n)
				return false;
			i += n;
			continue;
		} else {
			return false;
		}
		if (wt == 0)
			continue;
		if (n > len - i)
			return false;
		if (key >> 3 == 1) {
			if (n >= size)
				return false;
			memcpy(service, p + i, (size_t)n);
			service[n] = '\0';
		}
		i += (size_t)n;
	}
	return true;
}

static void health_check(svc_h2 *h, const uint8_t *msg, size_t len, const svc_rpc_sink *sink)
{
	char service[MAX_SERVICE];
	svc_error err;
	if (!health_request(msg, len, service, sizeof(service))) {
		svc_error_set(&err, SVC_E_INVALID, "grpc.health.v1.HealthCheckRequest: malformed");
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	if (service[0] && strcmp(service, svc_rpc_service(h->o.rpc)) != 0) {
		svc_error_set(&err, SVC_E_NOT_FOUND, "unknown service %s", service);
		sink->answer(sink->arg, &err, NULL, false);
		return;
	}
	bool serving = !h->stopping && (!h->o.serving || h->o.serving(h->o.arg));
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

bool svc_grpc_services_serve(svc_h2 *h, const char *path, const uint8_t *msg, size_t len,
			     bool compressed, const svc_rpc_sink *sink)
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
	health_check(h, msg, plain_len, sink);
	free(plain);
	return true;
}
