/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_otlp_impl: internal to service/otlp/. The decoded OTLP profiles request
 * (svc_otlp_doc: protobuf-c's message under a memory cap, checked), each
 * mapping's identity from its attributes, and the fill of the dictionary
 * (svc_otlp_fill.c).
 */
#ifndef SVC_OTLP_IMPL_H
#define SVC_OTLP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "service/core/svc_error.h"
#include "symbolizer/sym_build_id.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	otlp_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary otlp_dict;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping otlp_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location otlp_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line otlp_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function otlp_function;

typedef struct svc_otlp_limits {
	size_t max_bytes;        /* protobuf-c's memory for the decoded request */
	size_t max_mappings;
	size_t max_locations;
} svc_otlp_limits;

/* protobuf-c's allocator, counting against a cap (svc_otlp_decode.c). */
typedef struct svc_otlp_alloc {
	ProtobufCAllocator pc;
	size_t used, cap;
	bool refused;            /* a block was refused: over the cap */
} svc_otlp_alloc;

typedef struct svc_otlp_doc {
	svc_otlp_alloc alloc;
	otlp_request *req;
	otlp_dict *dict;          /* req->dictionary (never NULL once decoded) */
	/* Per mapping_table entry: the identity its attributes name, as text
	 * (pointing into the message; NULL: none) and its kind's name. */
	const char **id_text;
	const char **id_kind;
} svc_otlp_doc;

/* The attribute keys of a mapping's identities (OTel semantic conventions):
 * .htlhash's older name .profiling is read too. */
#define SVC_OTLP_KEY_GNU "process.executable.build_id.gnu"
#define SVC_OTLP_KEY_GO "process.executable.build_id.go"
#define SVC_OTLP_KEY_HTLHASH "process.executable.build_id.htlhash"
#define SVC_OTLP_KEY_PROFILING "process.executable.build_id.profiling"

/* Decodes and checks an ExportProfilesServiceRequest (binary protobuf):
 * every index in range, the v1.11.0 layout (a dictionary; no field this
 * version does not have), the caps. False with err set (INVALID, TOO_LARGE). */
bool svc_otlp_decode(const uint8_t *buf, size_t len, const svc_otlp_limits *lim,
		     svc_otlp_doc *d, svc_error *err);

/* Frees everything of the doc (zeroed docs too). */
void svc_otlp_doc_release(svc_otlp_doc *d);

struct svc_lookup_mapping;
struct base_arena;

typedef struct svc_otlp_fill_stats {
	uint64_t symbolized, unsymbolized, frames;
} svc_otlp_fill_stats;

/* What the fill changed, to be put back before the doc is released (the new
 * arrays live in the call's arena; protobuf-c frees only its own). */
typedef struct svc_otlp_undo {
	char **strings;
	size_t n_strings;
	otlp_function **functions;
	size_t n_functions;
	otlp_location **locs;        /* the locations given lines */
	size_t n_locs;
	bool committed;              /* the tables were swapped */
} svc_otlp_undo;

/*
 * For every location of the dictionary with no lines whose mapping resolved
 * (maps[mapping_index].status OK): its frames as lines, innermost first (OTLP's
 * order: the last line is the caller the others were inlined into), their
 * functions and strings appended to the dictionary (deduplicated with what it
 * holds). Everything else is untouched. maps has one entry per mapping_table
 * row. False (err: TOO_LARGE) when the arena's cap is reached.
 */
bool svc_otlp_fill(svc_otlp_doc *d, const struct svc_lookup_mapping *maps,
		   struct base_arena *arena, svc_otlp_fill_stats *st, svc_otlp_undo *undo,
		   svc_error *err);

/* Puts the dictionary's own arrays back (after packing). */
void svc_otlp_unfill(svc_otlp_doc *d, svc_otlp_undo *undo);

/* The room's options (svc_otlp.c), for the OTLP/HTTP route (svc_otlp_http.c). */
struct svc_otlp;
struct svc_otlp_options;
const struct svc_otlp_options *svc_otlp_options_of(const struct svc_otlp *s);

/* ---- the forwarder's retry rules (svc_otlp_retry.c) ---- */

/* OTLP/HTTP's retryable statuses: 429, 502, 503, 504. */
bool svc_otlp_http_retryable(long status);
/* OTLP/gRPC's retryable codes. */
bool svc_otlp_grpc_retryable(int code);
/* A Retry-After value (seconds or an HTTP date) in ms, at most an hour; -1:
 * not one. */
int64_t svc_otlp_retry_after_ms(const char *value, size_t n);
/* The RetryInfo delay in a grpc-status-details-bin value, in ms; -1: none. */
int64_t svc_otlp_grpc_retry_info_ms(const char *b64, size_t n);

#endif
