// SPDX-License-Identifier: Apache-2.0
/*
 * svc_string_rank: dense ordinals for an index's strings (svc_string_rank.h).
 */
#include "service/resolve/svc_string_rank.h"
#include "symbolizer/sym_index.h"

#include <stdlib.h>
#include <string.h>

bool svc_string_rank_build(svc_string_rank *r, const char *base, size_t size)
{
	memset(r, 0, sizeof(*r));
	if (!base || size == 0 || size > UINT32_MAX)
		return false;
	size_t words = (size + 63) / 64;
	uint64_t *starts = calloc(words, sizeof(*starts));
	uint32_t *rank = malloc(words * sizeof(*rank));
	if (!starts || !rank) {
		free(starts);
		free(rank);
		return false;
	}
	/* A string starts at 0 and after each NUL but the last byte's. */
	starts[0] = 1;
	const char *p = base, *end = base + size - 1;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			break;
		size_t at = (size_t)(nul - base) + 1;
		starts[at >> 6] |= 1ull << (at & 63);
		p = nul + 1;
	}
	uint32_t n = 0;
	for (size_t w = 0; w < words; w++) {
		rank[w] = n;
		n += (uint32_t)__builtin_popcountll(starts[w]);
	}
	r->base = base;
	r->size = size;
	r->starts = starts;
	r->rank = rank;
	r->n_strings = n;
	r->bytes = words * (sizeof(*starts) + sizeof(*rank));
	return true;
}

bool svc_string_rank_index(svc_string_rank *r, const sym_index *index)
{
	const char *strs;
	size_t size;
	sym_index_strings(index, &strs, &size);
	return svc_string_rank_build(r, strs, size);
}

void svc_string_rank_free(svc_string_rank *r)
{
	free(r->starts);
	free(r->rank);
	memset(r, 0, sizeof(*r));
}
