// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_build: the layout builder's orchestration and blob writer (API
 * in sym_layout.h, format in sym_layout_format_impl.h).
 *
 * probe -> inflate compressed sections under a cap, relocate an ET_REL file
 * (sym_reloc) -> open with libelf/libdw
 * (and the dwz file from the caller's resolver, as the symbol index does) ->
 * walk the main file's units, then the dwz file's -> sort names -> write.
 * One thread: a Dwarf * stays where it was opened.
 */
#include "symbolizer/sym_alt_impl.h"
#include "symbolizer/sym_layout_impl.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "symbolizer/sym_reloc_impl.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_INFLATE ((uint64_t)2 << 30)

/* An ELF image opened for libdw; owned holds an inflated copy. */
struct opened {
	void *owned;
	Elf *elf;
	Dwarf *dw;
};

static void opened_close(struct opened *o)
{
	if (o->dw)
		dwarf_end(o->dw);
	if (o->elf)
		elf_end(o->elf);
	free(o->owned);
	memset(o, 0, sizeof(*o));
}

static sym_errc opened_open(struct opened *o, const void *data, size_t size, uint64_t cap,
			    sym_error *err)
{
	size_t isize = 0;
	memset(o, 0, sizeof(*o));
	sym_errc rc = sym_reloc_prepare(data, size, cap, &o->owned, &isize, err);
	if (rc)
		return rc;
	if (o->owned) {
		data = o->owned;
		size = isize;
	}
	rc = sym_elf_begin(data, size, &o->elf, err);
	if (rc)
		return rc;
	o->dw = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL);
	if (!o->dw)
		return sym_error_set(err, SYM_E_BAD_DWARF, "libdw: %s", dwarf_errmsg(-1));
	return SYM_OK;
}

static sym_errc open_alt(const sym_elf_info *info, const sym_layout_options *o, uint64_t cap,
			 struct opened *alt, sym_error *err)
{
	const void *data;
	size_t size;
	sym_errc rc = sym_alt_find(info, o ? o->alt_resolver : NULL, o ? o->alt_ctx : NULL, &data,
				   &size, err);
	if (rc)
		return rc;
	rc = opened_open(alt, data, size, cap, err);
	if (rc)
		sym_alt_error_prefix(info, err);
	return rc;
}

static void builder_init(sym_layout_builder *b, sym_error *err)
{
	memset(b, 0, sizeof(*b));
	base_vec_init(&b->types, sizeof(sym_layout_type_rec), LAYOUT_MAX_TYPES);
	base_vec_init(&b->members, sizeof(sym_layout_member_rec), LAYOUT_MAX_MEMBERS);
	base_vec_init(&b->dims, sizeof(uint64_t), LAYOUT_MAX_DIMS);
	base_vec_init(&b->aliases, sizeof(sym_layout_alias_rec), LAYOUT_MAX_ALIASES);
	sym_layout_u64_map_init(&b->dedup);
	sym_layout_u64_map_init(&b->seen_alias);
	sym_layout_u64_map_init(&b->cache);
	sym_layout_u64_map_init(&b->scopes);
	b->err = err;
	if (sym_strtab_init(&b->strs) || sym_strtab_add_cstr(&b->strs, "") != 0)
		sym_layout_fail(b, SYM_E_NOMEM, "out of memory");
}

static void builder_deinit(sym_layout_builder *b)
{
	sym_strtab_deinit(&b->strs);
	base_vec_deinit(&b->types);
	base_vec_deinit(&b->members);
	base_vec_deinit(&b->dims);
	base_vec_deinit(&b->aliases);
	sym_layout_u64_map_deinit(&b->dedup);
	sym_layout_u64_map_deinit(&b->seen_alias);
	sym_layout_u64_map_deinit(&b->cache);
	sym_layout_u64_map_deinit(&b->scopes);
}

static int by_type_name(const void *x, const void *y, void *ctx)
{
	const sym_layout_builder *b = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const sym_layout_type_rec *t = b->types.data;
	int c = strcmp(sym_strtab_get(&b->strs, t[i].name), sym_strtab_get(&b->strs, t[j].name));
	return c ? c : (i > j) - (i < j);
}

static int by_alias_name(const void *x, const void *y, void *ctx)
{
	const sym_layout_builder *b = ctx;
	const sym_layout_alias_rec *a = x, *c = y;
	int r = strcmp(sym_strtab_get(&b->strs, a->name), sym_strtab_get(&b->strs, c->name));
	return r ? r : (a->type > c->type) - (a->type < c->type);
}

static void put(uint8_t **p, const void *src, size_t n)
{
	if (n)
		memcpy(*p, src, n);
	*p += n;
}

static sym_errc write_blob(sym_layout_builder *b, void **blob, size_t *blob_size, sym_error *err)
{
	size_t nt = b->types.len;
	uint32_t *order = malloc((nt ? nt : 1) * sizeof(uint32_t));
	if (!order)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	for (size_t i = 0; i < nt; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nt, sizeof(uint32_t), by_type_name, b);
	if (b->aliases.len)
		qsort_r(b->aliases.data, b->aliases.len, sizeof(sym_layout_alias_rec),
			by_alias_name, b);
	sym_layout_header h = {.version = SYM_LAYOUT_VERSION, .n_types = (uint32_t)nt,
			       .n_members = (uint32_t)b->members.len,
			       .n_dims = (uint32_t)b->dims.len,
			       .n_aliases = (uint32_t)b->aliases.len,
			       .strtab_size = (uint32_t)b->strs.size};
	memcpy(h.magic, SYM_LAYOUT_MAGIC, sizeof(h.magic));
	size_t size = sizeof(h) + nt * sizeof(sym_layout_type_rec) +
		      b->members.len * sizeof(sym_layout_member_rec) +
		      b->dims.len * sizeof(uint64_t) + nt * sizeof(uint32_t) +
		      b->aliases.len * sizeof(sym_layout_alias_rec) + b->strs.size;
	uint8_t *out = malloc(size), *p = out;
	if (!out) {
		free(order);
		return sym_error_set(err, SYM_E_NOMEM, "out of memory writing the layout blob");
	}
	put(&p, &h, sizeof(h));
	put(&p, b->types.data, nt * sizeof(sym_layout_type_rec));
	put(&p, b->members.data, b->members.len * sizeof(sym_layout_member_rec));
	put(&p, b->dims.data, b->dims.len * sizeof(uint64_t));
	put(&p, order, nt * sizeof(uint32_t));
	put(&p, b->aliases.data, b->aliases.len * sizeof(sym_layout_alias_rec));
	put(&p, b->strs.bytes, b->strs.size);
	free(order);
	*blob = out;
	*blob_size = size;
	return SYM_OK;
}

sym_errc sym_layout_build(const void *elf_data, size_t elf_size, const sym_layout_options *opts,
			  void **blob, size_t *blob_size, sym_error *err)
{
	*blob = NULL;
	*blob_size = 0;
	sym_elf_info info;
	sym_errc rc = sym_elf_probe(elf_data, elf_size, &info, err);
	if (rc)
		return rc;
	if (!info.has_debug_info)
		return sym_error_set(err, SYM_E_NO_SYMBOLS, "layout: no DWARF debug info");
	uint64_t cap = opts && opts->max_decompressed_bytes ? opts->max_decompressed_bytes
							    : DEFAULT_MAX_INFLATE;
	struct opened main_f, alt_f;
	memset(&alt_f, 0, sizeof(alt_f));
	rc = opened_open(&main_f, elf_data, elf_size, cap, err);
	if (!rc && info.has_alt) {
		rc = open_alt(&info, opts, cap, &alt_f, err);
		if (!rc)
			dwarf_setalt(main_f.dw, alt_f.dw);
	}
	if (rc) {
		opened_close(&main_f);
		opened_close(&alt_f);
		return rc;
	}
	sym_layout_builder b;
	builder_init(&b, err);
	GElf_Ehdr eh;
	b.little_endian = !gelf_getehdr(main_f.elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2MSB;
	b.alt = alt_f.dw;
	for (int pass = 0; pass < 2; pass++) {
		if (!b.rc)
			sym_layout_walk(&b, main_f.dw, "", pass);
		if (!b.rc && alt_f.dw)
			sym_layout_walk(&b, alt_f.dw, info.alt_path, pass);
	}
	rc = b.rc ? b.rc : write_blob(&b, blob, blob_size, err);
	builder_deinit(&b);
	opened_close(&main_f);
	opened_close(&alt_f);
	return rc;
}
