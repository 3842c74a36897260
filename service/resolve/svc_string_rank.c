// SPDX-License-Identifier: Apache-2.0
/*
 * svc_string_rank: dense ordinals for an index's strings (svc_string_rank.h).
 */
#include "service/resolve/svc_string_rank.h"
#include "symbolizer/sym_index.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(svc_string_rank_block) == 64, "a block is one cache line");

#define WORDS SVC_STRING_RANK_WORDS
#define SPAN SVC_STRING_RANK_SPAN

bool svc_string_rank_build(svc_string_rank *r, const char *base, size_t size)
{
	memset(r, 0, sizeof(*r));
	if (!base || size == 0 || size > UINT32_MAX)
		return false;
	size_t n_blocks = size / SPAN + 1;
	svc_string_rank_block *blocks = aligned_alloc(64, n_blocks * sizeof(*blocks));
	if (!blocks)
		return false;
	memset(blocks, 0, n_blocks * sizeof(*blocks));
	/* A string starts at 0 and after each NUL but the last byte's. */
	blocks[0].bits[0] = 1;
	const char *p = base, *end = base + size - 1;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul)
			break;
		size_t at = (size_t)(nul - base) + 1;
		blocks[at / SPAN].bits[at % SPAN / 64] |= 1ull << (at & 63);
		p = nul + 1;
	}
	uint32_t n = 0;
	for (size_t i = 0; i < n_blocks; i++) {
		blocks[i].base = n;
		uint16_t in = 0;
		for (size_t w = 0; w < WORDS; w++) {
			blocks[i].before[w] = in;
			in = (uint16_t)(in + svc_string_rank_popcount(blocks[i].bits[w]));
		}
		n += in;
	}
	r->base = base;
	r->size = size;
	r->blocks = blocks;
	r->n_strings = n;
	r->terminated = base[size - 1] == '\0';
	r->bytes = n_blocks * sizeof(*blocks);
	return true;
}

size_t svc_string_rank_len_far(const svc_string_rank *r, size_t off)
{
	size_t words = (r->size + 63) / 64;
	for (size_t gw = off / 64 + 1; gw < words; gw++) {
		uint64_t bits = r->blocks[gw / WORDS].bits[gw % WORDS];
		if (bits)
			return gw * 64 + (size_t)__builtin_ctzll(bits) - off - 1;
	}
	return r->size - off - (r->terminated ? 1 : 0);
}

/* The ordinal and length of the string at s into *ord, *len; a length of
 * SVC_STRING_RANK_LONG when the string is that long or s starts none of r's
 * strings (a blob's offset may point inside one): looked up when used. */
static void name_of(const svc_string_rank *r, const char *s, uint32_t *ord, uint16_t *len)
{
	size_t n;
	*ord = 0;
	if (!svc_string_rank_slice(r, s, ord, &n))
		n = SVC_STRING_RANK_LONG;
	*len = n < SVC_STRING_RANK_LONG ? (uint16_t)n : SVC_STRING_RANK_LONG;
}

/* Records the names of index's functions in r (left without them when out of memory). */
static void rank_functions(svc_string_rank *r, const sym_index *index)
{
	sym_index_info info;
	sym_index_get_info(index, &info);
	if (info.n_functions == 0)
		return;
	svc_string_rank_function *fs = malloc((size_t)info.n_functions * sizeof(*fs));
	if (!fs)
		return;
	for (uint32_t id = 0; id < info.n_functions; id++) {
		const char *display, *system;
		uint32_t decl_line;
		svc_string_rank_function *o = &fs[id];
		if (!sym_index_function_names(index, id, &display, &system, &decl_line)) {
			free(fs);   /* not an id of the index: cannot happen */
			return;
		}
		name_of(r, display, &o->display, &o->display_len);
		name_of(r, system, &o->system, &o->system_len);
		o->display_off = (uint32_t)(display - r->base);
		o->system_off = (uint32_t)(system - r->base);
		o->decl_line = decl_line;
		o->only = 0;
	}
	r->functions = fs;
	r->n_functions = info.n_functions;
	r->bytes += (size_t)info.n_functions * sizeof(*fs);
}

/* Counts a name's record in seen (saturating at 2); false when it is not recorded. */
static bool count_name(uint8_t *seen, uint32_t ord, uint16_t len)
{
	if (len == SVC_STRING_RANK_LONG)
		return false;
	if (len && seen[ord] < 2)
		seen[ord]++;
	return true;
}

/* Marks the names no other record of r names (svc_string_rank_function.only):
 * none when a name is not recorded (it is ranked by its address when used,
 * and may be any string), or when out of memory. */
static void mark_only(svc_string_rank *r)
{
	if (!r->functions || !r->files)
		return;
	uint8_t *seen = calloc(r->n_strings ? r->n_strings : 1, 1);
	if (!seen)
		return;
	bool all = true;
	for (uint32_t i = 0; i < r->n_functions && all; i++) {
		const svc_string_rank_function *f = &r->functions[i];
		all = count_name(seen, f->display, f->display_len) &&
		      (f->system_off == f->display_off || count_name(seen, f->system, f->system_len));
	}
	for (uint32_t i = 0; i < r->n_files && all; i++)
		all = count_name(seen, r->files[i].name, r->files[i].name_len);
	for (uint32_t i = 0; i < r->n_functions && all; i++) {
		svc_string_rank_function *f = &r->functions[i];
		if (f->display_len && seen[f->display] == 1)
			f->only |= SVC_STRING_RANK_ONLY_DISPLAY;
		if (f->system_len && seen[f->system] == 1)
			f->only |= SVC_STRING_RANK_ONLY_SYSTEM;
	}
	for (uint32_t i = 0; i < r->n_files && all; i++) {
		svc_string_rank_file *f = &r->files[i];
		if (f->name_len && seen[f->name] == 1)
			f->only = SVC_STRING_RANK_ONLY_NAME;
	}
	free(seen);
}

/* Records the names of index's files in r (left without them when out of memory). */
static void rank_files(svc_string_rank *r, const sym_index *index)
{
	uint32_t n = sym_index_file_count(index);
	svc_string_rank_file *fs = n ? malloc((size_t)n * sizeof(*fs)) : NULL;
	if (!fs)
		return;
	for (uint32_t id = 0; id < n; id++) {
		const char *name = sym_index_file(index, id);
		name_of(r, name, &fs[id].name, &fs[id].name_len);
		fs[id].name_off = (uint32_t)(name - r->base);
		fs[id].only = 0;
	}
	r->files = fs;
	r->n_files = n;
	r->bytes += (size_t)n * sizeof(*fs);
}

bool svc_string_rank_index(svc_string_rank *r, const sym_index *index)
{
	const char *strs;
	size_t size;
	sym_index_strings(index, &strs, &size);
	if (!svc_string_rank_build(r, strs, size))
		return false;
	rank_functions(r, index);
	rank_files(r, index);
	mark_only(r);
	return true;
}

void svc_string_rank_free(svc_string_rank *r)
{
	free(r->blocks);
	free(r->functions);
	free(r->files);
	memset(r, 0, sizeof(*r));
}
