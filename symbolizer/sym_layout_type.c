// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_type: one struct, union or class DIE -> a type record and its
 * members (sym_layout_impl.h), deduplicated by a hash of the whole layout, so
 * the same definition in 2,000 units is stored once.
 *
 * Members are gathered in a scratch list per type: the type's own members
 * first, then, for each anonymous struct or union among them, its members
 * (after it, contiguous), recursively. Named struct types embedded by value
 * are interned first (bounded depth; a loop leaves the reference unknown).
 */
#include "symbolizer/sym_layout_impl.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "base/base_hash.h"

/* The scratch of one type under construction. */
struct scratch {
	base_vec members;   /* sym_layout_member_rec */
	base_vec dims;      /* uint64_t, first_dim relative to this list */
	bool truncated;
};

void sym_layout_fail(sym_layout_builder *b, sym_errc code, const char *what)
{
	if (!b->rc)
		b->rc = sym_error_set(b->err, code, "layout: %s", what);
}

uint64_t sym_layout_die_key(const sym_layout_builder *b, Dwarf_Die *die)
{
	uint64_t k = dwarf_dieoffset(die);
	if (b->alt && dwarf_cu_getdwarf(die->cu) == b->alt)
		k |= (uint64_t)1 << 62;
	return k;
}

static uint32_t intern_str(sym_layout_builder *b, const char *s)
{
	uint32_t off = sym_strtab_add_cstr(&b->strs, s ? s : "");
	if (off == SYM_STR_NONE) {
		sym_layout_fail(b, SYM_E_TOO_LARGE, "string table full or out of memory");
		return 0;
	}
	return off;
}

/* DW_AT_data_member_location: a constant, or DW_OP_plus_uconst N; else false. */
static bool member_location(Dwarf_Die *m, uint64_t *out)
{
	Dwarf_Attribute a;
	*out = 0;
	if (!dwarf_attr_integrate(m, DW_AT_data_member_location, &a))
		return true;   /* union members, and bitfields with data_bit_offset */
	switch (dwarf_whatform(&a)) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4: case DW_FORM_data8:
	case DW_FORM_udata: case DW_FORM_sdata: case DW_FORM_implicit_const: {
		Dwarf_Word v;
		return dwarf_formudata(&a, &v) == 0 && (*out = v) < LAYOUT_MAX_SIZE;
	}
	default:
		break;
	}
	Dwarf_Op *ops;
	size_t n;
	if (dwarf_getlocation(&a, &ops, &n) != 0 || n != 1)
		return false;
	if (ops[0].atom != DW_OP_plus_uconst && ops[0].atom != DW_OP_constu)
		return false;
	*out = ops[0].number;
	return *out < LAYOUT_MAX_SIZE;
}

static bool attr_u64(Dwarf_Die *d, unsigned name, uint64_t *out)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	if (!dwarf_attr_integrate(d, name, &a) || dwarf_formudata(&a, &v) != 0)
		return false;
	*out = v;
	return true;
}

/* Bitfield placement, as pahole shows it: storage-unit offset + bit within. */
static void bitfield(sym_layout_builder *b, Dwarf_Die *m, sym_layout_member_rec *r, uint64_t loc)
{
	uint64_t bits, dbo, bo;
	if (!attr_u64(m, DW_AT_bit_size, &bits) || bits == 0 || bits > 1024)
		return;
	uint64_t unit = r->size ? r->size : 1;
	if (attr_u64(m, DW_AT_data_bit_offset, &dbo)) {
		/* DWARF 4+: bits from the start of the struct */
	} else if (attr_u64(m, DW_AT_bit_offset, &bo)) {
		uint64_t ub;
		if (!attr_u64(m, DW_AT_byte_size, &ub))
			ub = unit;
		if (b->little_endian) {
			if (bo + bits > ub * 8 || ub > 64)
				return;
			dbo = loc * 8 + ub * 8 - bo - bits;
		} else {
			dbo = loc * 8 + bo;
		}
	} else {
		dbo = loc * 8;
	}
	if (dbo / 8 >= LAYOUT_MAX_SIZE)
		return;
	uint64_t off = dbo / (unit * 8) * unit;
	if (dbo - off * 8 + bits > unit * 8)
		off = dbo / 8;
	r->offset = off;
	r->bit_offset = (uint32_t)(dbo - off * 8);
	r->bit_size = (uint32_t)bits;
	r->flags &= ~SYM_LAYOUT_F_UNKNOWN_OFFSET;
}

static void add_dims(sym_layout_builder *b, struct scratch *s, Dwarf_Die *arr,
		     sym_layout_member_rec *r)
{
	Dwarf_Die sr;
	r->first_dim = (uint32_t)s->dims.len;
	if (dwarf_child(arr, &sr) != 0)
		return;
	do {
		if (dwarf_tag(&sr) != DW_TAG_subrange_type || r->n_dims >= 16)
			continue;
		uint64_t *d = base_vec_push(&s->dims);
		if (!d) {
			sym_layout_fail(b, SYM_E_TOO_LARGE, "too many array dimensions");
			return;
		}
		*d = sym_layout_subrange_count(&sr);
		r->n_dims++;
	} while (dwarf_siblingof(&sr, &sr) == 0);
}

/* Fills one member record from a DW_TAG_member or DW_TAG_inheritance DIE. */
static void fill_member(sym_layout_builder *b, struct scratch *s, Dwarf_Die *m,
			sym_layout_member_rec *r, Dwarf_Die *anon, bool *is_anon, int depth)
{
	char name[LAYOUT_NAME_MAX];
	Dwarf_Die type, bare;
	bool has_type = sym_layout_attr_type(m, &type);
	memset(r, 0, sizeof(*r));
	r->type_ref = SYM_LAYOUT_NONE;
	r->kind = dwarf_tag(m) == DW_TAG_inheritance ? SYM_LAYOUT_BASE : SYM_LAYOUT_FIELD;
	*is_anon = false;
	uint64_t loc;
	if (!member_location(m, &loc))
		r->flags |= SYM_LAYOUT_F_UNKNOWN_OFFSET;
	r->offset = loc;
	uint64_t virt;
	if (attr_u64(m, DW_AT_virtuality, &virt) && virt)
		r->flags |= SYM_LAYOUT_F_VIRTUAL;
	if (!has_type || !sym_layout_type_size(&type, &r->size, 0))
		r->flags |= SYM_LAYOUT_F_UNKNOWN_SIZE;
	Dwarf_Die *shown = has_type ? &type : NULL;
	if (has_type && dwarf_tag(&type) == DW_TAG_array_type) {
		add_dims(b, s, &type, r);
		if (sym_layout_attr_type(&type, &bare))
			shown = &bare;
	}
	sym_layout_type_name(shown, name, sizeof(name));
	r->type_name = intern_str(b, name);
	const char *mn = dwarf_diename(m);
	if (r->kind == SYM_LAYOUT_BASE)
		mn = NULL;
	r->name = intern_str(b, mn ? mn : "");
	bitfield(b, m, r, loc);
	if (!has_type || r->n_dims)
		return;
	const char *td = NULL;
	if (!sym_layout_strip(&type, &bare, &td))
		return;
	int tag = dwarf_tag(&bare);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return;
	if (!dwarf_diename(&bare) && !td && dwarf_tag(&type) == tag) {
		*anon = bare;   /* anonymous struct/union: its members nest here */
		*is_anon = true;
		r->flags |= tag == DW_TAG_union_type ? SYM_LAYOUT_F_ANON_UNION
						     : SYM_LAYOUT_F_ANON_STRUCT;
		return;
	}
	r->type_ref = sym_layout_intern(b, &bare, td, depth + 1);
}

static bool is_member(Dwarf_Die *c)
{
	int tag = dwarf_tag(c);
	if (tag == DW_TAG_inheritance)
		return true;
	if (tag != DW_TAG_member)
		return false;
	/* a static data member (DWARF 4) is a declaration or external */
	return !dwarf_hasattr(c, DW_AT_external) && !dwarf_hasattr(c, DW_AT_declaration);
}

/* Appends the members of agg to s; [*first, *first + *count) are its own. */
static void add_members(sym_layout_builder *b, struct scratch *s, Dwarf_Die *agg, uint32_t *first,
			uint32_t *count, int depth)
{
	base_vec anons;
	base_vec_init(&anons, sizeof(Dwarf_Die), LAYOUT_MAX_TYPE_MEMBERS);
	*first = (uint32_t)s->members.len;
	*count = 0;
	Dwarf_Die c;
	if (depth <= LAYOUT_MAX_DEPTH && dwarf_child(agg, &c) == 0) {
		do {
			if (!is_member(&c))
				continue;
			sym_layout_member_rec *r = base_vec_push(&s->members);
			Dwarf_Die *a = base_vec_push(&anons);
			if (!r || !a) {
				s->truncated = true;
				break;
			}
			bool is_anon;
			sym_layout_member_rec tmp;
			fill_member(b, s, &c, &tmp, a, &is_anon, depth);
			/* fill_member may have grown s->members through no path: r is stable */
			*r = tmp;
			if (!is_anon)
				memset(a, 0, sizeof(*a));
			(*count)++;
		} while (dwarf_siblingof(&c, &c) == 0 && !b->rc);
	}
	for (uint32_t i = 0; i < *count && !b->rc; i++) {
		sym_layout_member_rec *r = &BASE_VEC_AT(&s->members, sym_layout_member_rec, *first + i);
		if (!(r->flags & (SYM_LAYOUT_F_ANON_STRUCT | SYM_LAYOUT_F_ANON_UNION)))
			continue;
		Dwarf_Die a = BASE_VEC_AT(&anons, Dwarf_Die, i);
		uint32_t f, n;
		add_members(b, s, &a, &f, &n, depth + 1);
		r = &BASE_VEC_AT(&s->members, sym_layout_member_rec, *first + i);
		r->first_child = f;
		r->n_children = n;
	}
	base_vec_deinit(&anons);
}

static uint64_t sym_layout_hash(const sym_layout_type_rec *t, const struct scratch *s)
{
	uint64_t h = base_hash_bytes(t, offsetof(sym_layout_type_rec, first_member));
	h ^= base_hash_bytes(s->members.data, s->members.len * sizeof(sym_layout_member_rec)) * 31;
	h ^= base_hash_bytes(s->dims.data, s->dims.len * sizeof(uint64_t)) * 131;
	return h ^ (uint64_t)t->n_top << 40 ^ s->members.len;
}

/* Stores the type unless an identical one is there; returns its index. */
static uint32_t commit(sym_layout_builder *b, sym_layout_type_rec *t, struct scratch *s)
{
	t->cu = 0;
	uint64_t h = sym_layout_hash(t, s);
	t->cu = b->cu_name;
	bool inserted;
	uint32_t *slot = sym_layout_u64_map_put(&b->dedup, &h, &inserted);
	if (!slot) {
		sym_layout_fail(b, SYM_E_NOMEM, "out of memory");
		return SYM_LAYOUT_NONE;
	}
	if (!inserted)
		return *slot;
	if (base_vec_reserve(&b->members, s->members.len) ||
	    base_vec_reserve(&b->dims, s->dims.len)) {
		sym_layout_fail(b, SYM_E_TOO_LARGE, "too many members");
		sym_layout_u64_map_remove(&b->dedup, &h);
		return SYM_LAYOUT_NONE;
	}
	sym_layout_type_rec *out = base_vec_push(&b->types);
	if (!out) {
		sym_layout_fail(b, SYM_E_TOO_LARGE, "too many types");
		sym_layout_u64_map_remove(&b->dedup, &h);
		return SYM_LAYOUT_NONE;
	}
	t->first_member = (uint32_t)b->members.len;
	t->n_members = (uint32_t)s->members.len;
	for (size_t i = 0; i < s->members.len; i++) {
		sym_layout_member_rec *m = base_vec_push(&b->members);
		*m = BASE_VEC_AT(&s->members, sym_layout_member_rec, i);
		m->first_dim += (uint32_t)b->dims.len;
	}
	for (size_t i = 0; i < s->dims.len; i++)
		*(uint64_t *)base_vec_push(&b->dims) = BASE_VEC_AT(&s->dims, uint64_t, i);
	*out = *t;
	*slot = (uint32_t)(b->types.len - 1);
	return *slot;
}

static void type_header(sym_layout_builder *b, Dwarf_Die *die, const char *name,
			sym_layout_type_rec *t)
{
	char full[LAYOUT_NAME_MAX];
	uint64_t key = sym_layout_die_key(b, die);
	const uint32_t *scope = sym_layout_u64_map_get(&b->scopes, &key);
	const char *n = dwarf_diename(die);
	memset(t, 0, sizeof(*t));
	if (!n) {
		n = name ? name : "";
		t->flags |= SYM_LAYOUT_F_TYPEDEF_NAME;
	}
	snprintf(full, sizeof(full), "%s%s", scope ? sym_strtab_get(&b->strs, *scope) : "", n);
	t->name = intern_str(b, full);
	int tag = dwarf_tag(die);
	t->kind = tag == DW_TAG_union_type ? SYM_LAYOUT_UNION
		  : tag == DW_TAG_class_type ? SYM_LAYOUT_CLASS : SYM_LAYOUT_STRUCT;
	uint64_t v;
	if (!attr_u64(die, DW_AT_byte_size, &t->size) || t->size > LAYOUT_MAX_SIZE) {
		t->size = 0;
		t->flags |= SYM_LAYOUT_F_UNKNOWN_SIZE;
	}
	if (attr_u64(die, DW_AT_alignment, &v) && v <= ((uint64_t)1 << 31))
		t->align = (uint32_t)v;
}

uint32_t sym_layout_intern(sym_layout_builder *b, Dwarf_Die *die, const char *name, int depth)
{
	if (b->rc || depth > LAYOUT_MAX_DEPTH || dwarf_hasattr(die, DW_AT_declaration))
		return SYM_LAYOUT_NONE;
	uint64_t key = sym_layout_die_key(b, die);
	uint32_t *c = sym_layout_u64_map_get(&b->cache, &key);
	if (c)
		return *c == LAYOUT_IN_PROGRESS ? SYM_LAYOUT_NONE : *c;
	if (sym_layout_u64_map_size(&b->cache) >= LAYOUT_MAX_CACHE)
		sym_layout_u64_map_clear(&b->cache);
	c = sym_layout_u64_map_put(&b->cache, &key, NULL);
	if (!c) {
		sym_layout_fail(b, SYM_E_NOMEM, "out of memory");
		return SYM_LAYOUT_NONE;
	}
	*c = LAYOUT_IN_PROGRESS;
	sym_layout_type_rec t;
	type_header(b, die, name, &t);
	struct scratch s;
	base_vec_init(&s.members, sizeof(sym_layout_member_rec), LAYOUT_MAX_TYPE_MEMBERS);
	base_vec_init(&s.dims, sizeof(uint64_t), LAYOUT_MAX_TYPE_MEMBERS);
	s.truncated = false;
	uint32_t first;
	add_members(b, &s, die, &first, &t.n_top, depth);
	if (s.truncated)
		t.flags |= SYM_LAYOUT_F_TRUNCATED;
	uint32_t idx = b->rc ? SYM_LAYOUT_NONE : commit(b, &t, &s);
	base_vec_deinit(&s.members);
	base_vec_deinit(&s.dims);
	c = sym_layout_u64_map_put(&b->cache, &key, NULL);
	if (c)
		*c = idx;
	return idx;
}
