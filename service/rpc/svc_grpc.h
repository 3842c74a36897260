/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_grpc: the pieces of the gRPC protocol that are not about a transport
 * (service/http/svc_h2_*.c carries them over HTTP/2): the 5-byte message
 * prefix (compressed flag, big-endian length), grpc-timeout, the percent-
 * encoding of grpc-message, and the status of an svc_errc (gRPC's codes are
 * Connect's, numbered: svc_error.h's svc_connect_code).
 *
 * References: grpc/doc/PROTOCOL-HTTP2.md, PROTOCOL-WEB.md;
 * https://connectrpc.com/docs/protocol (the code mapping). Pure functions,
 * any thread.
 */
#ifndef SVC_GRPC_H
#define SVC_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_error.h"

#define SVC_GRPC_PREFIX 5        /* flag byte, 4-byte length */
#define SVC_GRPC_TRAILER_FLAG 0x80 /* gRPC-Web: a frame of trailers */

/*
 * The one message of a unary request in buf (prefix and message): SVC_OK with
 * the message's place and whether it is compressed; SVC_E_INVALID (truncated,
 * none, a second message, a reserved flag bit), SVC_E_TOO_LARGE (length
 * over cap). An empty message is a prefix of length 0.
 */
svc_errc svc_grpc_parse_unary(const uint8_t *buf, size_t len, uint64_t cap,
			      const uint8_t **msg, size_t *msg_len, bool *compressed,
			      svc_error *err);

/* The prefix of a message of len bytes (flags: 1 compressed, 0x80 trailers). */
void svc_grpc_prefix(uint8_t out[SVC_GRPC_PREFIX], uint8_t flags, uint32_t len);

/*
 * grpc-timeout: 1 to 8 ASCII digits and a unit (H M S m u n), as
 * milliseconds, rounded up (at most ~3.2e12). False on anything else.
 */
bool svc_grpc_parse_timeout(const char *value, int64_t *ms);

/*
 * grpc-message's percent-encoding of msg (bytes outside 0x20..0x7e and '%'
 * as %XX) into out (NUL-terminated, cut at a whole escape). Returns the length.
 */
size_t svc_grpc_percent_encode(const char *msg, char *out, size_t out_size);

/* The gRPC status code of err's code (0 for SVC_OK). */
int svc_grpc_status(svc_errc code);

/* Whether a content-type is gRPC's (application/grpc, +proto, +json; ;params);
 * *json: +json. prefix: "application/grpc" or "application/grpc-web" etc. */
bool svc_grpc_content_type(const char *ctype, const char *prefix, bool *json);

/*
 * gRPC-Web text (application/grpc-web-text): standard base64, as one string
 * or as padded chunks one after another (each frame encoded on its own).
 * Decodes len bytes of in into out (room for len / 4 * 3); SVC_E_INVALID on
 * a character outside the alphabet, a length not a multiple of 4, or
 * padding inside a quantum.
 */
svc_errc svc_grpc_base64_decode(const char *in, size_t len, uint8_t *out, size_t *out_len);
/* Appends the base64 of in (padded) to out; false: out of memory. */
struct evbuffer;
bool svc_grpc_base64_encode(const uint8_t *in, size_t len, struct evbuffer *out);

/*
 * grpc.health.v1.HealthCheckRequest's service (field 1) into service (size
 * bytes with the NUL; other fields skipped). False: not a valid message, or
 * the name does not fit.
 */
bool svc_grpc_health_request(const uint8_t *p, size_t len, char *service, size_t size);

/*
 * grpc-status-details-bin of err (svc_grpc_details.c): a google.rpc.Status
 * (code, message, an ErrorInfo detail whose reason is svc_errc_name's in
 * upper case, domain "symbolizer") in base64 without padding, into out
 * (NUL-terminated). Returns its length; 0: does not fit (send none).
 * SVC_GRPC_DETAILS_MAX is always room enough.
 */
#define SVC_GRPC_DETAILS_MAX 768
size_t svc_grpc_status_details(const svc_error *err, char *out, size_t size);

/*
 * The detail alone, for Connect's error JSON (svc_connect.c): the
 * google.rpc.ErrorInfo{reason, domain} of err in base64 without padding,
 * into out (NUL-terminated); its length, 0 when it does not fit
 * (SVC_GRPC_ERROR_INFO_MAX always does). svc_grpc_error_reason: the reason,
 * svc_errc_name(code) upper-cased ("too_large" -> "TOO_LARGE").
 */
#define SVC_GRPC_ERROR_DOMAIN "symbolizer"
#define SVC_GRPC_REASON_MAX 48
#define SVC_GRPC_ERROR_INFO_MAX 96
size_t svc_grpc_error_info(const svc_error *err, char *out, size_t size);
void svc_grpc_error_reason(svc_errc code, char out[SVC_GRPC_REASON_MAX]);

/* Whether a grpc-accept-encoding / grpc-encoding list names gzip. */
bool svc_grpc_lists_gzip(const char *value);

#endif
