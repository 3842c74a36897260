/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_connect: the pieces of the Connect protocol (unary, HTTP/1.1) that are
 * not about any one RPC: error codes and their HTTP statuses, the JSON error
 * body, the Connect-Timeout-Ms header, and gzip in both directions
 * (Content-Encoding / Accept-Encoding), always under a size cap.
 *
 * Reference: https://connectrpc.com/docs/protocol (unary request/response).
 */
#ifndef SVC_CONNECT_H
#define SVC_CONNECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_error.h"
#include "service/rpc/svc_gzip.h"  /* gzip of responses */

struct evhttp_request;
struct evbuffer;

/*
 * Writes err as Connect's error JSON into buf: {"code":"...","message":"..."
 * (JSON-escaped, left out when empty),"details":[{"type":"google.rpc.ErrorInfo",
 * "value":"<base64 of the ErrorInfo, unpadded>","debug":{"reason":"...",
 * "domain":"symbolizer"}}]}, the same ErrorInfo as gRPC's
 * grpc-status-details-bin (svc_grpc_status_details).
 */
void svc_connect_error_body(struct evbuffer *buf, const svc_error *err);

/*
 * Parses Connect-Timeout-Ms: 1 to 10 ASCII digits (the protocol's limit).
 * False on anything else.
 */
bool svc_connect_parse_timeout(const char *value, int64_t *ms);

/* Whether an Accept-Encoding (or Content-Encoding) list names gzip. */
bool svc_connect_lists_gzip(const char *value);

/*
 * Inflates a gzip stream: SVC_OK and a malloc'ed *out; SVC_E_INVALID when the
 * data is not valid gzip (or has trailing garbage), SVC_E_TOO_LARGE when the
 * output would pass cap, SVC_E_NOMEM.
 */
svc_errc svc_gunzip(const void *in, size_t in_size, size_t cap, void **out, size_t *out_size);

#endif
