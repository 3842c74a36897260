// SPDX-License-Identifier: Apache-2.0
/*
 * sym_collect: setup and teardown of a builder collection (see sym_collect_impl.h).
 */
#include "symbolizer/sym_collect_impl.h"

#include <string.h>

int sym_collect_init(sym_collect *c)
{
	memset(c, 0, sizeof(*c));
	if (sym_strtab_init(&c->strs))
		return -1;
	base_vec_init(&c->funcs, sizeof(struct sym_ix_func), SYM_MAX_SCOPES);
	base_vec_init(&c->scopes, sizeof(struct sym_ix_scope), SYM_MAX_SCOPES);
	base_vec_init(&c->scope_spans, sizeof(sym_span), SYM_MAX_SPANS);
	base_vec_init(&c->line_spans, sizeof(sym_span), SYM_MAX_SPANS);
	base_vec_init(&c->unit_files, sizeof(uint32_t), SYM_MAX_SPANS);
	base_vec_init(&c->func_keys, sizeof(uint64_t), SYM_MAX_SCOPES);
	base_vec_init(&c->units, sizeof(struct sym_collect_unit), SYM_MAX_SPANS);
	return 0;
}

void sym_collect_deinit(sym_collect *c)
{
	sym_strtab_deinit(&c->strs);
	base_vec_deinit(&c->funcs);
	base_vec_deinit(&c->scopes);
	base_vec_deinit(&c->scope_spans);
	base_vec_deinit(&c->line_spans);
	base_vec_deinit(&c->unit_files);
	base_vec_deinit(&c->func_keys);
	base_vec_deinit(&c->units);
}

int sym_collect_merge(sym_collect *dst, sym_collect *src, base_vec *dst_scope_spans)
{
	int rc = -1;
	uint32_t *map = malloc(src->strs.size * sizeof(*map));
	if (!map)
		return -1;
	for (size_t off = 0; off < src->strs.size;) {
		const char *s = src->strs.bytes + off;
		size_t len = strlen(s);
		map[off] = sym_strtab_add(&dst->strs, s, len);
		if (map[off] == SYM_STR_NONE)
			goto out;
		off += len + 1;
	}
	uint32_t func_base = (uint32_t)dst->funcs.len, scope_base = (uint32_t)dst->scopes.len;
	if (base_vec_reserve(&dst->funcs, src->funcs.len) ||
	    base_vec_reserve(&dst->scopes, src->scopes.len) ||
	    base_vec_reserve(dst_scope_spans, src->scope_spans.len) ||
	    base_vec_reserve(&dst->line_spans, src->line_spans.len) ||
	    base_vec_reserve(&dst->unit_files, src->unit_files.len))
		goto out;
	for (size_t i = 0; i < src->funcs.len; i++) {
		struct sym_ix_func f = BASE_VEC_AT(&src->funcs, struct sym_ix_func, i);
		f.name = map[f.name];
		f.linkage = map[f.linkage];
		f.display = map[f.display];
		f.decl_file = map[f.decl_file];
		*(struct sym_ix_func *)base_vec_push(&dst->funcs) = f;
	}
	for (size_t i = 0; i < src->scopes.len; i++) {
		struct sym_ix_scope s = BASE_VEC_AT(&src->scopes, struct sym_ix_scope, i);
		s.func += func_base;
		if (s.parent != SYM_IX_NONE)
			s.parent += scope_base;
		s.call_file = map[s.call_file];
		*(struct sym_ix_scope *)base_vec_push(&dst->scopes) = s;
	}
	for (size_t i = 0; i < src->scope_spans.len; i++) {
		sym_span s = BASE_VEC_AT(&src->scope_spans, sym_span, i);
		s.a += scope_base;
		*(sym_span *)base_vec_push(dst_scope_spans) = s;
	}
	for (size_t i = 0; i < src->line_spans.len; i++) {
		sym_span s = BASE_VEC_AT(&src->line_spans, sym_span, i);
		s.a = map[s.a];
		*(sym_span *)base_vec_push(&dst->line_spans) = s;
	}
	for (size_t i = 0; i < src->unit_files.len; i++)
		*(uint32_t *)base_vec_push(&dst->unit_files) =
			map[BASE_VEC_AT(&src->unit_files, uint32_t, i)];
	rc = 0;
out:
	free(map);
	base_vec_deinit(&src->funcs);
	base_vec_deinit(&src->scopes);
	base_vec_deinit(&src->scope_spans);
	base_vec_deinit(&src->line_spans);
	base_vec_deinit(&src->unit_files);
	return rc;
}
