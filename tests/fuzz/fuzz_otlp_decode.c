// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_otlp_decode: the OTLP profiles decoder of SymbolizeOTLP on outside
 * bytes (svc_otlp_decode: protobuf-c under its memory cap, the version and
 * index checks), then the fill with no mapping resolved (it must add
 * nothing), the pack and a decode of what was packed (the same counts), and
 * the undo. Caps as the daemon's, scaled down so the fuzzer stays fast.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_arena.h"
#include "service/otlp/svc_otlp_impl.h"
#include "service/symbolize/svc_lookup.h"

static void check_doc(const svc_otlp_doc *d)
{
	const otlp_dict *x = d->dict;
	if (!x)
		return;
	for (size_t i = 0; i < x->n_location_table; i++) {
		const otlp_location *l = x->location_table[i];
		if (l->mapping_index < 0 || (x->n_mapping_table && (size_t)l->mapping_index >= x->n_mapping_table))
			abort();
		for (size_t k = 0; k < l->n_lines; k++)
			if ((size_t)l->lines[k]->function_index >= x->n_function_table)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svc_otlp_limits lim = {4u << 20, 64, 4096};
	svc_otlp_doc d;
	svc_error err = {0};
	if (!svc_otlp_decode(data, size, &lim, &d, &err)) {
		if (err.code == SVC_OK)
			abort();
		svc_otlp_doc_release(&d);
		return 0;
	}
	check_doc(&d);
	size_t nm = d.dict ? d.dict->n_mapping_table : 0;
	size_t nf = d.dict ? d.dict->n_function_table : 0;
	svc_lookup_mapping *maps = calloc(nm ? nm : 1, sizeof(*maps)); /* none resolved */
	base_arena a;
	base_arena_init(&a, 1u << 24);
	svc_otlp_fill_stats st = {0};
	svc_otlp_undo undo;
	if (maps && svc_otlp_fill(&d, maps, &a, &st, &undo, &err)) {
		if (st.symbolized || st.frames)
			abort();
		size_t len =
			opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
				d.req);
		uint8_t *buf = malloc(len ? len : 1);
		if (buf) {
			opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
				d.req, buf);
			svc_otlp_doc again;
			svc_error e2 = {0};
			lim.max_bytes = 64u << 20;
			if (svc_otlp_decode(buf, len, &lim, &again, &e2) && again.dict && d.dict &&
			    again.dict->n_location_table != d.dict->n_location_table)
				abort();
			svc_otlp_doc_release(&again);
			free(buf);
		}
		svc_otlp_unfill(&d, &undo);
		if (d.dict && d.dict->n_function_table != nf)
			abort();
	}
	free(maps);
	base_arena_deinit(&a);
	svc_otlp_doc_release(&d);
	return 0;
}
