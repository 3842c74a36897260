// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_load: validates a layout blob (sym_layout_format_impl.h) as untrusted
 * input and answers queries on it: types by name, their members, field paths.
 *
 * Every count, offset and string is checked once at load: type member ranges
 * are consecutive, children come after their parent inside their type's range,
 * references name existing types, strings lie inside the NUL-terminated table.
 * Queries then index without further checks.
 */
#include "symbolizer/sym_layout.h"
#include "symbolizer/sym_layout_format_impl.h"
#include "symbolizer/sym_layout_load_impl.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(sym_layout_header) == 32, "header size");
_Static_assert(sizeof(sym_layout_type_rec) == 40, "type record size");
_Static_assert(sizeof(sym_layout_member_rec) == 56, "member record size");
_Static_assert(sizeof(sym_layout_alias_rec) == 12, "alias record size");


static sym_errc bad(sym_error *err, const char *what)
{
	return sym_error_set(err, SYM_E_BAD_INDEX, "layout blob: %s", what);
}

static sym_errc check_members(const sym_layout *l, const sym_layout_type_rec *t,
			      sym_error *err)
{
	const sym_layout_header *h = l->h;
	for (uint32_t i = 0; i < t->n_members; i++) {
		const sym_layout_member_rec *m = &l->members[t->first_member + i];
		if (m->name >= h->strtab_size || m->type_name >= h->strtab_size)
			return bad(err, "member string out of range");
		if ((uint64_t)m->first_dim + m->n_dims > h->n_dims)
			return bad(err, "array dimensions out of range");
		if (m->type_ref != SYM_LAYOUT_NONE && m->type_ref >= h->n_types)
			return bad(err, "member type reference out of range");
		if (m->kind > SYM_LAYOUT_BASE || m->bit_size > 1024 || m->bit_offset > 1024)
			return bad(err, "bad member record");
		if (m->n_children && (m->first_child <= i ||
				      (uint64_t)m->first_child + m->n_children > t->n_members))
			return bad(err, "member children out of range");
	}
	return SYM_OK;
}

static sym_errc check(const sym_layout *l, size_t size, sym_error *err)
{
	const sym_layout_header *h = l->h;
	if (h->strtab_size == 0 || l->strs[h->strtab_size - 1] != '\0')
		return bad(err, "string table not terminated");
	(void)size;
	uint64_t next = 0;
	for (uint32_t i = 0; i < h->n_types; i++) {
		const sym_layout_type_rec *t = &l->types[i];
		if (t->name >= h->strtab_size || t->cu >= h->strtab_size)
			return bad(err, "type string out of range");
		if (t->kind < SYM_LAYOUT_STRUCT || t->kind > SYM_LAYOUT_CLASS)
			return bad(err, "bad type kind");
		if (t->first_member != next || next + t->n_members > h->n_members ||
		    t->n_top > t->n_members)
			return bad(err, "type members out of range");
		next += t->n_members;
		sym_errc rc = check_members(l, t, err);
		if (rc)
			return rc;
	}
	if (next != h->n_members)
		return bad(err, "members not owned by a type");
	for (uint32_t i = 0; i < h->n_types; i++)
		if (l->by_name[i] >= h->n_types)
			return bad(err, "name index out of range");
	for (uint32_t i = 0; i < h->n_aliases; i++) {
		const sym_layout_alias_rec *a = &l->aliases[i];
		if (a->name >= h->strtab_size || a->target >= h->strtab_size ||
		    (a->type != SYM_LAYOUT_NONE && a->type >= h->n_types))
			return bad(err, "typedef record out of range");
	}
	return SYM_OK;
}

sym_errc sym_layout_load(const void *blob, size_t size, sym_layout **out, sym_error *err)
{
	*out = NULL;
	sym_layout_header h;
	if (!blob || size < sizeof(h))
		return bad(err, "truncated header");
	memcpy(&h, blob, sizeof(h));
	if (memcmp(h.magic, SYM_LAYOUT_MAGIC, sizeof(h.magic)) != 0)
		return bad(err, "bad magic");
	if (h.version != SYM_LAYOUT_VERSION)
		return sym_error_set(err, SYM_E_BAD_INDEX, "layout blob: version %u, want %u",
				     h.version, SYM_LAYOUT_VERSION);
	uint64_t want = sizeof(h) + (uint64_t)h.n_types * sizeof(sym_layout_type_rec) +
			(uint64_t)h.n_members * sizeof(sym_layout_member_rec) +
			(uint64_t)h.n_dims * sizeof(uint64_t) + (uint64_t)h.n_types * 4 +
			(uint64_t)h.n_aliases * sizeof(sym_layout_alias_rec) + h.strtab_size;
	if (want != size)
		return bad(err, "size does not match the counts");
	sym_layout *l = calloc(1, sizeof(*l));
	if (!l)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	const uint8_t *p = blob;
	if ((uintptr_t)p % 8) {
		l->owned = malloc(size);
		if (!l->owned) {
			free(l);
			return sym_error_set(err, SYM_E_NOMEM, "out of memory");
		}
		memcpy(l->owned, blob, size);
		p = l->owned;
	}
	l->h = (const void *)p;
	p += sizeof(h);
	l->types = (const void *)p;
	p += (size_t)h.n_types * sizeof(sym_layout_type_rec);
	l->members = (const void *)p;
	p += (size_t)h.n_members * sizeof(sym_layout_member_rec);
	l->dims = (const void *)p;
	p += (size_t)h.n_dims * sizeof(uint64_t);
	l->by_name = (const void *)p;
	p += (size_t)h.n_types * 4;
	l->aliases = (const void *)p;
	p += (size_t)h.n_aliases * sizeof(sym_layout_alias_rec);
	l->strs = (const char *)p;
	sym_errc rc = check(l, size, err);
	if (rc) {
		sym_layout_destroy(l);
		return rc;
	}
	*out = l;
	return SYM_OK;
}

void sym_layout_destroy(sym_layout *l)
{
	if (!l)
		return;
	free(l->owned);
	free(l);
}

uint32_t sym_layout_type_count(const sym_layout *l)
{
	return l->h->n_types;
}

bool sym_layout_type(const sym_layout *l, uint32_t t, sym_layout_type_info *out)
{
	if (t >= l->h->n_types)
		return false;
	const sym_layout_type_rec *r = &l->types[t];
	*out = (sym_layout_type_info){.name = l->strs + r->name, .cu = l->strs + r->cu,
				      .kind = (sym_layout_kind)r->kind, .flags = r->flags,
				      .size = r->size, .align = r->align,
				      .first = r->first_member, .n = r->n_top};
	return true;
}

/* The type owning a member: ranges are consecutive, so a binary search. */
const sym_layout_type_rec *sym_layout_type_of(const sym_layout *l, uint32_t m)
{
	uint32_t lo = 0, hi = l->h->n_types;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const sym_layout_type_rec *t = &l->types[mid];
		if (m < t->first_member)
			hi = mid;
		else if (m >= t->first_member + t->n_members)
			lo = mid + 1;
		else
			return t;
	}
	return NULL;
}

bool sym_layout_member(const sym_layout *l, uint32_t id, sym_layout_member_info *out)
{
	const sym_layout_type_rec *t = id < l->h->n_members ? sym_layout_type_of(l, id) : NULL;
	if (!t)
		return false;
	const sym_layout_member_rec *m = &l->members[id];
	*out = (sym_layout_member_info){
		.name = l->strs + m->name, .type_name = l->strs + m->type_name,
		.kind = (sym_layout_member_kind)m->kind, .flags = m->flags,
		.offset = m->offset, .size = m->size, .bit_offset = m->bit_offset,
		.bit_size = m->bit_size, .n_dims = m->n_dims, .dims = l->dims + m->first_dim,
		.first = t->first_member + m->first_child, .n = m->n_children,
		.type_ref = m->type_ref};
	return true;
}
