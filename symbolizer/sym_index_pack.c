// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index_pack: ranges, scopes, functions and strings -> blob (see
 * sym_index_pack_impl.h). Each packed table is written in two passes over the same
 * row function: one finds each field's largest value (its width), one writes.
 */
#include "symbolizer/sym_index_pack_impl.h"
#include "symbolizer/sym_bits_impl.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_map64_impl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Ranges per bucket the bucket shift aims at (so 4 to 8 on average): most
 * buckets' starts fit the 16 a lookup compares at once. */
#define RANGES_PER_BUCKET 4

struct pack {
	const sym_index_input *in;
	const sym_ix_range *ranges;
	size_t n;                /* ranges kept */
	uint64_t base;
	sym_map64 file_index;    /* file string offset -> index in files */
	base_vec files;           /* uint32_t string offsets, in index order */
	uint32_t *range_file;    /* file index of each range (looked up once) */
	uint32_t *buckets;
	uint32_t *func_row;      /* the row of each collected function */
	uint32_t *row_func;      /* the collected function of each row */
	uint32_t n_rows;         /* function rows */
};

typedef void (*row_fn)(const struct pack *pk, uint32_t i, uint32_t *v);

static const struct sym_ix_rec gap_rec = {.scope = SYM_IX_NONE};

static uint32_t file_of(const struct pack *pk, uint32_t str)
{
	return sym_map64_lookup(&pk->file_index, str);
}

static uint32_t plus_one(uint32_t ref)
{
	return ref == SYM_IX_NONE ? 0 : ref + 1;
}

static void range_row(const struct pack *pk, uint32_t i, uint32_t *v)
{
	const struct sym_ix_rec *r = i + 1 == pk->n ? &gap_rec : &pk->ranges[i].rec;
	v[SYM_IX_R_SCOPE] = plus_one(r->scope);
	v[SYM_IX_R_FILE] = i + 1 == pk->n ? 0 : pk->range_file[i];
	v[SYM_IX_R_LINE] = r->line;
	v[SYM_IX_R_COLUMN] = r->column;
}

static void scope_row(const struct pack *pk, uint32_t i, uint32_t *v)
{
	const struct sym_ix_scope *s = &BASE_VEC_AT(&pk->in->c->scopes, struct sym_ix_scope, i);
	v[SYM_IX_S_FUNC] = pk->func_row[s->func];
	v[SYM_IX_S_PARENT] = plus_one(s->parent);
	v[SYM_IX_S_CALL_FILE] = file_of(pk, s->call_file);
	v[SYM_IX_S_CALL_LINE] = s->call_line;
	v[SYM_IX_S_CALL_COLUMN] = s->call_column;
}

static void func_row(const struct pack *pk, uint32_t i, uint32_t *v)
{
	const struct sym_ix_func *f =
		&BASE_VEC_AT(&pk->in->c->funcs, struct sym_ix_func, pk->row_func[i]);
	v[SYM_IX_F_NAME] = f->name;
	v[SYM_IX_F_LINKAGE] = f->linkage;
	v[SYM_IX_F_DISPLAY] = f->display;
	v[SYM_IX_F_DECL_FILE] = file_of(pk, f->decl_file);
	v[SYM_IX_F_DECL_LINE] = f->decl_line;
}

static void file_row(const struct pack *pk, uint32_t i, uint32_t *v)
{
	v[SYM_IX_FILE_NAME] = BASE_VEC_AT(&pk->files, uint32_t, i);
}

static void bucket_row(const struct pack *pk, uint32_t i, uint32_t *v)
{
	v[SYM_IX_B_FIRST] = pk->buckets[i];
}

/* Sets t's count and widths from the largest value of each field. */
static void measure(const struct pack *pk, row_fn row, uint32_t count, unsigned fields,
		    struct sym_ix_table *t)
{
	uint32_t max[SYM_IX_MAX_FIELDS] = {0}, v[SYM_IX_MAX_FIELDS];
	for (uint32_t i = 0; i < count; i++) {
		row(pk, i, v);
		for (unsigned f = 0; f < fields; f++)
			if (v[f] > max[f])
				max[f] = v[f];
	}
	t->count = count;
	for (unsigned f = 0; f < fields; f++)
		t->bits[f] = (uint8_t)sym_bits_width(max[f]);
}

/* A row's width: its fields' widths, rounded up to whole bytes (format 7). */
static uint64_t row_bits(const struct sym_ix_table *t)
{
	uint64_t row = 0;
	for (unsigned f = 0; f < SYM_IX_MAX_FIELDS; f++)
		row += t->bits[f];
	return (row + 7) & ~(uint64_t)7;
}

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~(uint64_t)7;
}

/* Places t at *off (its rows and padding) and advances *off. */
static void place(struct sym_ix_table *t, uint64_t *off)
{
	t->off = *off;
	*off = align8(*off + (t->count * row_bits(t) + 7) / 8 + SYM_IX_PAD);
}

static void fill(const struct pack *pk, row_fn row, unsigned fields,
		 const struct sym_ix_table *t, uint8_t *blob)
{
	uint32_t v[SYM_IX_MAX_FIELDS];
	uint64_t row_start = 0;
	for (uint32_t i = 0; i < t->count; i++, row_start += row_bits(t)) {
		row(pk, i, v);
		uint64_t bit = row_start;
		for (unsigned f = 0; f < fields; f++) {
			sym_bits_put(blob + t->off, bit, t->bits[f], v[f]);
			bit += t->bits[f];
		}
	}
}

/* The file index of a file string, given on first sight; UINT32_MAX out of memory. */
static uint32_t add_file(struct pack *pk, uint32_t str)
{
	uint32_t id = sym_map64_lookup(&pk->file_index, str);
	if (id != UINT32_MAX)
		return id;
	uint32_t *slot = base_vec_push(&pk->files);
	id = (uint32_t)(pk->files.len - 1);
	if (!slot || !sym_map64_set(&pk->file_index, str, id))
		return UINT32_MAX;
	*slot = str;
	return id;
}

/* The file table: "" first, then every file a range, scope or function names,
 * then the other files the line tables name (sources without code: headers). */
static int build_files(struct pack *pk)
{
	const sym_collect *c = pk->in->c;
	pk->range_file = malloc((pk->n ? pk->n : 1) * sizeof(uint32_t));
	if (!pk->range_file || add_file(pk, 0) == UINT32_MAX)
		return -1;
	for (size_t i = 0; i < pk->n; i++)
		if ((pk->range_file[i] = add_file(pk, pk->ranges[i].rec.file)) == UINT32_MAX)
			return -1;
	for (size_t i = 0; i < c->scopes.len; i++)
		if (add_file(pk, BASE_VEC_AT(&c->scopes, struct sym_ix_scope, i).call_file) == UINT32_MAX)
			return -1;
	for (size_t i = 0; i < c->funcs.len; i++)
		if (add_file(pk, BASE_VEC_AT(&c->funcs, struct sym_ix_func, i).decl_file) == UINT32_MAX)
			return -1;
	for (size_t i = 0; i < c->unit_files.len; i++)
		if (add_file(pk, BASE_VEC_AT(&c->unit_files, uint32_t, i)) == UINT32_MAX)
			return -1;
	return 0;
}

_Static_assert(sizeof(struct sym_ix_func) == 5 * sizeof(uint32_t),
	       "functions are compared with memcmp: no padding");

/* Orders collected functions by their fields, then by where they were collected. */
static int func_order(const void *a, const void *b, void *ctx)
{
	const base_vec *funcs = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = memcmp(&BASE_VEC_AT(funcs, struct sym_ix_func, i),
		       &BASE_VEC_AT(funcs, struct sym_ix_func, j), sizeof(struct sym_ix_func));
	return c ? c : (i > j) - (i < j);
}

/* Is collected function i equal in every field to function j? */
static bool same_func(const base_vec *funcs, uint32_t i, uint32_t j)
{
	return memcmp(&BASE_VEC_AT(funcs, struct sym_ix_func, i),
		      &BASE_VEC_AT(funcs, struct sym_ix_func, j), sizeof(struct sym_ix_func)) == 0;
}

/*
 * The function rows: collected functions equal in every field (an inline
 * function of a header, collected once in each unit that inlines it) are one
 * row, the first of them, so that a response names the function once. Rows
 * keep the order functions were collected in. At most 8 bytes a function at
 * any time (a kernel has hundreds of thousands). 0, or -1 out of memory.
 */
static int build_funcs(struct pack *pk)
{
	const base_vec *funcs = &pk->in->c->funcs;
	size_t n = funcs->len;
	uint32_t *order = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!order)
		return -1;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), func_order, (void *)funcs);
	pk->func_row = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!pk->func_row) {
		free(order);
		return -1;
	}
	/* First, each function's first equal one (the lowest index of its run)... */
	uint32_t rows = 0;
	for (size_t i = 0; i < n; i++) {
		bool same = i > 0 && same_func(funcs, order[i], order[i - 1]);
		pk->func_row[order[i]] = same ? pk->func_row[order[i - 1]] : order[i];
		rows += !same;
	}
	free(order);
	pk->row_func = malloc((rows ? rows : 1) * sizeof(uint32_t));
	if (!pk->row_func)
		return -1;
	/* ... then, in collection order, a row for each first one. */
	for (size_t i = 0; i < n; i++) {
		uint32_t first = pk->func_row[i];
		if (first == i) {
			pk->row_func[pk->n_rows] = (uint32_t)i;
			pk->func_row[i] = pk->n_rows++;
		} else {
			pk->func_row[i] = pk->func_row[first];
		}
	}
	return 0;
}

/* The first range of each bucket (the last entry is n); 0 or -1 out of memory. */
static int build_buckets(struct pack *pk, uint32_t shift, uint64_t n_buckets)
{
	pk->buckets = malloc((n_buckets + 1) * sizeof(uint32_t));
	if (!pk->buckets)
		return -1;
	size_t j = 0;
	for (uint64_t k = 0; k <= n_buckets; k++) {
		while (j < pk->n && pk->ranges[j].start - pk->base < (k << shift))
			j++;
		pk->buckets[k] = (uint32_t)j;
	}
	return 0;
}

static uint32_t compute_flags(const struct pack *pk)
{
	const sym_index_input *in = pk->in;
	uint32_t flags = in->from_dwarf ? SYM_INDEX_FROM_DWARF : 0;
	if (in->from_pclntab)
		flags |= SYM_INDEX_FROM_PCLNTAB;
	for (size_t i = 0; i + 1 < pk->n; i++) {
		const struct sym_ix_rec *r = &pk->ranges[i].rec;
		if (r->scope != SYM_IX_NONE)
			flags |= SYM_INDEX_HAS_FUNCTIONS;
		if (r->file)
			flags |= SYM_INDEX_HAS_FILENAMES;
		if (r->line)
			flags |= SYM_INDEX_HAS_LINE_NUMBERS;
	}
	for (size_t i = 0; i < in->c->scopes.len; i++)
		if (BASE_VEC_AT(&in->c->scopes, struct sym_ix_scope, i).parent != SYM_IX_NONE)
			flags |= SYM_INDEX_HAS_INLINE_FRAMES;
	return flags;
}

static void fill_header(const struct pack *pk, struct sym_ix_header *h)
{
	const sym_index_input *in = pk->in;
	memcpy(h->magic, SYM_IX_MAGIC, 8);
	h->version = SYM_IX_VERSION;
	h->header_size = sizeof(*h);
	h->base = pk->base;
	h->flags = compute_flags(pk);
	h->strtab_size = (uint32_t)in->c->strs.size;
	h->build_id_len = in->elf->build_id.len;
	memcpy(h->build_id, in->elf->build_id.bytes, in->elf->build_id.len);
	h->n_loads = in->elf->n_loads;
	for (uint32_t i = 0; i < in->elf->n_loads && i < SYM_IX_MAX_LOADS; i++) {
		const sym_elf_load *l = &in->elf->loads[i];
		h->loads[i] = (struct sym_ix_load){l->vaddr, l->offset, l->filesz, l->memsz, l->flags, 0};
	}
	h->elf_type = in->elf_type;
	h->n_sections = in->n_sections;
	h->kernel_stext = in->kernel_stext;
	h->kernel_text = in->kernel_text;
}

static sym_errc layout(struct pack *pk, void **blob, size_t *size, sym_error *err)
{
	const sym_collect *c = pk->in->c;
	uint64_t span = pk->n ? pk->ranges[pk->n - 1].start - pk->base : 0;
	uint32_t shift = 4;
	while (shift < SYM_IX_MAX_SHIFT && (span >> shift) > pk->n / RANGES_PER_BUCKET)
		shift++;
	uint64_t n_buckets = (span >> shift) + 1;
	if (build_files(pk) || build_funcs(pk) || build_buckets(pk, shift, n_buckets))
		return sym_error_set(err, SYM_E_NOMEM, "out of memory packing the index");

	struct sym_ix_header h = {0};
	fill_header(pk, &h);
	h.bucket_shift = shift;
	measure(pk, range_row, (uint32_t)pk->n, SYM_IX_R_FIELDS, &h.ranges);
	measure(pk, scope_row, (uint32_t)c->scopes.len, SYM_IX_S_FIELDS, &h.scopes);
	measure(pk, func_row, pk->n_rows, SYM_IX_F_FIELDS, &h.funcs);
	measure(pk, file_row, (uint32_t)pk->files.len, SYM_IX_FILE_FIELDS, &h.files);
	measure(pk, bucket_row, (uint32_t)n_buckets + 1, SYM_IX_B_FIELDS, &h.buckets);
	h.buckets.bits[SYM_IX_B_FIRST] = SYM_IX_BUCKET_BITS;   /* a uint32 array */

	uint64_t off = align8(sizeof(h));
	h.off_starts = off;
	off = align8(off + pk->n * sizeof(uint16_t) + SYM_IX_STARTS_PAD);
	place(&h.ranges, &off);
	place(&h.scopes, &off);
	place(&h.funcs, &off);
	place(&h.files, &off);
	place(&h.buckets, &off);
	h.off_sections = off;
	off += (uint64_t)h.n_sections * sizeof(struct sym_ix_section);
	h.off_strtab = off;
	off = align8(off + c->strs.size);
	h.blob_size = off;

	uint8_t *b = calloc(1, off);
	if (!b)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory for a %llu-byte index",
				     (unsigned long long)off);
	memcpy(b, &h, sizeof(h));
	uint16_t *starts = (uint16_t *)(b + h.off_starts);
	for (size_t i = 0; i < pk->n; i++)
		starts[i] = (uint16_t)(pk->ranges[i].start - pk->base);
	fill(pk, range_row, SYM_IX_R_FIELDS, &h.ranges, b);
	fill(pk, scope_row, SYM_IX_S_FIELDS, &h.scopes, b);
	fill(pk, func_row, SYM_IX_F_FIELDS, &h.funcs, b);
	fill(pk, file_row, SYM_IX_FILE_FIELDS, &h.files, b);
	fill(pk, bucket_row, SYM_IX_B_FIELDS, &h.buckets, b);
	if (h.n_sections)
		memcpy(b + h.off_sections, pk->in->sections,
		       h.n_sections * sizeof(struct sym_ix_section));
	memcpy(b + h.off_strtab, c->strs.bytes, c->strs.size);
	*blob = b;
	*size = (size_t)off;
	return SYM_OK;
}

sym_errc sym_index_pack(const sym_index_input *in, const sym_ix_range *ranges, size_t n,
			void **blob, size_t *size, sym_error *err)
{
	struct pack pk = {.in = in, .ranges = ranges, .n = n, .base = n ? ranges[0].start : 0};
	/* Ranges beyond 4 GiB from the first are dropped (starts are 32-bit offsets). */
	while (pk.n > 1 && ranges[pk.n - 1].start - pk.base > UINT32_MAX)
		pk.n--;
	sym_map64_init(&pk.file_index);
	base_vec_init(&pk.files, sizeof(uint32_t), SYM_IX_NONE);
	sym_errc rc = layout(&pk, blob, size, err);
	sym_map64_deinit(&pk.file_index);
	base_vec_deinit(&pk.files);
	free(pk.buckets);
	free(pk.range_file);
	free(pk.func_row);
	free(pk.row_func);
	return rc;
}
