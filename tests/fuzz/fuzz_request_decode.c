// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_request_decode: differential fuzzing of svc_request_decode (the
 * daemon's SymbolizeRequest decoder, with its hand-written Location path)
 * against protobuf-c's generated unpacker. Both must accept or reject the
 * same bytes, and decode them to the same mappings, locations and options;
 * the decoder's arena cap must hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/symbolize/svc_request.h"

static int same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	base_arena a1, a2;
	base_arena_init(&a1, 64u << 20);
	base_arena_init(&a2, 64u << 20);
	svc_request_shape shape;
	svc_request_locations locs;
	svc_request_count(data, size, &shape);
	Symbolizer__V1__SymbolizeRequest *x = svc_request_decode(data, size, &shape, &a1, &locs);
	ProtobufCAllocator pb2 = svc_request_allocator(&a2);
	Symbolizer__V1__SymbolizeRequest *y =
		symbolizer__v1__symbolize_request__unpack(&pb2, size, data);
	if ((x == NULL) != (y == NULL))
		abort();
	if (x) {
		/* The Locations in the arrays, the message's list left empty. */
		if (x->n_mappings != y->n_mappings || x->n_locations != 0 || x->locations ||
		    locs.n != y->n_locations || (x->options == NULL) != (y->options == NULL))
			abort();
		for (size_t i = 0; i < locs.n; i++) {
			const Symbolizer__V1__Location *q = y->locations[i];
			if (locs.mapping_index[i] != q->mapping_index || locs.address[i] != q->address ||
			    locs.is_return[i] != (q->is_return_address != 0))
				abort();
		}
		for (size_t i = 0; i < x->n_mappings; i++) {
			const Symbolizer__V1__Mapping *p = x->mappings[i], *q = y->mappings[i];
			if (!same_str(p->build_id, q->build_id) || p->memory_start != q->memory_start ||
			    p->memory_limit != q->memory_limit || p->file_offset != q->file_offset ||
			    p->address_kind != q->address_kind || !same_str(p->section, q->section))
				abort();
		}
		if (x->options && (x->options->no_inline != y->options->no_inline ||
				   x->options->no_demangle != y->options->no_demangle ||
				   x->options->max_wait_ms != y->options->max_wait_ms))
			abort();
	}
	if (a1.used > a1.cap)
		abort();
	base_arena_deinit(&a1);
	base_arena_deinit(&a2);
	return 0;
}
