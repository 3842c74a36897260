/*
 * sym_index: loading (validation) and lookups of index blobs (API in
 * sym_index.h, layout in sym_index_format.h).
 *
 * sym_index_load checks everything a lookup will rely on, once, so lookups run
 * without checks: array extents against the blob size, starts strictly
 * ascending, every record, scope and function field in range, parents before
 * children (chains end), buckets exact, the string table NUL-terminated.
 */
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_index_format.h"

#include <stdlib.h>
#include <string.h>

struct sym_index {
	const struct sym_ix_header *h;
	const uint32_t *starts;
	const struct sym_ix_rec *recs;
	const struct sym_ix_scope *scopes;
	const struct sym_ix_func *funcs;
	const uint32_t *buckets;
	const char *strs;
	uint64_t base;
	uint32_t n_ranges, n_scopes, n_buckets, shift;
};

static sym_errc bad(sym_error *err, const char *what)
{
	return sym_error_set(err, SYM_E_BAD_INDEX, "index: %s", what);
}

/* Is [off, off + count * elem) inside the blob, and aligned? */
static bool extent_ok(uint64_t off, uint64_t count, uint64_t elem, size_t size)
{
	if (off % 8 || off > size)
		return false;
	if (elem && count > (size - off) / elem)
		return false;
	return true;
}

static sym_errc check_header(const void *blob, size_t size, const struct sym_ix_header *h,
			     sym_error *err)
{
	if (size < sizeof(*h))
		return bad(err, "truncated header");
	if (memcmp(h->magic, SYM_IX_MAGIC, 8) != 0)
		return bad(err, "not an index blob (bad magic)");
	if (h->version != SYM_IX_VERSION)
		return sym_error_set(err, SYM_E_BAD_INDEX, "index: version %u, expected %u",
				     h->version, SYM_IX_VERSION);
	if (h->header_size != sizeof(*h) || h->blob_size != size)
		return bad(err, "size in header does not match the blob");
	if (h->n_loads > SYM_IX_MAX_LOADS || h->build_id_len > SYM_BUILD_ID_MAX)
		return bad(err, "bad header counts");
	if (!extent_ok(h->off_starts, h->n_ranges, sizeof(uint32_t), size) ||
	    !extent_ok(h->off_recs, h->n_ranges, sizeof(struct sym_ix_rec), size) ||
	    !extent_ok(h->off_scopes, h->n_scopes, sizeof(struct sym_ix_scope), size) ||
	    !extent_ok(h->off_funcs, h->n_funcs, sizeof(struct sym_ix_func), size) ||
	    !extent_ok(h->off_buckets, (uint64_t)h->n_buckets + 1, sizeof(uint32_t), size) ||
	    !extent_ok(h->off_strtab, h->strtab_size, 1, size))
		return bad(err, "array extends past the end of the blob");
	if (h->strtab_size == 0 || h->n_buckets == 0 || h->bucket_shift >= 64)
		return bad(err, "empty string table or bucket table");
	const char *strs = (const char *)blob + h->off_strtab;
	if (strs[0] != '\0' || strs[h->strtab_size - 1] != '\0')
		return bad(err, "string table not NUL-terminated");
	(void)blob;
	return SYM_OK;
}

static sym_errc check_tables(const sym_index *x, const struct sym_ix_header *h, sym_error *err)
{
	uint32_t ns = h->strtab_size;
	for (uint32_t i = 1; i < x->n_ranges; i++)
		if (x->starts[i] <= x->starts[i - 1])
			return bad(err, "range starts not ascending");
	for (uint32_t i = 0; i < x->n_ranges; i++) {
		const struct sym_ix_rec *r = &x->recs[i];
		if ((r->scope != SYM_IX_NONE && r->scope >= x->n_scopes) || r->file >= ns)
			return bad(err, "range record out of bounds");
	}
	for (uint32_t i = 0; i < x->n_scopes; i++) {
		const struct sym_ix_scope *s = &x->scopes[i];
		if (s->func >= h->n_funcs || s->call_file >= ns ||
		    (s->parent != SYM_IX_NONE && s->parent >= i))
			return bad(err, "scope record out of bounds");
	}
	for (uint32_t i = 0; i < h->n_funcs; i++) {
		const struct sym_ix_func *f = &x->funcs[i];
		if (f->name >= ns || f->linkage >= ns || f->display >= ns || f->decl_file >= ns)
			return bad(err, "function record out of bounds");
	}
	/* Buckets must be exactly what the writer computes. */
	uint32_t j = 0;
	for (uint64_t k = 0; k <= x->n_buckets; k++) {
		uint64_t target = k << x->shift;
		while (j + 1 < x->n_ranges && x->starts[j + 1] <= target)
			j++;
		if (x->buckets[k] != (x->n_ranges ? j : 0))
			return bad(err, "bucket table inconsistent");
	}
	return SYM_OK;
}

sym_errc sym_index_load(const void *blob, size_t size, sym_index **out, sym_error *err)
{
	*out = NULL;
	if (!blob || ((uintptr_t)blob & 7))
		return sym_error_set(err, SYM_E_INVALID, "index: blob must be 8-byte aligned");
	const struct sym_ix_header *h = blob;
	sym_errc rc = check_header(blob, size, h, err);
	if (rc)
		return rc;
	const uint8_t *b = blob;
	sym_index x = {
		.h = h,
		.starts = (const uint32_t *)(b + h->off_starts),
		.recs = (const struct sym_ix_rec *)(b + h->off_recs),
		.scopes = (const struct sym_ix_scope *)(b + h->off_scopes),
		.funcs = (const struct sym_ix_func *)(b + h->off_funcs),
		.buckets = (const uint32_t *)(b + h->off_buckets),
		.strs = (const char *)(b + h->off_strtab),
		.base = h->base,
		.n_ranges = h->n_ranges,
		.n_scopes = h->n_scopes,
		.n_buckets = h->n_buckets,
		.shift = h->bucket_shift,
	};
	if ((rc = check_tables(&x, h, err)))
		return rc;
	sym_index *idx = malloc(sizeof(*idx));
	if (!idx)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	*idx = x;
	*out = idx;
	return SYM_OK;
}

void sym_index_destroy(sym_index *idx)
{
	free(idx);
}

void sym_index_get_info(const sym_index *idx, sym_index_info *out)
{
	const struct sym_ix_header *h = idx->h;
	memset(out, 0, sizeof(*out));
	out->build_id.len = h->build_id_len;
	memcpy(out->build_id.bytes, h->build_id, h->build_id_len);
	out->flags = h->flags;
	out->n_ranges = h->n_ranges;
	out->n_functions = h->n_funcs;
	out->n_loads = h->n_loads;
	for (uint32_t i = 0; i < h->n_loads; i++) {
		const struct sym_ix_load *l = &h->loads[i];
		out->loads[i] = (sym_elf_load){l->vaddr, l->offset, l->filesz, l->memsz, l->flags};
	}
}

static void fill_function(const sym_index *x, uint32_t func, sym_frame *f)
{
	const struct sym_ix_func *fn = &x->funcs[func];
	f->name = x->strs + fn->name;
	f->linkage_name = x->strs + fn->linkage;
	f->display_name = x->strs + fn->display;
	f->decl_file = x->strs + fn->decl_file;
	f->decl_line = fn->decl_line;
	f->function_id = func;
}

static const sym_frame unknown_function = {
	.name = "", .linkage_name = "", .display_name = "", .decl_file = "",
	.function_id = SYM_IX_NONE, .file = "",
};

size_t sym_index_lookup(const sym_index *x, uint64_t addr, sym_frame *frames, size_t max)
{
	if (x->n_ranges < 2 || addr < x->base)
		return 0;
	uint64_t off = addr - x->base;
	if (off >= x->starts[x->n_ranges - 1])
		return 0;
	uint64_t k = off >> x->shift;
	if (k >= x->n_buckets)
		k = x->n_buckets - 1;
	/* Last i in [lo, hi] with starts[i] <= off. */
	uint32_t lo = x->buckets[k], hi = x->buckets[k + 1];
	uint32_t o = (uint32_t)off;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (x->starts[mid] <= o)
			lo = mid;
		else
			hi = mid - 1;
	}
	const struct sym_ix_rec *r = &x->recs[lo];
	if (r->scope == SYM_IX_NONE && r->file == 0)
		return 0;
	size_t n = 0;
	sym_frame f = unknown_function;
	if (r->scope != SYM_IX_NONE)
		fill_function(x, x->scopes[r->scope].func, &f);
	f.file = x->strs + r->file;
	f.line = r->line;
	f.column = r->column;
	if (n < max)
		frames[n] = f;
	n++;
	for (uint32_t s = r->scope; s != SYM_IX_NONE && x->scopes[s].parent != SYM_IX_NONE;) {
		const struct sym_ix_scope *sc = &x->scopes[s];
		if (n < max) {
			fill_function(x, x->scopes[sc->parent].func, &frames[n]);
			frames[n].file = x->strs + sc->call_file;
			frames[n].line = sc->call_line;
			frames[n].column = sc->call_column;
		}
		n++;
		s = sc->parent;
	}
	return n;
}
