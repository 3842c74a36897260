// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_query: finding types by name and resolving field paths in a
 * loaded layout blob (API in sym_layout.h; the blob was validated at load, so
 * every index used here is in range).
 */
#include "symbolizer/sym_layout.h"
#include "symbolizer/sym_layout_format_impl.h"
#include "symbolizer/sym_layout_load_impl.h"

#include <stdio.h>
#include <string.h>

#define PATH_MAX_DEPTH 64
/* Members one path step may visit: bases of bases of a hostile blob branch. */
#define SEARCH_BUDGET 16384

/* First by_name slot whose name is >= name. */
static uint32_t lower_bound(const sym_layout *l, const char *name)
{
	uint32_t lo = 0, hi = l->h->n_types;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strcmp(l->strs + l->types[l->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t add_unique(uint32_t *out, size_t n, size_t max, uint32_t t)
{
	for (size_t i = 0; i < n && i < max; i++)
		if (out[i] == t)
			return n;
	if (n < max)
		out[n] = t;
	return n + 1;
}

static size_t find_exact(const sym_layout *l, const char *name, int kind, uint32_t *out,
			 size_t n, size_t max)
{
	for (uint32_t i = lower_bound(l, name); i < l->h->n_types; i++) {
		const sym_layout_type_rec *t = &l->types[l->by_name[i]];
		if (strcmp(l->strs + t->name, name) != 0)
			break;
		if (kind && t->kind != kind && !(kind == SYM_LAYOUT_STRUCT && t->kind == SYM_LAYOUT_CLASS) &&
		    !(kind == SYM_LAYOUT_CLASS && t->kind == SYM_LAYOUT_STRUCT))
			continue;
		n = add_unique(out, n, max, l->by_name[i]);
	}
	return n;
}

static size_t find_alias(const sym_layout *l, const char *name, uint32_t *out, size_t n,
			 size_t max)
{
	uint32_t lo = 0, hi = l->h->n_aliases;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (strcmp(l->strs + l->aliases[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t i = lo; i < l->h->n_aliases; i++) {
		const sym_layout_alias_rec *a = &l->aliases[i];
		if (strcmp(l->strs + a->name, name) != 0)
			break;
		if (a->type != SYM_LAYOUT_NONE)
			n = add_unique(out, n, max, a->type);
		else
			n = find_exact(l, l->strs + a->target, 0, out, n, max);
	}
	return n;
}

size_t sym_layout_find(const sym_layout *l, const char *name, uint32_t *out, size_t max)
{
	static const struct { const char *kw; int kind; } kws[] = {
		{"struct ", SYM_LAYOUT_STRUCT}, {"union ", SYM_LAYOUT_UNION},
		{"class ", SYM_LAYOUT_CLASS}};
	int kind = 0;
	while (*name == ' ')
		name++;
	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		size_t n = strlen(kws[i].kw);
		if (!strncmp(name, kws[i].kw, n)) {
			kind = kws[i].kind;
			name += n;
			break;
		}
	}
	size_t n = find_exact(l, name, kind, out, 0, max);
	if (!n && !kind)
		n = find_alias(l, name, out, 0, max);
	return n;
}

/* Looks for member comp among [first, first + count), through anonymous members. */
static bool search(const sym_layout *l, uint32_t first, uint32_t count, const char *comp,
		   size_t len, uint64_t base, int depth, sym_layout_field *out, uint32_t *budget);

static bool search_type(const sym_layout *l, uint32_t t, const char *comp, size_t len,
			uint64_t base, int depth, sym_layout_field *out, uint32_t *budget)
{
	const sym_layout_type_rec *r = &l->types[t];
	return search(l, r->first_member, r->n_top, comp, len, base, depth + 1, out, budget);
}

static bool search(const sym_layout *l, uint32_t first, uint32_t count, const char *comp,
		   size_t len, uint64_t base, int depth, sym_layout_field *out, uint32_t *budget)
{
	if (depth > PATH_MAX_DEPTH)
		return false;
	for (uint32_t i = 0; i < count; i++) {
		if (!*budget)
			return false;
		(*budget)--;
		sym_layout_member_info m;
		if (!sym_layout_member(l, first + i, &m))
			return false;
		uint64_t at = base + m.offset;
		if (m.kind == SYM_LAYOUT_FIELD && strlen(m.name) == len &&
		    !memcmp(m.name, comp, len)) {
			*out = (sym_layout_field){.offset = at, .bit_offset = m.bit_offset,
						  .bit_size = m.bit_size, .size = m.size,
						  .type_name = m.type_name, .member = first + i};
			return true;
		}
		if (m.kind == SYM_LAYOUT_FIELD && !*m.name && m.n &&
		    search(l, m.first, m.n, comp, len, at, depth + 1, out, budget))
			return true;
		if (m.kind == SYM_LAYOUT_BASE && !(m.flags & SYM_LAYOUT_F_VIRTUAL) &&
		    m.type_ref != SYM_LAYOUT_NONE_REF &&
		    search_type(l, m.type_ref, comp, len, at, depth, out, budget))
			return true;
	}
	return false;
}

sym_errc sym_layout_field_in(const sym_layout *l, uint32_t t, const char *path,
			     sym_layout_field *out, sym_error *err)
{
	if (t >= l->h->n_types)
		return sym_error_set(err, SYM_E_INVALID, "no such type");
	const sym_layout_type_rec *r = &l->types[t];
	uint32_t first = r->first_member, count = r->n_top;
	uint64_t base = 0;
	const char *p = path;
	for (int depth = 0;; depth++) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (!len || depth > PATH_MAX_DEPTH)
			return sym_error_set(err, SYM_E_INVALID, "bad field path \"%s\"", path);
		uint32_t budget = SEARCH_BUDGET;
		if (!search(l, first, count, p, len, base, 0, out, &budget))
			return sym_error_set(err, SYM_E_INVALID, "no member \"%.*s\" in \"%s\"",
					     (int)len, p, path);
		if (!dot)
			return SYM_OK;
		const sym_layout_member_rec *m = &l->members[out->member];
		if (m->n_children) {
			first = sym_layout_type_of(l, out->member)->first_member + m->first_child;
			count = m->n_children;
		} else if (m->type_ref != SYM_LAYOUT_NONE && !m->n_dims) {
			first = l->types[m->type_ref].first_member;
			count = l->types[m->type_ref].n_top;
		} else {
			return sym_error_set(err, SYM_E_INVALID,
					     "\"%.*s\" in \"%s\" is not an embedded struct or union",
					     (int)len, p, path);
		}
		base = out->offset;
		p = dot + 1;
	}
}

sym_errc sym_layout_field_path(const sym_layout *l, const char *path, sym_layout_field *out,
			       sym_error *err)
{
	char type[512];
	const char *dot = strchr(path, '.');
	if (!dot || (size_t)(dot - path) >= sizeof(type))
		return sym_error_set(err, SYM_E_INVALID, "field path \"%s\" has no type", path);
	memcpy(type, path, (size_t)(dot - path));
	type[dot - path] = '\0';
	uint32_t t;
	if (!sym_layout_find(l, type, &t, 1))
		return sym_error_set(err, SYM_E_INVALID, "no type \"%s\"", type);
	return sym_layout_field_in(l, t, dot + 1, out, err);
}
