/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_map64: the index builder's map from 64-bit keys to 32-bit values (a DIE
 * key to its function record, partial units already walked, a file string to
 * its file index): the project's typed hash map (base_hash_map.h) for these
 * types, with the builder's "absent" value UINT32_MAX.
 */
#ifndef SYM_MAP64_IMPL_H
#define SYM_MAP64_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_hash_map.h"

BASE_HASH_MAP(sym_map64, uint64_t, uint32_t, base_hash_u64, base_eq_u64)

/* The value for key, or UINT32_MAX. */
static inline uint32_t sym_map64_lookup(const sym_map64 *m, uint64_t key)
{
	const uint32_t *v = sym_map64_get(m, &key);
	return v ? *v : UINT32_MAX;
}

/* Inserts or replaces; false when out of memory. */
static inline bool sym_map64_set(sym_map64 *m, uint64_t key, uint32_t val)
{
	uint32_t *v = sym_map64_put(m, &key, NULL);
	if (!v)
		return false;
	*v = val;
	return true;
}

#endif
