/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_profile_fill: the lookups of a SymbolizeProfile call, once its mappings
 * are resolved: each location without lines whose mapping is OK is looked up
 * as Symbolize does (svc_lookup_frames: the runtime address normalized with
 * the mapping's start, limit and offset; a location that is only ever a
 * non-leaf frame looked up at address - 1) and gets one Line per frame,
 * innermost first. Functions and strings go into the profile's own tables,
 * each distinct one once (those already there are reused). Each OK mapping
 * gets its index's has_* flags. Other locations are left as they were.
 * Touches no event loop state: runs on the loop or on a worker.
 */
#ifndef SVC_PROFILE_FILL_H
#define SVC_PROFILE_FILL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_arena.h"
#include "service/core/svc_error.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_profile_decode.h"

typedef struct svc_profile_fill_stats {
	uint64_t symbolized;     /* locations that got lines */
	uint64_t unsymbolized;   /* locations without lines, left so */
	uint64_t frames;         /* lines added */
} svc_profile_fill_stats;

/*
 * maps: one per Profile.mapping (same order). The strings added point into
 * the mappings' indexes: pack the profile before letting them go. False with
 * *err when the arena's cap or memory runs out.
 */
bool svc_profile_fill(svc_profile_doc *d, const svc_lookup_mapping *maps, bool no_inline,
		      bool no_demangle, base_arena *arena, svc_profile_fill_stats *st,
		      svc_error *err);

#endif
