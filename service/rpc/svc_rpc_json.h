/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json: the protobuf JSON mapping (proto3's, as Connect clients send
 * and expect it) of any message, driven by protobuf-c's descriptors: no code
 * per message. The Connect handler (svc_rpc) uses it to serve every method in
 * application/json too: a JSON request is transcoded to the protobuf wire
 * format before the method sees it, and the method's wire response is
 * transcoded to JSON after, so methods only ever need to speak binary (one
 * whose big responses cost as much to transcode as to build may write its
 * JSON itself, as this codec would: svc_rpc_call_json_out; Symbolize does).
 *
 * Input (svc_rpc_json_decode, read in one pass by a scanner of our own, no
 * tree; strict RFC 8259 JSON, UTF-8 checked, nesting bounded, answers as
 * json-c's parser gave them before it): a JSON object; keys are the
 * lowerCamelCase JSON names or the .proto names; null means the default;
 * 64-bit integers as strings or numbers (32-bit ones too), integral values
 * only, range-checked; enums by name or number (an unknown name is refused:
 * stricter than protojson, which with Connect-Go's DiscardUnknown drops it);
 * bytes as base64, standard or URL-safe, padded or not; floats as numbers or
 * "NaN", "Infinity", "-Infinity". Unknown fields are ignored, as Connect-Go
 * does (protojson with DiscardUnknown), so clients may be newer than the
 * server. A wrong type is invalid_argument naming the field's path
 * ("mappings[2].memoryStart: ..."). Maps and the well-known types' special
 * forms (Timestamp, Duration, wrappers) are not special-cased: a map is read
 * as its repeated entry messages.
 *
 * Output (svc_rpc_json_encode, written directly from the wire bytes into a
 * buffer, no tree): lowerCamelCase names, proto3 defaults omitted (zero
 * scalars, empty strings, empty repeated fields; a present sub-message is
 * kept, even empty), 64-bit integers as strings, enums by name (a number
 * unknown to the enum as a number), bytes as standard base64, strings
 * escaped and made valid UTF-8 (a byte that is not is replaced by U+FFFD).
 * Unknown field numbers in the wire are dropped; a singular field present
 * twice takes its last value.
 *
 * A codec is immutable once created: any thread may use it at once.
 */
#ifndef SVC_RPC_JSON_H
#define SVC_RPC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"

/* Deepest nesting of messages (and JSON containers) either way. */
#define SVC_RPC_JSON_MAX_DEPTH 64

typedef struct svc_rpc_json svc_rpc_json;

/* The codec of messages of type d (and of every type d reaches). NULL: out of memory. */
svc_rpc_json *svc_rpc_json_create(const ProtobufCMessageDescriptor *d);
/*
 * OTLP/JSON (opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), for
 * the OTLP routes only: the bytes fields trace_id, span_id and profile_id are
 * hex strings (either case in, lowercase out) instead of base64, and enums
 * are written as numbers. Everything else is the mapping above.
 */
#define SVC_RPC_JSON_OTLP 1u

/* For tests: the decoder reads every object the general way (its plain path,
 * for objects of integers and booleans, is off); the bytes are the same. */
#define SVC_RPC_JSON_NO_PLAIN_DECODE 2u

/* svc_rpc_json_create with flags (SVC_RPC_JSON_*; 0: svc_rpc_json_create's). */
svc_rpc_json *svc_rpc_json_create_opts(const ProtobufCMessageDescriptor *d, unsigned flags);
/* NULL is a no-op. */
void svc_rpc_json_destroy(svc_rpc_json *j);

/*
 * JSON text -> the message's wire bytes, appended to wire (whose max caps
 * them). SVC_OK; SVC_E_INVALID (malformed JSON, not an object, a wrong type:
 * err names the field), SVC_E_TOO_LARGE (over wire's max, or more JSON
 * containers than max_containers), SVC_E_NOMEM. On an error wire is left
 * as it was.
 */
svc_errc svc_rpc_json_decode(const svc_rpc_json *j, const char *text, size_t len,
			     size_t max_containers, base_buf *wire, svc_error *err);

/*
 * The message's wire bytes -> JSON text, appended to out. SVC_OK;
 * SVC_E_INTERNAL when the bytes are not a valid message of the type (err
 * says where), SVC_E_TOO_LARGE (over out's max), SVC_E_NOMEM.
 */
svc_errc svc_rpc_json_encode(const svc_rpc_json *j, const uint8_t *wire, size_t len,
			     base_buf *out, svc_error *err);

#endif
