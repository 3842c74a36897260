// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index: loading (validation) and lookups of index blobs (API in
 * sym_index.h, layout in sym_index_format_impl.h).
 *
 * sym_index_load checks everything a lookup will rely on, once, so lookups run
 * without checks: array and table extents against the blob size (with the
 * padding a field read needs), field widths, every bucket and the starts in it
 * ascending, every range, scope, function and file field in range, parents
 * before children (chains end), the string table NUL-terminated.
 */
#include "symbolizer/sym_index.h"
#include "base/base_path.h"
#include "symbolizer/sym_bits_impl.h"
#include "symbolizer/sym_index_format_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A packed table, ready to read: row width and each field's offset in a row. */
struct ptab {
	const uint8_t *p;
	uint32_t count, row;
	uint32_t mask[SYM_IX_MAX_FIELDS];   /* (1 << width) - 1 of each field */
	uint8_t width[SYM_IX_MAX_FIELDS], at[SYM_IX_MAX_FIELDS];
};

struct sym_index {
	const struct sym_ix_header *h;
	const uint16_t *starts;
	struct ptab ranges, scopes, funcs, files, buckets;
	const char *strs;
	const struct sym_ix_section *sections;
	uint64_t base;
	uint32_t n_buckets, shift;
};

static inline uint32_t get(const struct ptab *t, uint32_t i, unsigned f)
{
	uint64_t bit = (uint64_t)i * t->row + t->at[f], v;
	memcpy(&v, t->p + (bit >> 3), sizeof(v));
	return (uint32_t)(v >> (bit & 7)) & t->mask[f];
}

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

/* Checks a table's descriptor and extent (rows plus padding) and fills t. */
static bool table_ok(const uint8_t *blob, size_t size, const struct sym_ix_table *d,
		     unsigned fields, struct ptab *t)
{
	uint32_t row = 0;
	if (d->count > (uint64_t)size * 8)
		return false;   /* bounds the loader's work even for zero-width rows */
	for (unsigned f = 0; f < SYM_IX_MAX_FIELDS; f++) {
		if (d->bits[f] > 32 || (f >= fields && d->bits[f]))
			return false;
		t->at[f] = (uint8_t)row;
		t->width[f] = d->bits[f];
		t->mask[f] = (uint32_t)((UINT64_C(1) << d->bits[f]) - 1);
		row += d->bits[f];
	}
	uint64_t bytes = ((uint64_t)d->count * row + 7) / 8 + SYM_IX_PAD;
	if (!extent_ok(d->off, bytes, 1, size))
		return false;
	t->p = blob + d->off;
	t->count = d->count;
	t->row = row;
	return true;
}

static sym_errc check_header(const uint8_t *blob, size_t size, sym_index *x, sym_error *err)
{
	const struct sym_ix_header *h = (const struct sym_ix_header *)blob;
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
	if (!table_ok(blob, size, &h->ranges, SYM_IX_R_FIELDS, &x->ranges) ||
	    !table_ok(blob, size, &h->scopes, SYM_IX_S_FIELDS, &x->scopes) ||
	    !table_ok(blob, size, &h->funcs, SYM_IX_F_FIELDS, &x->funcs) ||
	    !table_ok(blob, size, &h->files, SYM_IX_FILE_FIELDS, &x->files) ||
	    !table_ok(blob, size, &h->buckets, SYM_IX_B_FIELDS, &x->buckets) ||
	    !extent_ok(h->off_starts, h->ranges.count, sizeof(uint16_t), size) ||
	    !extent_ok(h->off_strtab, h->strtab_size, 1, size) ||
	    h->n_sections > SYM_IX_MAX_SECTIONS ||
	    !extent_ok(h->off_sections, h->n_sections, sizeof(struct sym_ix_section), size))
		return bad(err, "array extends past the end of the blob");
	if (h->strtab_size == 0 || h->buckets.count < 2 || h->bucket_shift > SYM_IX_MAX_SHIFT ||
	    h->files.count == 0)
		return bad(err, "empty string table, bucket table or file table");
	x->n_buckets = h->buckets.count - 1;
	x->shift = h->bucket_shift;
	if (((uint64_t)(x->n_buckets - 1) << x->shift) > UINT32_MAX)
		return bad(err, "bucket table longer than 32-bit offsets reach");
	x->strs = (const char *)blob + h->off_strtab;
	if (x->strs[0] != '\0' || x->strs[h->strtab_size - 1] != '\0')
		return bad(err, "string table not NUL-terminated");
	x->sections = (const struct sym_ix_section *)(blob + h->off_sections);
	for (uint32_t i = 0; i < h->n_sections; i++)
		if (x->sections[i].name >= h->strtab_size)
			return bad(err, "section name out of bounds");
	x->starts = (const uint16_t *)(blob + h->off_starts);
	x->h = h;
	x->base = h->base;
	return SYM_OK;
}

/* Buckets cover all ranges in order; each range's low bits sit in its bucket, ascending. */
static sym_errc check_buckets(const sym_index *x, sym_error *err)
{
	uint32_t n = x->ranges.count, shift = x->shift;
	uint32_t page_mask = (1u << (SYM_IX_MAX_SHIFT - shift)) - 1;
	if (get(&x->buckets, 0, SYM_IX_B_FIRST) != 0 ||
	    get(&x->buckets, x->n_buckets, SYM_IX_B_FIRST) != n)
		return bad(err, "bucket table does not cover the ranges");
	for (uint32_t k = 0; k < x->n_buckets; k++) {
		uint32_t lo = get(&x->buckets, k, SYM_IX_B_FIRST);
		uint32_t hi = get(&x->buckets, k + 1, SYM_IX_B_FIRST);
		if (hi < lo || hi > n)
			return bad(err, "bucket table not ascending");
		for (uint32_t i = lo; i < hi; i++) {
			if ((uint32_t)(x->starts[i] >> shift) != (k & page_mask))
				return bad(err, "range start outside its bucket");
			if (i > lo && x->starts[i] <= x->starts[i - 1])
				return bad(err, "range starts not ascending");
		}
	}
	return SYM_OK;
}

static sym_errc check_tables(const sym_index *x, sym_error *err)
{
	uint32_t ns = x->h->strtab_size, nf = x->files.count;
	for (uint32_t i = 0; i < nf; i++)
		if (get(&x->files, i, SYM_IX_FILE_NAME) >= ns)
			return bad(err, "file record out of bounds");
	for (uint32_t i = 0; i < x->ranges.count; i++)
		if (get(&x->ranges, i, SYM_IX_R_SCOPE) > x->scopes.count ||
		    get(&x->ranges, i, SYM_IX_R_FILE) >= nf)
			return bad(err, "range record out of bounds");
	for (uint32_t i = 0; i < x->scopes.count; i++)
		if (get(&x->scopes, i, SYM_IX_S_FUNC) >= x->funcs.count ||
		    get(&x->scopes, i, SYM_IX_S_PARENT) > i ||
		    get(&x->scopes, i, SYM_IX_S_CALL_FILE) >= nf)
			return bad(err, "scope record out of bounds");
	for (uint32_t i = 0; i < x->funcs.count; i++)
		if (get(&x->funcs, i, SYM_IX_F_NAME) >= ns || get(&x->funcs, i, SYM_IX_F_LINKAGE) >= ns ||
		    get(&x->funcs, i, SYM_IX_F_DISPLAY) >= ns ||
		    get(&x->funcs, i, SYM_IX_F_DECL_FILE) >= nf)
			return bad(err, "function record out of bounds");
	return check_buckets(x, err);
}

sym_errc sym_index_load(const void *blob, size_t size, sym_index **out, sym_error *err)
{
	*out = NULL;
	if (!blob || ((uintptr_t)blob & 7))
		return sym_error_set(err, SYM_E_INVALID, "index: blob must be 8-byte aligned");
	sym_index x = {0};
	sym_errc rc = check_header(blob, size, &x, err);
	if (rc || (rc = check_tables(&x, err)))
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
	out->n_ranges = h->ranges.count;
	out->n_functions = h->funcs.count;
	out->n_loads = h->n_loads;
	for (uint32_t i = 0; i < h->n_loads; i++) {
		const struct sym_ix_load *l = &h->loads[i];
		out->loads[i] = (sym_elf_load){l->vaddr, l->offset, l->filesz, l->memsz, l->flags};
	}
	out->elf_type = h->elf_type;
	out->n_sections = h->n_sections;
	out->kernel_stext = h->kernel_stext;
	out->kernel_text = h->kernel_text;
	out->source = h->flags & SYM_INDEX_FROM_DWARF    ? SYM_INDEX_SOURCE_DWARF
		      : h->flags & SYM_INDEX_FROM_PCLNTAB ? SYM_INDEX_SOURCE_PCLNTAB
		      : h->flags & SYM_INDEX_HAS_FUNCTIONS ? SYM_INDEX_SOURCE_SYMTAB
							   : SYM_INDEX_SOURCE_NONE;
}

const char *sym_index_source_name(sym_index_source s)
{
	static const char *const names[] = {"none", "dwarf", "pclntab", "symtab"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

bool sym_index_section(const sym_index *idx, const char *name, uint64_t *addr, uint64_t *size)
{
	for (uint32_t i = 0; i < idx->h->n_sections; i++) {
		const struct sym_ix_section *s = &idx->sections[i];
		if (!strcmp(idx->strs + s->name, name)) {
			*addr = s->addr;
			*size = s->size;
			return true;
		}
	}
	return false;
}

static inline const char *file_name(const sym_index *x, uint32_t file)
{
	return x->strs + get(&x->files, file, SYM_IX_FILE_NAME);
}

bool sym_index_names_file(const sym_index *idx, const char *path)
{
	char canon[PATH_MAX];
	size_t len = strlen(path);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (uint32_t i = 1; i < idx->files.count; i++) {
		const char *name = file_name(idx, i);
		size_t n = strlen(name);
		/* most names end in another file name: skip them without work */
		const char *nb = strrchr(name, '/');
		nb = nb ? nb + 1 : name;
		if (strcmp(nb, base) != 0)
			continue;
		if ((n == len && !memcmp(name, path, len)) ||
		    (base_path_canon(name, canon, sizeof(canon)) && !strcmp(canon, path)))
			return true;
	}
	return false;
}

/*
 * The nf fields of row i of t into v: with one 8-byte load when the row fits
 * in the 57 bits such a load always holds (whatever the row's bit offset),
 * else one load per field.
 */
static inline void row_read(const struct ptab *t, uint32_t i, uint32_t *v, unsigned nf)
{
	uint64_t bit = (uint64_t)i * t->row;
	if (t->row <= 57) {
		uint64_t w;
		memcpy(&w, t->p + (bit >> 3), sizeof(w));
		w >>= bit & 7;
		for (unsigned f = 0; f < nf; f++) {
			v[f] = (uint32_t)w & t->mask[f];
			w >>= t->width[f];
		}
		return;
	}
	for (unsigned f = 0; f < nf; f++) {
		uint64_t b = bit + t->at[f], w;
		memcpy(&w, t->p + (b >> 3), sizeof(w));
		v[f] = (uint32_t)(w >> (b & 7)) & t->mask[f];
	}
}

static inline void fill_function(const sym_index *x, uint32_t func, sym_frame *f)
{
	uint32_t v[SYM_IX_F_FIELDS];
	row_read(&x->funcs, func, v, SYM_IX_F_FIELDS);
	f->name = x->strs + v[SYM_IX_F_NAME];
	f->linkage_name = x->strs + v[SYM_IX_F_LINKAGE];
	f->display_name = x->strs + v[SYM_IX_F_DISPLAY];
	f->decl_file = file_name(x, v[SYM_IX_F_DECL_FILE]);
	f->decl_line = v[SYM_IX_F_DECL_LINE];
	f->function_id = func;
}

static const sym_frame unknown_function = {
	.name = "", .linkage_name = "", .display_name = "", .decl_file = "",
	.function_id = SYM_IX_NONE, .file = "",
};

/* The first range of bucket k and of bucket k + 1: both rows with one load when they fit. */
static inline void bucket_bounds(const sym_index *x, uint32_t k, uint32_t *lo, uint32_t *hi)
{
	const struct ptab *t = &x->buckets;
	if (t->row > 28) {
		*lo = get(t, k, SYM_IX_B_FIRST);
		*hi = get(t, k + 1, SYM_IX_B_FIRST);
		return;
	}
	uint64_t bit = (uint64_t)k * t->row, w;
	memcpy(&w, t->p + (bit >> 3), sizeof(w));
	w >>= bit & 7;
	*lo = (uint32_t)w & t->mask[SYM_IX_B_FIRST];
	*hi = (uint32_t)(w >> t->row) & t->mask[SYM_IX_B_FIRST];
}

void sym_index_prefetch(const sym_index *x, uint64_t addr)
{
	uint64_t k = (addr - x->base) >> x->shift;
	if (addr >= x->base && k < x->n_buckets)
		__builtin_prefetch(x->buckets.p + k * x->buckets.row / 8);
}

void sym_index_prefetch_rows(const sym_index *x, uint64_t addr)
{
	uint64_t k = (addr - x->base) >> x->shift;
	if (addr < x->base || k >= x->n_buckets)
		return;
	uint32_t lo, hi;
	bucket_bounds(x, (uint32_t)k, &lo, &hi);
	/* The covering range is one of [lo - 1, hi - 1]: its start among the
	 * bucket's, its row at one end or in between. */
	__builtin_prefetch(x->starts + lo);
	__builtin_prefetch(x->starts + (hi > lo ? hi - 1 : lo));
	uint32_t first = lo ? lo - 1 : 0, last = hi ? hi - 1 : 0;
	__builtin_prefetch(x->ranges.p + (uint64_t)first * x->ranges.row / 8);
	__builtin_prefetch(x->ranges.p + (uint64_t)last * x->ranges.row / 8);
}

/* The row of the range covering addr, plus one; 0 when none does. */
static inline uint32_t covering_range(const sym_index *x, uint64_t addr)
{
	if (addr < x->base)
		return 0;
	uint64_t off = addr - x->base;
	uint64_t k = off >> x->shift;
	if (k >= x->n_buckets)
		return 0;
	/* Bucket k holds the ranges starting in off's (1 << shift)-aligned block, so
	 * their 16-bit starts compare with off's low bits. The range covering off is
	 * the last of them starting at or before off, else the one before them. */
	uint32_t lo, hi;
	bucket_bounds(x, (uint32_t)k, &lo, &hi);
	/* Its row is (almost always) among the bucket's: fetch them during the search. */
	__builtin_prefetch(x->ranges.p + (uint64_t)lo * x->ranges.row / 8);
	__builtin_prefetch(x->ranges.p + (uint64_t)hi * x->ranges.row / 8);
	uint16_t o = (uint16_t)off;
	uint32_t r = lo;   /* one past the covering range */
	if (hi > lo) {
		/* Branch-free: the first start above o stays within [b, b + n]. */
		const uint16_t *b = x->starts + lo;
		for (uint32_t n = hi - lo; n > 1; n -= n / 2)
			b = b[n / 2] <= o ? b + n / 2 : b;
		r = (uint32_t)(b - x->starts) + (*b <= o);
	}
	return r;
}

size_t sym_index_lookup(const sym_index *x, uint64_t addr, sym_frame *frames, size_t max)
{
	return sym_index_frames(x, covering_range(x, addr), frames, max);
}

/* Addresses whose bucket row, then range starts, are fetched ahead of the search. */
#define FIND_AHEAD 16

void sym_index_find_batch(const sym_index *x, const uint64_t *addrs, size_t n, uint32_t *hits)
{
	for (size_t i = 0; i < n && i < FIND_AHEAD; i++)
		sym_index_prefetch(x, addrs[i]);
	for (size_t i = 0; i < n && i < FIND_AHEAD / 2; i++)
		sym_index_prefetch_rows(x, addrs[i]);
	for (size_t i = 0; i < n; i++) {
		if (i + FIND_AHEAD < n)
			sym_index_prefetch(x, addrs[i + FIND_AHEAD]);
		if (i + FIND_AHEAD / 2 < n)
			sym_index_prefetch_rows(x, addrs[i + FIND_AHEAD / 2]);
		uint32_t r = covering_range(x, addrs[i]);
		if (r)
			__builtin_prefetch(x->ranges.p + (uint64_t)(r - 1) * x->ranges.row / 8);
		hits[i] = r;
	}
}

static inline void prefetch_row(const struct ptab *t, uint32_t i)
{
	__builtin_prefetch(t->p + (uint64_t)i * t->row / 8);
}

void sym_index_prefetch_hit(const sym_index *x, uint32_t hit, unsigned stage)
{
	if (hit-- == 0 || hit >= x->ranges.count)
		return;
	uint32_t scope = get(&x->ranges, hit, SYM_IX_R_SCOPE);
	if (stage == 0) {
		if (scope)
			prefetch_row(&x->scopes, scope - 1);
		prefetch_row(&x->files, get(&x->ranges, hit, SYM_IX_R_FILE));
		return;
	}
	if (!scope)
		return;
	uint32_t func = get(&x->scopes, scope - 1, SYM_IX_S_FUNC);
	prefetch_row(&x->funcs, func);
	uint32_t parent = get(&x->scopes, scope - 1, SYM_IX_S_PARENT);
	if (parent)
		prefetch_row(&x->scopes, parent - 1);
}

size_t sym_index_frames(const sym_index *x, uint32_t hit, sym_frame *frames, size_t max)
{
	uint32_t r = hit;
	if (r-- == 0 || r >= x->ranges.count)
		return 0;
	uint32_t rv[SYM_IX_R_FIELDS];
	row_read(&x->ranges, r, rv, SYM_IX_R_FIELDS);
	uint32_t scope = rv[SYM_IX_R_SCOPE];
	if (scope == 0 && rv[SYM_IX_R_FILE] == 0)
		return 0;
	sym_frame spare, *f = max ? &frames[0] : &spare;
	/* Scopes are stored plus one: scope - 1 is the row, parent - 1 its parent's. */
	uint32_t parent = 0;
	if (scope) {
		fill_function(x, get(&x->scopes, scope - 1, SYM_IX_S_FUNC), f);
		parent = get(&x->scopes, scope - 1, SYM_IX_S_PARENT);
	} else {
		*f = unknown_function;
	}
	f->file = file_name(x, rv[SYM_IX_R_FILE]);
	f->line = rv[SYM_IX_R_LINE];
	f->column = rv[SYM_IX_R_COLUMN];
	size_t n = 1;
	/* Each caller's frame: its function, at the call site the inlined scope records. */
	for (; parent; scope = parent, parent = get(&x->scopes, parent - 1, SYM_IX_S_PARENT)) {
		if (n < max) {
			fill_function(x, get(&x->scopes, parent - 1, SYM_IX_S_FUNC), &frames[n]);
			frames[n].file = file_name(x, get(&x->scopes, scope - 1, SYM_IX_S_CALL_FILE));
			frames[n].line = get(&x->scopes, scope - 1, SYM_IX_S_CALL_LINE);
			frames[n].column = get(&x->scopes, scope - 1, SYM_IX_S_CALL_COLUMN);
		}
		n++;
	}
	return n;
}

void sym_index_strings(const sym_index *idx, const char **base, size_t *size)
{
	*base = idx->strs;
	*size = idx->h->strtab_size;
}

unsigned sym_index_format_version(void)
{
	return SYM_IX_VERSION;
}
