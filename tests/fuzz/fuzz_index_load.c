// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: an index blob from an untrusted store -> sym_index_load ->
 * lookups, single and batched (with the prefetch hints of batches), at addresses taken from the
 * input; the two agree, and the frames as numbers name back to the same frames. Loading
 * either refuses or yields an index every lookup can walk without leaving the blob. Then
 * the service's string ordinals of the index (svc_string_rank_index): each function's and
 * file's recorded name is the one the index gives, or marked not recorded, with its offset
 * (and a function's first line) as the index gives them; a name marked as no other
 * record's is named by no other record.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/resolve/svc_string_rank.h"
#include "symbolizer/sym_index.h"

/* A record (ord, len) of the name s: s's own ordinal and length, or not recorded. */
static void check_record(const svc_string_rank *r, const char *s, uint32_t ord, uint16_t len)
{
	uint32_t o;
	size_t n;
	if (len == SVC_STRING_RANK_LONG)
		return;
	if (!svc_string_rank_slice(r, s, &o, &n) || o != ord || n != len || o >= r->n_strings)
		abort();
}

/* How many records name string ord (a function naming it twice counts once). */
static unsigned records_naming(const svc_string_rank *r, uint32_t ord)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < r->n_functions; i++) {
		const svc_string_rank_function *f = &r->functions[i];
		n += (f->display_len && f->display == ord) ||
		     (f->system_len && f->system == ord);
	}
	for (uint32_t i = 0; i < r->n_files; i++)
		n += r->files[i].name_len && r->files[i].name == ord;
	return n;
}

/* A name marked as no other record's: recorded, not empty, and named once. */
static void check_only(const svc_string_rank *r, bool marked, uint32_t ord, uint16_t len)
{
	if (marked && (len == SVC_STRING_RANK_LONG || len == 0 || records_naming(r, ord) != 1))
		abort();
}

static void check_ranked(const sym_index *idx)
{
	svc_string_rank r;
	if (!svc_string_rank_index(&r, idx))
		return;
	/* Marks are checked against every record: on small indexes only. */
	bool marks = r.n_functions + r.n_files <= 512;
	for (uint32_t id = 0; id < r.n_functions; id++) {
		const char *display, *system;
		uint32_t decl_line;
		if (!sym_index_function_names(idx, id, &display, &system, &decl_line))
			abort();
		const svc_string_rank_function *f = &r.functions[id];
		check_record(&r, display, f->display, f->display_len);
		check_record(&r, system, f->system, f->system_len);
		if (r.base + f->display_off != display || r.base + f->system_off != system ||
		    f->decl_line != decl_line)
			abort();
		if (marks) {
			check_only(&r, f->only & SVC_STRING_RANK_ONLY_DISPLAY, f->display,
				   f->display_len);
			check_only(&r, f->only & SVC_STRING_RANK_ONLY_SYSTEM, f->system,
				   f->system_len);
		}
	}
	for (uint32_t id = 0; id < r.n_files; id++) {
		const svc_string_rank_file *f = &r.files[id];
		const char *name = sym_index_file(idx, id);
		check_record(&r, name, f->name, f->name_len);
		if (r.base + f->name_off != name)
			abort();
		if (marks)
			check_only(&r, f->only & SVC_STRING_RANK_ONLY_NAME, f->name, f->name_len);
	}
	svc_string_rank_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	void *blob = NULL;
	if (posix_memalign(&blob, 8, size ? size : 8))
		return 0;
	memcpy(blob, data, size);
	sym_index *idx = NULL;
	if (sym_index_load(blob, size, &idx, NULL) == SYM_OK) {
		sym_frame f[8];
		for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
			uint64_t a;
			memcpy(&a, data + i, 8);
			sym_index_lookup(idx, a, f, 8);
			sym_index_lookup(idx, a & 0xffffff, f, 8);
		}
		/* the batch path: search (its fetches ahead read bucket rows too: in
		 * bounds on any index), hints, frames, over the same addresses */
		uint64_t addrs[64];
		uint32_t hits[64];
		size_t n = 0;
		for (size_t i = 0; i + 8 <= size && n < 64; i += 8, n++)
			memcpy(&addrs[n], data + i, 8);
		sym_index_find_batch(idx, addrs, n, hits);
		for (size_t i = 0; i < n; i++) {
			sym_index_prefetch_hit(idx, hits[i], 0);
			sym_index_prefetch_hit(idx, hits[i], 1);
			sym_index_prefetch_hit(idx, (uint32_t)addrs[i], 1);
			/* the batch's search (SSE2, 16 starts a step) finds what one lookup does */
			sym_frame g[8];
			size_t k = sym_index_frames(idx, hits[i], f, 8);
			if (k != sym_index_lookup(idx, addrs[i], g, 8) ||
			    (k && (f[0].line != g[0].line || f[0].name != g[0].name)))
				abort();
			/* the frames as numbers (one handle a call): the same chain,
			 * named back the same */
			sym_frame_ids ids[8];
			uint32_t first, count;
			if (sym_index_frame_ids_batch(idx, &hits[i], 1, 8, ids, 8, &first, &count) != 1 ||
			    count != k)
				abort();
			for (size_t j = 0; j < k && j < 8; j++) {
				const char *display, *system;
				uint32_t decl_line;
				if (ids[j].function_id != f[j].function_id ||
				    sym_index_file(idx, ids[j].file_id) != f[j].file ||
				    ids[j].line != f[j].line || ids[j].column != f[j].column)
					abort();
				bool known = sym_index_function_names(idx, ids[j].function_id,
								      &display, &system, &decl_line);
				if (known != (f[j].function_id != SYM_INDEX_NO_FUNCTION) ||
				    (known && (display != f[j].display_name ||
					       decl_line != f[j].decl_line ||
					       system != (f[j].linkage_name[0] ? f[j].linkage_name
									       : f[j].name))))
					abort();
			}
			sym_index_frames(idx, (uint32_t)addrs[i], f, 8);
			uint32_t any = (uint32_t)addrs[i];   /* any handle walks inside the blob */
			sym_index_frame_ids_batch(idx, &any, 1, 8, ids, 8, &first, &count);
		}
		/* the frames as ids of the whole batch in one call: the same chains */
		static sym_frame_ids all[64 * 4];
		uint32_t at[64], counts[64];
		if (sym_index_frame_ids_batch(idx, hits, n, 4, all, 64 * 4, at, counts) != n)
			abort();
		for (size_t i = 0; i < n; i++) {
			sym_frame fr[4];
			size_t k = sym_index_frames(idx, hits[i], fr, 4);
			if (counts[i] != k)
				abort();
			for (size_t j = 0; j < k && j < 4; j++)
				if (all[at[i] + j].function_id != fr[j].function_id ||
				    all[at[i] + j].line != fr[j].line)
					abort();
		}
		check_ranked(idx);
		sym_index_destroy(idx);
	}
	free(blob);
	return 0;
}
