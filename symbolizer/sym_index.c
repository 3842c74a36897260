// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index: loading (validation) of index blobs and what a loaded index
 * tells (API in sym_index.h, layout in sym_index_format_impl.h; the lookups
 * in sym_index_lookup.c).
 *
 * sym_index_load checks everything a lookup will rely on, once, so lookups run
 * without checks: array and table extents against the blob size (with the
 * padding a field read needs), field widths, every bucket and the starts in it
 * ascending, every range, scope, function and file field in range, parents
 * before children (chains end), the string table NUL-terminated.
 */
#include "symbolizer/sym_index.h"
#include "base/base_path.h"
#include "symbolizer/sym_index_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
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
		t->byte[f] = (uint8_t)(row / 8);
		t->sh[f] = (uint8_t)(row % 8);
		t->mask[f] = (uint32_t)((UINT64_C(1) << d->bits[f]) - 1);
		row += d->bits[f];
	}
	row = (row + 7) / 8;   /* rows are whole bytes */
	uint64_t bytes = (uint64_t)d->count * row + SYM_IX_PAD;
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
	    !extent_ok(h->off_starts, (uint64_t)h->ranges.count * 2 + SYM_IX_STARTS_PAD, 1, size) ||
	    !extent_ok(h->off_strtab, h->strtab_size, 1, size) ||
	    h->n_sections > SYM_IX_MAX_SECTIONS ||
	    !extent_ok(h->off_sections, h->n_sections, sizeof(struct sym_ix_section), size))
		return bad(err, "array extends past the end of the blob");
	if (h->strtab_size == 0 || h->buckets.count < 2 || h->bucket_shift > SYM_IX_MAX_SHIFT ||
	    h->files.count == 0)
		return bad(err, "empty string table, bucket table or file table");
	if (h->buckets.bits[SYM_IX_B_FIRST] != SYM_IX_BUCKET_BITS)
		return bad(err, "bucket table rows not 32 bits wide");
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
	x->bucket_first = (const uint32_t *)(const void *)x->buckets.p;
	x->h = h;
	x->base = h->base;
	return SYM_OK;
}

/* Buckets cover all ranges in order; each range's low bits sit in its bucket, ascending. */
static sym_errc check_buckets(const sym_index *x, sym_error *err)
{
	uint32_t n = x->ranges.count, shift = x->shift;
	uint32_t page_mask = (1u << (SYM_IX_MAX_SHIFT - shift)) - 1;
	const uint32_t *first = x->bucket_first;
	if (first[0] != 0 || first[x->n_buckets] != n)
		return bad(err, "bucket table does not cover the ranges");
	for (uint32_t k = 0; k < x->n_buckets; k++) {
		uint32_t lo = first[k], hi = first[k + 1];
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
		if (sym_ix_get(&x->files, i, SYM_IX_FILE_NAME) >= ns)
			return bad(err, "file record out of bounds");
	for (uint32_t i = 0; i < x->ranges.count; i++)
		if (sym_ix_get(&x->ranges, i, SYM_IX_R_SCOPE) > x->scopes.count ||
		    sym_ix_get(&x->ranges, i, SYM_IX_R_FILE) >= nf)
			return bad(err, "range record out of bounds");
	for (uint32_t i = 0; i < x->scopes.count; i++)
		if (sym_ix_get(&x->scopes, i, SYM_IX_S_FUNC) >= x->funcs.count ||
		    sym_ix_get(&x->scopes, i, SYM_IX_S_PARENT) > i ||
		    sym_ix_get(&x->scopes, i, SYM_IX_S_CALL_FILE) >= nf)
			return bad(err, "scope record out of bounds");
	for (uint32_t i = 0; i < x->funcs.count; i++)
		if (sym_ix_get(&x->funcs, i, SYM_IX_F_NAME) >= ns ||
		    sym_ix_get(&x->funcs, i, SYM_IX_F_LINKAGE) >= ns ||
		    sym_ix_get(&x->funcs, i, SYM_IX_F_DISPLAY) >= ns ||
		    sym_ix_get(&x->funcs, i, SYM_IX_F_DECL_FILE) >= nf)
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
	return x->strs + sym_ix_get(&x->files, file, SYM_IX_FILE_NAME);
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

void sym_index_strings(const sym_index *idx, const char **base, size_t *size)
{
	*base = idx->strs;
	*size = idx->h->strtab_size;
}

unsigned sym_index_format_version(void)
{
	return SYM_IX_VERSION;
}
