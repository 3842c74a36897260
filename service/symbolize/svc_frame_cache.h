/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_frame_cache: the function a profile's tables gave a frame's names,
 * keyed by where those names are (svc_profile_fill for pprof, svc_otlp_fill
 * for OTLP). The names of a frame are strings of one index blob, where each
 * string is once, so equal addresses are equal names: a frame met again gets
 * its function without hashing and comparing its three names' bytes, which
 * the tables do by content (to merge with a profile's own strings and with
 * other indexes' names) the first time only.
 */
#ifndef SVC_FRAME_CACHE_H
#define SVC_FRAME_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_hash_map.h"

typedef struct svc_frame_key {
	const char *name, *system, *file;
	int64_t start_line;
} svc_frame_key;

/* The key's four words, each multiplied by its own odd constant and summed
 * (the map mixes the sum further): a few instructions, where hashing its 32
 * bytes one at a time costs over a hundred. */
static inline uint64_t svc_frame_key_hash(const svc_frame_key *k)
{
	uint64_t h = (uint64_t)(uintptr_t)k->name * 0x9e3779b97f4a7c15ull +
		     (uint64_t)(uintptr_t)k->system * 0xbf58476d1ce4e5b9ull +
		     (uint64_t)(uintptr_t)k->file * 0x94d049bb133111ebull +
		     (uint64_t)k->start_line * 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

static inline bool svc_frame_key_eq(const svc_frame_key *a, const svc_frame_key *b)
{
	return a->name == b->name && a->system == b->system && a->file == b->file &&
	       a->start_line == b->start_line;
}

/* svc_frame_cache_get/put/...: base_hash_map.h; the value is the function's id or index. */
BASE_HASH_MAP(svc_frame_cache, svc_frame_key, int64_t, svc_frame_key_hash, svc_frame_key_eq)

#endif
