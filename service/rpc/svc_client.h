/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_client: a client of symbolizerd's RPCs (unary, binary protobuf, libcurl),
 * for symbolctl: Connect over HTTP/1.1 by default, gRPC (h2c) or gRPC-Web. Sends one request message and
 * returns the response message or the Connect error of the call. Also plain
 * GETs of the daemon's small JSON endpoints (/version).
 */
#ifndef SVC_CLIENT_H
#define SVC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_error.h"

/* Longest request URL (server + method) we build: longer ones are refused, not cut. */
#define SVC_CLIENT_URL_MAX 65536

/* The protocol of a call (symbolctl --protocol). */
typedef enum svc_client_protocol {
	SVC_CLIENT_CONNECT = 0,    /* Connect, HTTP/1.1 (the default) */
	SVC_CLIENT_GRPC,           /* gRPC, HTTP/2 with prior knowledge (h2c) */
	SVC_CLIENT_GRPC_WEB,       /* gRPC-Web, HTTP/1.1 */
} svc_client_protocol;

/* "connect", "grpc", "grpc-web" into *p; false on another name. */
bool svc_client_protocol_parse(const char *name, svc_client_protocol *p);

typedef struct svc_client_call {
	const char *server;        /* base URL, e.g. http://127.0.0.1:8080 */
	const char *method;        /* "symbolizer.v1.SymbolizerService/Symbolize" */
	const void *request;
	size_t request_size;
	int64_t timeout_ms;        /* sent as Connect-Timeout-Ms and enforced; 0 = none */
	size_t max_response;       /* cap on the response body; 0 = 256 MiB */
	svc_client_protocol protocol;
} svc_client_call;

typedef struct svc_client_result {
	long http_status;          /* 0 when no HTTP answer came */
	char code[32];             /* Connect code of an error ("" on success) */
	char message[512];         /* error text (transport, or the server's message) */
	uint8_t *body;             /* success: the response message (malloc'ed) */
	size_t body_size;
} svc_client_result;

/* SVC_OK when the call succeeded (body set); otherwise res describes it and
 * (gRPC and gRPC-Web: res->code is the name of grpc-status's code, as
 * Connect names it; svc_client_grpc.c)
 * the code says what kind of failure it was: SVC_E_INVALID (the URL),
 * SVC_E_NOMEM, SVC_E_DEADLINE (the timeout passed), SVC_E_UPSTREAM (no answer,
 * or an error answer: res->code is the server's Connect code). */
svc_errc svc_client_unary(const svc_client_call *call, svc_client_result *res);
void svc_client_result_deinit(svc_client_result *res);
/* svc_client_unary for the gRPC protocols (svc_client_grpc.c). */
svc_errc svc_client_grpc_unary(const svc_client_call *call, svc_client_result *res);

/* GET server + path (e.g. "/version"), bounded by timeout_ms (0 = none) and
 * max_response (0 = 256 MiB): SVC_OK with the body when the answer is HTTP 200;
 * otherwise res->message says what went wrong, and the code is as for
 * svc_client_unary (res->code "unknown" for an HTTP status other than 200). */
svc_errc svc_client_get(const char *server, const char *path, int64_t timeout_ms,
			size_t max_response, svc_client_result *res);

/* The string value of "key" in a flat JSON object (no nesting; backslash escapes
 * kept as the escaped character), cut to out_size - 1; false when absent. */
bool svc_client_json_field(const uint8_t *data, size_t size, const char *key, char *out,
			   size_t out_size);

#endif
