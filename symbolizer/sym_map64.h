/*
 * sym_map64: an open-addressed hash map from 64-bit keys to 32-bit values,
 * used by the builder to share one function record among a function's instances.
 */
#ifndef SYM_MAP64_H
#define SYM_MAP64_H

#include <stdint.h>
#include <stdlib.h>

typedef struct sym_map64 {
	uint64_t *keys;    /* key + 1; 0 = empty */
	uint32_t *vals;
	size_t n, used;
} sym_map64;

static inline void sym_map64_init(sym_map64 *m)
{
	*m = (sym_map64){0};
}

static inline void sym_map64_deinit(sym_map64 *m)
{
	free(m->keys);
	free(m->vals);
	*m = (sym_map64){0};
}

static inline size_t sym_map64_slot(uint64_t k, size_t n)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 17) & (n - 1);
}

/* The value for key, or UINT32_MAX. */
static inline uint32_t sym_map64_get(const sym_map64 *m, uint64_t key)
{
	if (!m->n)
		return UINT32_MAX;
	for (size_t i = sym_map64_slot(key, m->n);; i = (i + 1) & (m->n - 1)) {
		if (m->keys[i] == 0)
			return UINT32_MAX;
		if (m->keys[i] == key + 1)
			return m->vals[i];
	}
}

/* Inserts or replaces; 0 on success, -1 out of memory. key must not be UINT64_MAX. */
static inline int sym_map64_put(sym_map64 *m, uint64_t key, uint32_t val)
{
	if ((m->used + 1) * 2 > m->n) {
		size_t n = m->n ? m->n * 2 : 256;
		uint64_t *keys = calloc(n, sizeof(*keys));
		uint32_t *vals = malloc(n * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
		}
		for (size_t i = 0; i < m->n; i++) {
			if (!m->keys[i])
				continue;
			size_t j = sym_map64_slot(m->keys[i] - 1, n);
			while (keys[j])
				j = (j + 1) & (n - 1);
			keys[j] = m->keys[i];
			vals[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->n = n;
	}
	size_t i = sym_map64_slot(key, m->n);
	while (m->keys[i] && m->keys[i] != key + 1)
		i = (i + 1) & (m->n - 1);
	if (!m->keys[i])
		m->used++;
	m->keys[i] = key + 1;
	m->vals[i] = val;
	return 0;
}

#endif
