// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index_lookup: the lookups of a loaded index (API in sym_index.h, layout
 * in sym_index_format_impl.h): the search of an address's bucket, one address
 * at a time or in batches that fetch ahead, and the frames of a covering
 * range (its row, its scope's function, each parent's call site).
 *
 * sym_index_load (sym_index.c) checked everything read here, once.
 */
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_index_impl.h"

#include <string.h>

static inline const char *file_name(const sym_index *x, uint32_t file)
{
	return x->strs + sym_ix_get(&x->files, file, SYM_IX_FILE_NAME);
}

static inline void fill_function(const sym_index *x, uint32_t func, sym_frame *f)
{
	const struct ptab *t = &x->funcs;
	const uint8_t *row = sym_ix_rowp(t, func);
	f->name = x->strs + sym_ix_field(t, row, SYM_IX_F_NAME);
	f->linkage_name = x->strs + sym_ix_field(t, row, SYM_IX_F_LINKAGE);
	f->display_name = x->strs + sym_ix_field(t, row, SYM_IX_F_DISPLAY);
	f->decl_file = file_name(x, sym_ix_field(t, row, SYM_IX_F_DECL_FILE));
	f->decl_line = sym_ix_field(t, row, SYM_IX_F_DECL_LINE);
	f->function_id = func;
}

bool sym_index_function_names(const sym_index *x, uint32_t id, const char **display,
			      const char **system, uint32_t *decl_line)
{
	const struct ptab *t = &x->funcs;
	if (id >= t->count)
		return false;
	const uint8_t *row = sym_ix_rowp(t, id);
	const char *linkage = x->strs + sym_ix_field(t, row, SYM_IX_F_LINKAGE);
	*system = *linkage ? linkage : x->strs + sym_ix_field(t, row, SYM_IX_F_NAME);
	*display = x->strs + sym_ix_field(t, row, SYM_IX_F_DISPLAY);
	*decl_line = sym_ix_field(t, row, SYM_IX_F_DECL_LINE);
	return true;
}

/* The bucket of addr, or false when addr is outside the index. */
static inline bool bucket_of(const sym_index *x, uint64_t addr, uint32_t *k)
{
	uint64_t b = (addr - x->base) >> x->shift;
	*k = (uint32_t)b;
	return addr >= x->base && b < x->n_buckets;
}

static inline void prefetch_row(const struct ptab *t, uint32_t i)
{
	__builtin_prefetch(sym_ix_rowp(t, i));
}

/*
 * Inlined whatever GCC's heuristics say: the search into each caller, the
 * walk into its two entry points, whose branches on which output it fills
 * fold there. (A function whose only effect is __builtin_prefetch is deemed
 * pure by GCC and a call of it whose result goes unused dropped: format 7's
 * first cut fetched no rows so. The batch issues its fetches itself.)
 */
#define SYM_INLINE static inline __attribute__((always_inline))

/* The range row of hit (a handle: the row plus one), or NULL for none. */
SYM_INLINE const uint8_t *hit_row(const sym_index *x, uint32_t hit)
{
	return hit == 0 || hit - 1 >= x->ranges.count ? NULL : sym_ix_rowp(&x->ranges, hit - 1);
}

/* Starts fetching the scope row of the range row rr. */
SYM_INLINE void prefetch_scope(const sym_index *x, const uint8_t *rr)
{
	uint32_t scope = sym_ix_field(&x->ranges, rr, SYM_IX_R_SCOPE);
	if (scope)
		prefetch_row(&x->scopes, scope - 1);
}

/* Starts fetching what the search of bucket k reads: the 16 starts it
 * compares first (32 bytes, at most two lines), and the rows at both ends
 * (the covering range is one of [lo - 1, hi - 1]: at one end or between). */
SYM_INLINE void prefetch_bucket_rows(const sym_index *x, uint32_t k)
{
	uint32_t lo = x->bucket_first[k], hi = x->bucket_first[k + 1];
	__builtin_prefetch(x->starts + lo);
	__builtin_prefetch(x->starts + lo + 15);
	prefetch_row(&x->ranges, lo ? lo - 1 : 0);
	prefetch_row(&x->ranges, hi ? hi - 1 : 0);
}

/*
 * The row of the range covering addr, plus one; 0 when none does. A lookup
 * not fetched ahead (sym_index_lookup) starts fetching the bucket's first row
 * (its rows are 6 bytes in libc's index, a bucket's mostly on one line) while
 * it searches the starts.
 */
SYM_INLINE uint32_t covering_range(const sym_index *x, uint64_t addr)
{
	/* Bucket k holds the ranges starting in addr's (1 << shift)-aligned block, so
	 * their 16-bit starts compare with its low bits. The range covering addr is
	 * the last of them starting at or before it, else the one before them. */
	uint32_t k;
	if (!bucket_of(x, addr, &k))
		return 0;
	uint32_t lo = x->bucket_first[k], hi = x->bucket_first[k + 1];
	prefetch_row(&x->ranges, lo);
	return lo + sym_ix_count_le(x->starts + lo, hi - lo, (uint16_t)(addr - x->base));
}

/*
 * The frames of the range hit, as sym_index_frames tells: into frames when
 * it is not NULL, else as numbers into ids (one walk for both: the branches
 * on frames fold where it is inlined).
 */
SYM_INLINE size_t walk(const sym_index *x, uint32_t hit, sym_frame *frames, sym_frame_ids *ids,
		       size_t max)
{
	const uint8_t *rr = hit_row(x, hit);
	if (!rr)
		return 0;
	const struct ptab *rt = &x->ranges, *st = &x->scopes;
	uint32_t scope = sym_ix_field(rt, rr, SYM_IX_R_SCOPE);
	uint32_t file = sym_ix_field(rt, rr, SYM_IX_R_FILE);
	if (scope == 0 && file == 0)
		return 0;
	/* Scopes are stored plus one: scope - 1 is the row, parent - 1 its parent's. */
	uint32_t parent = 0, func = SYM_INDEX_NO_FUNCTION;
	const uint8_t *sr = NULL;
	if (scope) {
		sr = sym_ix_rowp(st, scope - 1);
		func = sym_ix_field(st, sr, SYM_IX_S_FUNC);
		parent = sym_ix_field(st, sr, SYM_IX_S_PARENT);
	}
	if (!frames) {
		if (max)
			ids[0] = (sym_frame_ids){func, file, sym_ix_field(rt, rr, SYM_IX_R_LINE),
						 sym_ix_field(rt, rr, SYM_IX_R_COLUMN)};
	} else {
		sym_frame spare, *f = max ? &frames[0] : &spare;
		if (scope)
			fill_function(x, func, f);
		else
			*f = (sym_frame){.name = "", .linkage_name = "", .display_name = "",
					 .decl_file = "", .function_id = SYM_INDEX_NO_FUNCTION};
		f->file = file_name(x, file);
		f->line = sym_ix_field(rt, rr, SYM_IX_R_LINE);
		f->column = sym_ix_field(rt, rr, SYM_IX_R_COLUMN);
	}
	size_t n = 1;
	/* Each caller's frame: its function, at the call site the inlined scope records. */
	while (parent) {
		const uint8_t *pr = sym_ix_rowp(st, parent - 1);
		if (n < max && !frames) {
			ids[n] = (sym_frame_ids){
				sym_ix_field(st, pr, SYM_IX_S_FUNC),
				sym_ix_field(st, sr, SYM_IX_S_CALL_FILE),
				sym_ix_field(st, sr, SYM_IX_S_CALL_LINE),
				sym_ix_field(st, sr, SYM_IX_S_CALL_COLUMN),
			};
		} else if (n < max) {
			sym_frame *c = &frames[n];
			fill_function(x, sym_ix_field(st, pr, SYM_IX_S_FUNC), c);
			c->file = file_name(x, sym_ix_field(st, sr, SYM_IX_S_CALL_FILE));
			c->line = sym_ix_field(st, sr, SYM_IX_S_CALL_LINE);
			c->column = sym_ix_field(st, sr, SYM_IX_S_CALL_COLUMN);
		}
		n++;
		sr = pr;
		parent = sym_ix_field(st, pr, SYM_IX_S_PARENT);
	}
	return n;
}

size_t sym_index_frames(const sym_index *x, uint32_t hit, sym_frame *frames, size_t max)
{
	return walk(x, hit, frames, NULL, max);
}

/* The first hits of a batch whose scope rows are fetched before its walk:
 * a group of 8 (svc_lookup's) at once made responses 2% faster; a whole
 * batch of 1,000 at once made bench_lookup --ids 14% slower, and fetching 8
 * ahead of the walk all along cost the group more than it gave. */
#define WALK_AHEAD 8

size_t sym_index_frame_ids_batch(const sym_index *x, const uint32_t *hits, size_t n,
				 size_t max_each, sym_frame_ids *frames, size_t cap,
				 uint32_t *first, uint32_t *counts)
{
	size_t used = 0, i = 0;
	for (size_t k = 0; k < n && k < WALK_AHEAD; k++) {
		const uint8_t *rr = hit_row(x, hits[k]);
		if (rr)
			prefetch_scope(x, rr);
	}
	for (; i < n && used + max_each <= cap; i++) {
		size_t k = walk(x, hits[i], NULL, frames + used, max_each);
		first[i] = (uint32_t)used;
		counts[i] = (uint32_t)k;
		used += k < max_each ? k : max_each;
	}
	return i;
}

size_t sym_index_lookup(const sym_index *x, uint64_t addr, sym_frame *frames, size_t max)
{
	return sym_index_frames(x, covering_range(x, addr), frames, max);
}

const char *sym_index_file(const sym_index *x, uint32_t file_id)
{
	return file_id < x->files.count ? file_name(x, file_id) : "";
}

uint32_t sym_index_file_count(const sym_index *x)
{
	return x->files.count;
}

/* Locations ahead of the search whose range starts and rows are fetched. */
#define FIND_AHEAD 8
#define NO_BUCKET UINT32_MAX

/*
 * Two passes: every address's bucket (kept in hits, its row fetched), then
 * the searches, each starting to fetch the starts and the end rows of the
 * bucket FIND_AHEAD addresses on (its row read by then). A bucket is
 * computed once an address, and the first pass has no dependent loads, so
 * its fetches run far ahead.
 */
void sym_index_find_batch(const sym_index *x, const uint64_t *addrs, size_t n, uint32_t *hits)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t k;
		hits[i] = bucket_of(x, addrs[i], &k) ? k : NO_BUCKET;
		__builtin_prefetch(x->bucket_first + (hits[i] == NO_BUCKET ? 0 : k));
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t ahead = i + FIND_AHEAD < n ? hits[i + FIND_AHEAD] : NO_BUCKET;
		if (ahead != NO_BUCKET)
			prefetch_bucket_rows(x, ahead);
		uint32_t k = hits[i];
		if (k == NO_BUCKET) {
			hits[i] = 0;
			continue;
		}
		uint32_t lo = x->bucket_first[k], hi = x->bucket_first[k + 1];
		hits[i] = lo + sym_ix_count_le(x->starts + lo, hi - lo, (uint16_t)(addrs[i] - x->base));
	}
}

void sym_index_prefetch_hit(const sym_index *x, uint32_t hit, unsigned stage)
{
	const uint8_t *rr = hit_row(x, hit);
	if (!rr)
		return;
	if (stage == 0) {
		prefetch_scope(x, rr);
		prefetch_row(&x->files, sym_ix_field(&x->ranges, rr, SYM_IX_R_FILE));
		return;
	}
	uint32_t scope = sym_ix_field(&x->ranges, rr, SYM_IX_R_SCOPE);
	if (!scope)
		return;
	const uint8_t *sr = sym_ix_rowp(&x->scopes, scope - 1);
	prefetch_row(&x->funcs, sym_ix_field(&x->scopes, sr, SYM_IX_S_FUNC));
	uint32_t parent = sym_ix_field(&x->scopes, sr, SYM_IX_S_PARENT);
	if (parent)
		prefetch_row(&x->scopes, parent - 1);
}
