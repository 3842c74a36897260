// SPDX-License-Identifier: Apache-2.0
/*
 * svc_layout_encode: the GetTypeLayouts response (svc_layout_encode.h).
 * Members nest as the layout index nests them (anonymous structs and unions
 * inside their parent), with the same depth bound as the index's queries.
 */
#include "service/layout/svc_layout_encode.h"

#include <event2/buffer.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_arena.h"

#define MAX_LAYOUTS 64
#define MAX_NEST 64
#define ARENA_CAP ((size_t)256 << 20)

static const char *kind_name(sym_layout_kind k)
{
	return k == SYM_LAYOUT_UNION ? "union" : k == SYM_LAYOUT_CLASS ? "class" : "struct";
}

static char *dup(base_arena *a, const char *s, bool *ok)
{
	char *d = base_arena_strdup(a, s ? s : "");
	if (!d)
		*ok = false;
	return d ? d : (char *)"";
}

static Symbolizer__V1__TypeMember **members(base_arena *a, const sym_layout *l, uint32_t first,
					     uint32_t n, int depth, bool *ok)
{
	Symbolizer__V1__TypeMember **v = base_arena_calloc(a, n ? n : 1, sizeof(*v));
	if (!v) {
		*ok = false;
		return NULL;
	}
	for (uint32_t i = 0; i < n && *ok; i++) {
		sym_layout_member_info m;
		Symbolizer__V1__TypeMember *pm = base_arena_alloc(a, sizeof(*pm));
		if (!pm || !sym_layout_member(l, first + i, &m)) {
			*ok = false;
			break;
		}
		symbolizer__v1__type_member__init(pm);
		pm->name = dup(a, m.name, ok);
		pm->type = dup(a, m.type_name, ok);
		pm->offset = m.offset;
		pm->size = m.size;
		pm->bit_offset = m.bit_offset;
		pm->bit_size = m.bit_size;
		pm->is_base = m.kind == SYM_LAYOUT_BASE;
		pm->is_virtual = (m.flags & SYM_LAYOUT_F_VIRTUAL) != 0;
		pm->offset_unknown = (m.flags & SYM_LAYOUT_F_UNKNOWN_OFFSET) != 0;
		if (m.n_dims && (pm->dims = base_arena_calloc(a, m.n_dims, sizeof(int64_t)))) {
			pm->n_dims = m.n_dims;
			for (uint32_t d = 0; d < m.n_dims; d++)
				pm->dims[d] = m.dims[d] == UINT64_MAX ? -1 : (int64_t)m.dims[d];
		}
		if (m.n && depth < MAX_NEST) {
			pm->members = members(a, l, m.first, m.n, depth + 1, ok);
			pm->n_members = m.n;
		}
		v[i] = pm;
	}
	return v;
}

static Symbolizer__V1__TypeResult *type_result(base_arena *a, const sym_layout *l,
					       const char *query, bool *ok)
{
	Symbolizer__V1__TypeResult *r = base_arena_alloc(a, sizeof(*r));
	uint32_t ts[MAX_LAYOUTS];
	if (!r) {
		*ok = false;
		return NULL;
	}
	symbolizer__v1__type_result__init(r);
	r->query = dup(a, query, ok);
	size_t n = sym_layout_find(l, query, ts, MAX_LAYOUTS);
	n = n > MAX_LAYOUTS ? MAX_LAYOUTS : n;
	r->found = n > 0;
	r->layouts = base_arena_calloc(a, n ? n : 1, sizeof(*r->layouts));
	if (!r->layouts) {
		*ok = false;
		return r;
	}
	for (size_t i = 0; i < n && *ok; i++) {
		sym_layout_type_info ti;
		Symbolizer__V1__TypeLayout *t = base_arena_alloc(a, sizeof(*t));
		if (!t || !sym_layout_type(l, ts[i], &ti)) {
			*ok = false;
			break;
		}
		symbolizer__v1__type_layout__init(t);
		t->name = dup(a, ti.name, ok);
		t->kind = (char *)kind_name(ti.kind);
		t->size = ti.size;
		t->alignment = ti.align;
		t->compile_unit = dup(a, ti.cu, ok);
		t->members = members(a, l, ti.first, ti.n, 0, ok);
		t->n_members = ti.n;
		r->layouts[r->n_layouts++] = t;
	}
	return r;
}

static Symbolizer__V1__FieldResult *field_result(base_arena *a, const sym_layout *l,
						 const char *path, bool *ok)
{
	Symbolizer__V1__FieldResult *r = base_arena_alloc(a, sizeof(*r));
	if (!r) {
		*ok = false;
		return NULL;
	}
	symbolizer__v1__field_result__init(r);
	r->path = dup(a, path, ok);
	sym_layout_field f;
	sym_error err = {0};
	if (sym_layout_field_path(l, path, &f, &err)) {
		r->error = dup(a, err.msg, ok);
		return r;
	}
	r->found = true;
	r->offset = f.offset;
	r->bit_offset = f.bit_offset;
	r->bit_size = f.bit_size;
	r->size = f.size;
	r->type = dup(a, f.type_name, ok);
	return r;
}

bool svc_layout_encode(const Symbolizer__V1__GetTypeLayoutsRequest *req, const sym_layout *l,
		       int status, const char *error, uint32_t retry_after_ms,
		       struct evbuffer *out)
{
	base_arena a;
	base_arena_init(&a, ARENA_CAP);
	bool ok = true;
	Symbolizer__V1__GetTypeLayoutsResponse resp = SYMBOLIZER__V1__GET_TYPE_LAYOUTS_RESPONSE__INIT;
	Symbolizer__V1__MappingResult mr = SYMBOLIZER__V1__MAPPING_RESULT__INIT;
	mr.status = status;
	mr.error = dup(&a, error, &ok);
	mr.retry_after_ms = retry_after_ms;
	resp.result = &mr;
	if (l) {
		size_t nt = req->n_types, nf = req->n_fields;
		resp.types = base_arena_calloc(&a, nt ? nt : 1, sizeof(*resp.types));
		resp.fields = base_arena_calloc(&a, nf ? nf : 1, sizeof(*resp.fields));
		ok = ok && resp.types && resp.fields;
		for (size_t i = 0; ok && i < nt; i++)
			resp.types[resp.n_types++] = type_result(&a, l, req->types[i], &ok);
		for (size_t i = 0; ok && i < nf; i++)
			resp.fields[resp.n_fields++] = field_result(&a, l, req->fields[i], &ok);
	}
	if (ok) {
		size_t n = symbolizer__v1__get_type_layouts_response__get_packed_size(&resp);
		uint8_t *buf = malloc(n ? n : 1);
		ok = buf != NULL;
		if (ok) {
			symbolizer__v1__get_type_layouts_response__pack(&resp, buf);
			ok = evbuffer_add(out, buf, n) == 0;
		}
		free(buf);
	}
	base_arena_deinit(&a);
	return ok;
}
