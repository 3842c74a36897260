/* SPDX-License-Identifier: Apache-2.0 */
/*
 * response_fixture: a Symbolize call over index fixtures (index_fixture.h),
 * built in memory and run through svc_lookup_run, for the response tests
 * (test_svc_response: the protobuf bytes; test_svc_response_json: the JSON).
 */
#ifndef RESPONSE_FIXTURE_H
#define RESPONSE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_response.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

/* A request of n_maps mappings and the locations given, and its svc_lookup_mappings. */
struct call {
	Symbolizer__V1__SymbolizeRequest req;
	Symbolizer__V1__Options opts;
	Symbolizer__V1__Mapping pm[4];
	Symbolizer__V1__Mapping *pmp[4];
	svc_lookup_mapping maps[4];
	Symbolizer__V1__Location *locs;
	Symbolizer__V1__Location **locp;
};

/* n_maps (at most 4) mappings of entries (NULL: not found, "no source has
 * it", retry after 7 ms) and n_locs locations, zeroed. */
void call_init(struct call *c, svc_index_entry **entries, size_t n_maps, size_t n_locs);
void call_deinit(struct call *c);

/* Addresses every 3 bytes through the executable segments of an index, from its first. */
size_t code_addresses(const svc_index_entry *e, uint64_t *out, size_t max);

/* Runs the call (json: the response in JSON, by this codec; NULL:
 * protobuf); the body's bytes (malloc'd) and size, or NULL when not OK. */
uint8_t *run(struct call *c, svc_response_pool *pool, const svc_rpc_json *json,
	     size_t arena_cap, size_t *size, svc_lookup_result *res);

/* Ends r with the MappingResults of maps (svc_response_take) and joins
 * its pieces: the bytes (malloc'd) and size; NULL when it is not taken. */
uint8_t *take_joined(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
		     size_t *size);

#endif
