/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_otlp_local: SymbolizeOTLP's decode, fill and pack steps run in the
 * caller's process with indexes the caller builds (`symbolctl otlp
 * --debug-dir`, as `symbolctl pprof --debug-dir` runs SymbolizeProfile's):
 * the same checks of the request, the same mappings chosen (those whose
 * identity attribute names a file and that unsymbolized locations use), the
 * same fill, so the answer equals the daemon's for the same files.
 */
#ifndef SVC_OTLP_LOCAL_H
#define SVC_OTLP_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"
#include "service/symbolize/svc_lookup.h"

/*
 * Resolves mapping row (m->pb: build_id, build_id_kind, addresses; m->id
 * parsed): sets m->status (OK with m->entry, an index the caller keeps until
 * svc_otlp_local returns, or NOT_FOUND with m->error).
 */
typedef void (*svc_otlp_local_fn)(void *arg, size_t row, svc_lookup_mapping *m);

typedef struct svc_otlp_local_stats {
	uint64_t mappings, resolved, symbolized, unsymbolized, frames;
} svc_otlp_local_stats;

/*
 * Symbolizes the ExportProfilesServiceRequest in[0..len) (binary protobuf)
 * with fn's indexes; the enriched request packed into out. A mapping whose
 * identity does not parse is INVALID (fn not called). False with err set
 * when the request is refused (INVALID, TOO_LARGE) or memory runs out.
 */
bool svc_otlp_local(const uint8_t *in, size_t len, svc_otlp_local_fn fn, void *arg,
		    base_buf *out, svc_otlp_local_stats *st, svc_error *err);

#endif
