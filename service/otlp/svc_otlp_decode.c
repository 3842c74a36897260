// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_decode: an ExportProfilesServiceRequest of
 * opentelemetry.proto.profiles.v1development as opentelemetry-proto v1.11.0
 * defines it (proto/otlp/README.md), decoded by protobuf-c under a memory cap
 * (its allocator counts), then checked: a dictionary, no field v1.11.0 does
 * not have (an older or newer layout of the development signal is refused
 * by name, not misread), every index into a dictionary table in range, the
 * mapping and location caps. The references form no cycle in this version
 * (samples -> stacks -> locations -> mappings, lines -> functions ->
 * strings), so range checks are all a walk needs.
 */
#include "service/otlp/svc_otlp_impl.h"

#include <stdlib.h>
#include <string.h>

#define HDR 16 /* each block's size, ahead of it */

static void *cap_alloc(void *data, size_t size)
{
	svc_otlp_alloc *a = data;
	if (size > a->cap - a->used || size > SIZE_MAX - HDR) {
		a->refused = true;
		return NULL;
	}
	unsigned char *p = malloc(size + HDR);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	a->used += size;
	return p + HDR;
}

static void cap_free(void *data, void *ptr)
{
	svc_otlp_alloc *a = data;
	if (!ptr)
		return;
	unsigned char *p = (unsigned char *)ptr - HDR;
	size_t size;
	memcpy(&size, p, sizeof(size));
	a->used -= size;
	free(p);
}

/* A message with fields this version lacks: another layout of the signal. */
static bool unknown(const ProtobufCMessage *m, const char *what, svc_error *err)
{
	if (!m || m->n_unknown_fields == 0)
		return false;
	svc_error_set(err, SVC_E_INVALID,
		      "%s has field %u, which opentelemetry.proto.profiles.v1development as of "
		      "opentelemetry-proto v1.11.0 does not define: another version of the "
		      "profiles signal (this server speaks v1.11.0)",
		      what, (unsigned)m->unknown_fields[0].tag);
	return true;
}

static bool in(int32_t i, size_t n)
{
	return i >= 0 && (size_t)i < n;
}

#define BAD(...) (svc_error_set(err, SVC_E_INVALID, __VA_ARGS__), false)

static bool check_indices(const int32_t *v, size_t n, size_t lim, const char *what, size_t at,
			  svc_error *err)
{
	for (size_t k = 0; k < n; k++)
		if (!in(v[k], lim))
			return BAD("%s %zu: index %d out of range (table of %zu)", what, at, (int)v[k],
				   lim);
	return true;
}

static bool check_dict(const otlp_dict *d, const svc_otlp_limits *lim, svc_error *err)
{
	size_t ns = d->n_string_table, nf = d->n_function_table, nm = d->n_mapping_table;
	size_t nl = d->n_location_table, na = d->n_attribute_table;
	if (nm > lim->max_mappings)
		return svc_error_set(err, SVC_E_TOO_LARGE, "%zu mappings: at most %zu", nm,
				     lim->max_mappings), false;
	if (nl > lim->max_locations)
		return svc_error_set(err, SVC_E_TOO_LARGE, "%zu locations: at most %zu", nl,
				     lim->max_locations), false;
	for (size_t i = 0; i < nf; i++) {
		const otlp_function *f = d->function_table[i];
		if (unknown(&f->base, "Function", err))
			return false;
		if (!in(f->name_strindex, ns) || !in(f->system_name_strindex, ns) ||
		    !in(f->filename_strindex, ns))
			return BAD("function %zu: string index out of range (table of %zu)", i, ns);
	}
	for (size_t i = 0; i < nm; i++) {
		const otlp_mapping *m = d->mapping_table[i];
		if (unknown(&m->base, "Mapping", err) ||
		    !check_indices(m->attribute_indices, m->n_attribute_indices, na, "mapping", i, err))
			return false;
		if (!in(m->filename_strindex, ns))
			return BAD("mapping %zu: filename index out of range", i);
	}
	for (size_t i = 0; i < nl; i++) {
		const otlp_location *l = d->location_table[i];
		if (unknown(&l->base, "Location", err) ||
		    !check_indices(l->attribute_indices, l->n_attribute_indices, na, "location", i, err))
			return false;
		if (!in(l->mapping_index, nm ? nm : 1))
			return BAD("location %zu: mapping index %d out of range (table of %zu)", i,
				   (int)l->mapping_index, nm);
		for (size_t k = 0; k < l->n_lines; k++)
			if (!in(l->lines[k]->function_index, nf))
				return BAD("location %zu: function index %d out of range (table of %zu)",
					   i, (int)l->lines[k]->function_index, nf);
	}
	for (size_t i = 0; i < na; i++)
		if (!in(d->attribute_table[i]->key_strindex, ns) ||
		    !in(d->attribute_table[i]->unit_strindex, ns))
			return BAD("attribute %zu: string index out of range", i);
	for (size_t i = 0; i < d->n_stack_table; i++)
		if (!check_indices(d->stack_table[i]->location_indices,
				   d->stack_table[i]->n_location_indices, nl, "stack", i, err))
			return false;
	return true;
}

static bool check_samples(const otlp_request *r, svc_error *err)
{
	const otlp_dict *d = r->dictionary;
	for (size_t i = 0; i < r->n_resource_profiles; i++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			r->resource_profiles[i];
		if (unknown(&rp->base, "ResourceProfiles", err))
			return false;
		for (size_t j = 0; j < rp->n_scope_profiles; j++)
			for (size_t k = 0; k < rp->scope_profiles[j]->n_profiles; k++) {
				const Opentelemetry__Proto__Profiles__V1development__Profile *p =
					rp->scope_profiles[j]->profiles[k];
				if (unknown(&p->base, "Profile", err))
					return false;
				for (size_t s = 0; s < p->n_samples; s++)
					if (!in(p->samples[s]->stack_index, d->n_stack_table) ||
					    !check_indices(p->samples[s]->attribute_indices,
							   p->samples[s]->n_attribute_indices,
							   d->n_attribute_table, "sample", s, err))
						return BAD("sample %zu: stack or attribute index out of "
							   "range", s);
			}
	}
	return true;
}

/* The string an attribute's value holds (a string, or a string index). */
static const char *attr_string(const otlp_dict *d, int32_t ai)
{
	const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *a =
		d->attribute_table[ai];
	const Opentelemetry__Proto__Common__V1__AnyValue *v = a->value;
	if (!v)
		return NULL;
	if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		return v->string_value;
	if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX &&
	    in(v->string_value_strindex, d->n_string_table))
		return d->string_table[v->string_value_strindex];
	return NULL;
}

/* Each mapping's identity: GNU build ID first (any source can be asked for
 * it), then the file hash (a file's canonical identity without one), then the
 * Go build ID. */
static void identities(svc_otlp_doc *doc)
{
	const otlp_dict *d = doc->dict;
	static const struct {
		const char *key, *kind;
	} order[] = {{SVC_OTLP_KEY_GNU, "gnu"},
		     {SVC_OTLP_KEY_HTLHASH, "htlhash"},
		     {SVC_OTLP_KEY_PROFILING, "htlhash"},
		     {SVC_OTLP_KEY_GO, "go"}};
	for (size_t i = 0; i < d->n_mapping_table; i++) {
		const otlp_mapping *m = d->mapping_table[i];
		for (size_t o = 0; o < sizeof(order) / sizeof(order[0]) && !doc->id_text[i]; o++)
			for (size_t k = 0; k < m->n_attribute_indices; k++) {
				int32_t ai = m->attribute_indices[k];
				const char *key = d->string_table[d->attribute_table[ai]->key_strindex];
				const char *v = strcmp(key, order[o].key) ? NULL : attr_string(d, ai);
				if (v && *v) {
					doc->id_text[i] = v;
					doc->id_kind[i] = order[o].kind;
					break;
				}
			}
	}
}

bool svc_otlp_decode(const uint8_t *buf, size_t len, const svc_otlp_limits *lim,
		     svc_otlp_doc *d, svc_error *err)
{
	memset(d, 0, sizeof(*d));
	d->alloc = (svc_otlp_alloc){{cap_alloc, cap_free, &d->alloc}, 0, lim->max_bytes, false};
	d->req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		&d->alloc.pc, len, buf);
	if (!d->req) {
		if (d->alloc.refused)
			return svc_error_set(err, SVC_E_TOO_LARGE,
					     "the decoded profiles are over the %zu-byte cap",
					     lim->max_bytes),
			       false;
		return BAD("the body is not a valid opentelemetry.proto.collector.profiles."
			   "v1development.ExportProfilesServiceRequest");
	}
	if (unknown(&d->req->base, "ExportProfilesServiceRequest", err))
		return false;
	if (!d->req->dictionary) {
		if (d->req->n_resource_profiles == 0)
			return true; /* nothing to enrich: passed through */
		return BAD("no ProfilesDictionary: a profiles request of opentelemetry-proto "
			   "v1.11.0 carries its tables in the dictionary (an older version?)");
	}
	d->dict = d->req->dictionary;
	if (unknown(&d->dict->base, "ProfilesDictionary", err) || !check_dict(d->dict, lim, err) ||
	    !check_samples(d->req, err))
		return false;
	size_t n = d->dict->n_mapping_table ? d->dict->n_mapping_table : 1;
	d->id_text = calloc(n, sizeof(*d->id_text));
	d->id_kind = calloc(n, sizeof(*d->id_kind));
	if (!d->id_text || !d->id_kind)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory"), false;
	identities(d);
	return true;
}

void svc_otlp_doc_release(svc_otlp_doc *d)
{
	if (d->req)
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
			d->req, &d->alloc.pc);
	free(d->id_text);
	free(d->id_kind);
	memset(d, 0, sizeof(*d));
}
