// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_local: SymbolizeOTLP in the caller's process (svc_otlp_local.h):
 * svc_otlp_decode, the mapping rows as svc_otlp.c's prepare step makes them,
 * the caller's resolve, svc_otlp_fill, the pack, svc_otlp_unfill.
 */
#include "service/otlp/svc_otlp_local.h"
#include "service/otlp/svc_otlp_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_arena.h"
#include "service/core/svc_build_id.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x
/* The decoded request's memory: the caller's own process, a generous cap. */
#define LOCAL_MAX_BYTES ((size_t)1 << 34)

/* The mapping rows, as svc_otlp.c's prepare: ELF addresses, the identity its
 * attributes name, resolved only when a location without lines uses it. */
static void rows(const svc_otlp_doc *doc, svc_lookup_mapping *maps, Symbolizer__V1__Mapping *pbs)
{
	const otlp_dict *d = doc->dict;
	for (size_t i = 0; i < d->n_mapping_table; i++) {
		Symbolizer__V1__Mapping *m = &pbs[i];
		symbolizer__v1__mapping__init(m);
		m->build_id = (char *)(doc->id_text[i] ? doc->id_text[i] : "");
		m->build_id_kind = (char *)(doc->id_kind[i] ? doc->id_kind[i] : "");
		m->memory_start = d->mapping_table[i]->memory_start;
		m->memory_limit = d->mapping_table[i]->memory_limit;
		m->file_offset = d->mapping_table[i]->file_offset;
		m->address_kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF;
		maps[i].pb = m;
		maps[i].skip = true;
		maps[i].status = STATUS(NOT_FOUND);
	}
	for (size_t i = 0; i < d->n_location_table; i++) {
		const otlp_location *l = d->location_table[i];
		int32_t mi = l->mapping_index;
		if (mi > 0 && (size_t)mi < d->n_mapping_table && l->n_lines == 0 && doc->id_text[mi])
			maps[mi].skip = false;
	}
}

static bool pack(const svc_otlp_doc *doc, base_buf *out)
{
	size_t size =
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
			doc->req);
	if (!base_buf_reserve(out, size ? size : 1))
		return false;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
		doc->req, out->data + out->len);
	out->len += size;
	return true;
}

bool svc_otlp_local(const uint8_t *in, size_t len, svc_otlp_local_fn fn, void *arg,
		    base_buf *out, svc_otlp_local_stats *st, svc_error *err)
{
	memset(st, 0, sizeof(*st));
	svc_otlp_limits lim = {LOCAL_MAX_BYTES, SIZE_MAX / 2, SIZE_MAX / 2};
	svc_otlp_doc doc = {0};
	base_arena arena;
	base_arena_init(&arena, LOCAL_MAX_BYTES);
	svc_lookup_mapping *maps = NULL;
	Symbolizer__V1__Mapping *pbs = NULL;
	bool ok = false;
	if (!svc_otlp_decode(in, len, &lim, &doc, err))
		goto out;
	size_t n = doc.dict->n_mapping_table;
	maps = calloc(n ? n : 1, sizeof(*maps));
	pbs = calloc(n ? n : 1, sizeof(*pbs));
	if (!maps || !pbs) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		goto out;
	}
	rows(&doc, maps, pbs);
	for (size_t i = 0; i < n; i++) {
		svc_lookup_mapping *m = &maps[i];
		if (m->skip)
			continue;
		st->mappings++;
		const char *bad = svc_build_id_check_kind(m->pb->build_id_kind, m->pb->build_id, &m->id);
		if (bad) {
			m->status = STATUS(INVALID);
			snprintf(m->error, sizeof(m->error), "%s", bad);
			continue;
		}
		fn(arg, i, m);
		st->resolved += m->status == STATUS(OK);
	}
	svc_otlp_fill_stats fs = {0};
	svc_otlp_undo undo;
	if (svc_otlp_fill(&doc, maps, &arena, &fs, &undo, err)) {
		ok = pack(&doc, out);
		if (!ok)
			svc_error_set(err, SVC_E_NOMEM, "out of memory packing the profiles");
	}
	svc_otlp_unfill(&doc, &undo);
	st->symbolized = fs.symbolized;
	st->unsymbolized = fs.unsymbolized;
	st->frames = fs.frames;
out:
	free(maps);
	free(pbs);
	svc_otlp_doc_release(&doc);
	base_arena_deinit(&arena);
	return ok;
}
