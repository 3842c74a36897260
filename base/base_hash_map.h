/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_hash_map: the project's one hash map, typed by a macro (as drgn's
 * hash_table.h): open addressing with linear probing, backward-shift deletion
 * (no tombstones), a power-of-two table at most half full, and a 31-bit hash
 * tag per slot so most mismatches cost no key comparison.
 *
 *   BASE_HASH_MAP(name, key_type, value_type, hash_fn, eq_fn)
 *
 * defines the types `name` and `name##_entry` ({key, value}) and
 *
 *   void         name##_init(name *m);
 *   void         name##_deinit(name *m);
 *   value_type  *name##_get(const name *m, const key_type *key);   NULL: absent
 *   value_type  *name##_put(name *m, const key_type *key, bool *inserted);
 *                  the value of key, added (zeroed, *inserted true) when absent;
 *                  NULL only when out of memory
 *   bool         name##_remove(name *m, const key_type *key);      false: absent
 *   size_t       name##_size(const name *m);
 *   name##_entry *name##_next(const name *m, size_t *pos);
 *                  iteration: *pos starts at 0, NULL at the end; the map must
 *                  not change while iterating (collect, then remove)
 *   void         name##_clear(name *m);                             keeps the table
 *
 * hash_fn is uint64_t (const key_type *), eq_fn bool (const key_type *, const
 * key_type *). Pointers returned stay valid until the next put or remove.
 * Not thread-safe: each map belongs to one thread, or is guarded by its owner.
 */
#ifndef BASE_HASH_MAP_H
#define BASE_HASH_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Slot tag of a hash: never 0 (0 marks an empty slot); its high 31 bits place it. */
static inline uint32_t base_hash_tag(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h | 1u;
}

/* A map's functions: a file that instantiates the map uses only some of them. */
#define BASE_HASH_MAP_FN_ static inline __attribute__((unused))

#define BASE_HASH_MAP(name, key_type, value_type, hash_fn, eq_fn)                          \
	typedef struct name##_entry {                                                      \
		key_type key;                                                              \
		value_type value;                                                          \
	} name##_entry;                                                                    \
	typedef struct name {                                                              \
		uint32_t *tags;                                                            \
		name##_entry *entries;                                                     \
		size_t cap, len;                                                           \
	} name;                                                                            \
                                                                                           \
	BASE_HASH_MAP_FN_ void name##_init(name *m) { *m = (name){0}; }                    \
	BASE_HASH_MAP_FN_ void name##_deinit(name *m)                                      \
	{                                                                                  \
		free(m->tags);                                                             \
		free(m->entries);                                                          \
		*m = (name){0};                                                            \
	}                                                                                  \
	BASE_HASH_MAP_FN_ size_t name##_size(const name *m) { return m->len; }             \
	BASE_HASH_MAP_FN_ void name##_clear(name *m)                                       \
	{                                                                                  \
		if (m->tags)                                                               \
			memset(m->tags, 0, m->cap * sizeof(*m->tags));                     \
		m->len = 0;                                                                \
	}                                                                                  \
	BASE_HASH_MAP_FN_ size_t name##_home_(const name *m, uint32_t tag)                 \
	{                                                                                  \
		return (size_t)(tag >> 1) & (m->cap - 1);                                  \
	}                                                                                  \
	/* The slot of key, or of the empty slot where it would go. */                     \
	BASE_HASH_MAP_FN_ size_t name##_find_(const name *m, const key_type *key, uint32_t tag) \
	{                                                                                  \
		size_t i = name##_home_(m, tag);                                           \
		while (m->tags[i] && !(m->tags[i] == tag && eq_fn(&m->entries[i].key, key))) \
			i = (i + 1) & (m->cap - 1);                                        \
		return i;                                                                  \
	}                                                                                  \
	BASE_HASH_MAP_FN_ value_type *name##_get(const name *m, const key_type *key)       \
	{                                                                                  \
		if (!m->len)                                                               \
			return NULL;                                                       \
		size_t i = name##_find_(m, key, base_hash_tag(hash_fn(key)));              \
		return m->tags[i] ? &m->entries[i].value : NULL;                           \
	}                                                                                  \
	BASE_HASH_MAP_FN_ bool name##_grow_(name *m)                                       \
	{                                                                                  \
		size_t cap = m->cap ? m->cap * 2 : 16;                                     \
		uint32_t *tags = calloc(cap, sizeof(*tags));                               \
		name##_entry *entries = malloc(cap * sizeof(*entries));                    \
		if (!tags || !entries || cap > SIZE_MAX / 2 / sizeof(*entries)) {          \
			free(tags);                                                        \
			free(entries);                                                     \
			return false;                                                      \
		}                                                                          \
		name old = *m;                                                             \
		m->tags = tags;                                                            \
		m->entries = entries;                                                      \
		m->cap = cap;                                                              \
		for (size_t i = 0; i < old.cap; i++) {                                     \
			if (!old.tags[i])                                                  \
				continue;                                                  \
			size_t j = name##_home_(m, old.tags[i]);                           \
			while (tags[j])                                                    \
				j = (j + 1) & (cap - 1);                                   \
			tags[j] = old.tags[i];                                             \
			entries[j] = old.entries[i];                                       \
		}                                                                          \
		free(old.tags);                                                            \
		free(old.entries);                                                         \
		return true;                                                               \
	}                                                                                  \
	BASE_HASH_MAP_FN_ value_type *name##_put(name *m, const key_type *key, bool *inserted) \
	{                                                                                  \
		uint32_t tag = base_hash_tag(hash_fn(key));                                \
		if (m->len) {                                                              \
			size_t i = name##_find_(m, key, tag);                              \
			if (m->tags[i]) {                                                  \
				if (inserted)                                              \
					*inserted = false;                                 \
				return &m->entries[i].value;                               \
			}                                                                  \
		}                                                                          \
		if ((m->len + 1) * 2 > m->cap && !name##_grow_(m))                         \
			return NULL;                                                       \
		size_t i = name##_find_(m, key, tag);                                      \
		m->tags[i] = tag;                                                          \
		memcpy(&m->entries[i].key, key, sizeof(*key));                             \
		memset(&m->entries[i].value, 0, sizeof(m->entries[i].value));              \
		m->len++;                                                                  \
		if (inserted)                                                              \
			*inserted = true;                                                  \
		return &m->entries[i].value;                                               \
	}                                                                                  \
	BASE_HASH_MAP_FN_ bool name##_remove(name *m, const key_type *key)                 \
	{                                                                                  \
		if (!m->len)                                                               \
			return false;                                                      \
		size_t i = name##_find_(m, key, base_hash_tag(hash_fn(key)));              \
		if (!m->tags[i])                                                           \
			return false;                                                      \
		/* Backward shift: pull later members of the run into the hole. */         \
		size_t mask = m->cap - 1;                                                  \
		for (size_t j = (i + 1) & mask; m->tags[j]; j = (j + 1) & mask) {          \
			size_t home = name##_home_(m, m->tags[j]);                         \
			/* j may fill the hole at i unless its home lies in (i, j]. */     \
			if (((j - home) & mask) >= ((j - i) & mask)) {                     \
				m->tags[i] = m->tags[j];                                   \
				m->entries[i] = m->entries[j];                             \
				i = j;                                                     \
			}                                                                  \
		}                                                                          \
		m->tags[i] = 0;                                                            \
		m->len--;                                                                  \
		return true;                                                               \
	}                                                                                  \
	BASE_HASH_MAP_FN_ name##_entry *name##_next(const name *m, size_t *pos)            \
	{                                                                                  \
		for (; *pos < m->cap; (*pos)++)                                            \
			if (m->tags[*pos])                                                 \
				return &m->entries[(*pos)++];                              \
		return NULL;                                                               \
	}

/* Hash and equality for integer keys. */
static inline uint64_t base_hash_u64(const uint64_t *k) { return *k; }
static inline bool base_eq_u64(const uint64_t *a, const uint64_t *b) { return *a == *b; }

#endif
