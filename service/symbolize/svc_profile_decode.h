/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_profile_decode: the profile of a SymbolizeProfile call, from outside
 * bytes to a checked perftools.profiles.Profile: inflated when gzipped (under
 * a cap), decoded by protobuf-c into the call's arena (under its cap), and
 * checked as pprof would read it (every string index inside the string table,
 * ids non-zero and distinct, every mapping, location and function id a
 * sample, location or line names present). It also says, per location, its
 * mapping and whether it is only ever a non-leaf frame (a return address,
 * looked up at address - 1 as pprof's parsers do).
 */
#ifndef SVC_PROFILE_DECODE_H
#define SVC_PROFILE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/perftools/profiles/profile.pb-c.h"
#include "base/base_arena.h"
#include "service/core/svc_error.h"

typedef struct svc_profile_limits {
	size_t max_bytes;        /* the profile, once inflated */
	size_t max_mappings;
	size_t max_locations;
} svc_profile_limits;

typedef struct svc_profile_big svc_profile_big;

typedef struct svc_profile_doc {
	Perftools__Profiles__Profile *p;
	/*
	 * protobuf-c's memory: small blocks in the arena, big ones (its scratch
	 * slabs, which it frees, and big arrays) malloc'ed apart and counted
	 * against the arena's cap, so that the scratch is given back.
	 */
	base_arena *arena;
	svc_profile_big *big;
	size_t big_bytes;
	bool gzipped;            /* the input was gzip: the output is too */
	uint32_t *loc_mapping;   /* per location: its mapping's index + 1 (0: none) */
	bool *loc_return;        /* per location: only ever a non-leaf frame */
	uint64_t max_function_id;
} svc_profile_doc;

/* The call's memory cap: a base and so much per byte of the inflated profile. */
#define SVC_PROFILE_ARENA_BASE (64u << 20)
#define SVC_PROFILE_ARENA_PER_BYTE 16u

/*
 * Fills *d. arena: zeroed; initialized here, once the profile's size is
 * known, with the cap above (deinit it, and release the doc, however this
 * ends). False with *err: SVC_E_INVALID for bytes
 * that are not a valid profile, SVC_E_TOO_LARGE past the limits or the arena's
 * cap, SVC_E_NOMEM.
 */
bool svc_profile_decode(const uint8_t *buf, size_t len, const svc_profile_limits *lim,
			base_arena *arena, svc_profile_doc *d, svc_error *err);

/* Frees the doc's big blocks (the arena is the caller's). Zeroed docs too. */
void svc_profile_doc_release(svc_profile_doc *d);

/* True when buf starts like gzip. */
bool svc_profile_is_gzip(const uint8_t *buf, size_t len);

#endif
