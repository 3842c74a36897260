// SPDX-License-Identifier: Apache-2.0
/*
 * sym_flatten: the sweep that makes segments disjoint (see sym_flatten_impl.h).
 */
#include "symbolizer/sym_flatten_impl.h"

#include <stdlib.h>
#include <string.h>

static int cmp_depth(const void *pa, const void *pb)
{
	const sym_span *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/*
 * Line rows: of two rows with the same range, the first unit's wins (it is
 * pushed last), as llvm-symbolizer asks the first unit that covers an address:
 * a COMDAT function that several units describe at its one kept address.
 */
static int cmp_plain(const void *pa, const void *pb)
{
	const sym_span *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;
	return a->order > b->order ? -1 : a->order < b->order;
}

/* a sorts before b: cmp_depth or cmp_plain below zero, inlined for the merge sort. */
static inline bool before(const sym_span *a, const sym_span *b, bool by_depth)
{
	if (a->lo != b->lo)
		return a->lo < b->lo;
	if (by_depth && a->b != b->b)
		return a->b < b->b;
	if (a->hi != b->hi)
		return a->hi > b->hi;
	return by_depth ? a->order < b->order : a->order > b->order;
}

/* The end of the non-descending run of v starting at i (n when it reaches the end). */
static size_t run_end(const sym_span *v, size_t i, size_t n, bool by_depth)
{
	while (i + 1 < n && !before(&v[i + 1], &v[i], by_depth))
		i++;
	return i + 1;
}

/* Merges the sorted runs [i, m) and [m, e) of src into dst[i, e). */
static void merge(const sym_span *src, sym_span *dst, size_t i, size_t m, size_t e,
		  bool by_depth)
{
	size_t a = i, b = m, o = i;
	while (a < m && b < e)
		dst[o++] = before(&src[b], &src[a], by_depth) ? src[b++] : src[a++];
	while (a < m)
		dst[o++] = src[a++];
	while (b < e)
		dst[o++] = src[b++];
}

/*
 * Sorts spans as qsort with cmp_depth or cmp_plain would (the orders are
 * total, so the result is the same), as a natural merge sort: the spans come
 * in long ascending runs (a line table's rows, a unit's scopes), so a pass
 * merges neighbouring runs and the number of passes is the log of the number
 * of runs. Already sorted input costs one comparison a span. Needs n spans of
 * scratch, as glibc's qsort does; qsort itself when that is not available.
 */
static void sort_spans(sym_span *v, size_t n, bool by_depth)
{
	if (run_end(v, 0, n, by_depth) == n)
		return;
	sym_span *tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(v, n, sizeof(*v), by_depth ? cmp_depth : cmp_plain);
		return;
	}
	sym_span *src = v, *dst = tmp;
	for (;;) {
		size_t i = 0, runs = 0;
		while (i < n) {
			size_t m = run_end(src, i, n, by_depth);
			size_t e = m < n ? run_end(src, m, n, by_depth) : n;
			merge(src, dst, i, m, e, by_depth);
			i = e;
			runs++;
		}
		sym_span *t = src;
		src = dst;
		dst = t;
		if (runs == 1)
			break;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

static int emit(base_vec *out, uint64_t lo, uint64_t hi, size_t span)
{
	if (lo >= hi)
		return 0;
	sym_seg *last = out->len ? &BASE_VEC_AT(out, sym_seg, out->len - 1) : NULL;
	if (last && last->hi == lo && last->span == span) {
		last->hi = hi;
		return 0;
	}
	sym_seg *s = base_vec_push(out);
	if (!s)
		return -1;
	*s = (sym_seg){.lo = lo, .hi = hi, .span = (uint32_t)span};
	return 0;
}

sym_errc sym_flatten(sym_span *spans, size_t n, bool by_depth, base_vec *out, sym_error *err)
{
	if (n > UINT32_MAX)
		return sym_error_set(err, SYM_E_TOO_LARGE, "too many address ranges");
	if (n)
		sort_spans(spans, n, by_depth);
	base_vec stack;
	base_vec_init(&stack, sizeof(uint32_t), n + 1);
	uint64_t pos = 0;
	sym_errc rc = SYM_OK;
	for (size_t i = 0; i <= n; i++) {
		bool last = i == n;
		if (!last && spans[i].lo >= spans[i].hi)
			continue;
		uint64_t until = last ? UINT64_MAX : spans[i].lo;
		/* Emit what the stack covers up to the next span's start. */
		while (stack.len && pos < until) {
			uint32_t top = BASE_VEC_AT(&stack, uint32_t, stack.len - 1);
			if (spans[top].hi <= pos) {
				stack.len--;
				continue;
			}
			uint64_t end = spans[top].hi < until ? spans[top].hi : until;
			if (emit(out, pos, end, top)) {
				rc = sym_error_set(err, SYM_E_NOMEM, "out of memory flattening ranges");
				goto done;
			}
			pos = end;
		}
		if (last)
			break;
		pos = spans[i].lo;
		uint32_t *slot = base_vec_push(&stack);
		if (!slot) {
			rc = sym_error_set(err, SYM_E_NOMEM, "out of memory flattening ranges");
			goto done;
		}
		*slot = (uint32_t)i;
	}
done:
	base_vec_deinit(&stack);
	return rc;
}
