/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_lookup: the second half of a Symbolize call, once every mapping is
 * resolved: normalizes each location's address, looks it up in its mapping's
 * index, and builds and packs the SymbolizeResponse (string table, function
 * table, one LocationResult per location, one MappingResult per mapping).
 * Touches no event loop state, so it runs on the loop or on a worker.
 */
#ifndef SVC_LOOKUP_H
#define SVC_LOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_arena.h"
#include "service/core/svc_error.h"
#include "service/resolve/svc_index_cache.h"
#include "service/symbolize/svc_request.h"
#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_error.h"

struct evbuffer;

typedef struct svc_lookup_mapping {
	const Symbolizer__V1__Mapping *pb;
	sym_build_id id;
	int status;                 /* Symbolizer__V1__MappingResult__Status */
	svc_index_entry *entry;     /* OK: the index (referenced by the call) */
	char error[SYM_ERROR_MSG_MAX];
	uint32_t retry_after_ms;
	bool skip;                  /* not to be resolved (svc_mappings): status stays */
} svc_lookup_mapping;

typedef struct svc_lookup_result {
	svc_error err;              /* SVC_OK, or why no response could be built */
	uint64_t frames;            /* lines in the response */
	uint64_t symbolized;        /* locations with at least one line */
} svc_lookup_result;

void svc_lookup_result_init(svc_lookup_result *r);

/*
 * Looks every location of locs (req's: svc_request_decode's) up and
 * appends the packed response to body, which the RPC layer compresses
 * (svc_rpc_call_encode): in protobuf, or in JSON as json (the
 * SymbolizeResponse's codec: svc_rpc_call_json_out) writes it when json is
 * not NULL. pool lends the response's tables (NULL: private ones); the
 * arena's cap bounds the call's memory (three times over for JSON's text).
 */
void svc_lookup_run(const Symbolizer__V1__SymbolizeRequest *req,
		    const svc_request_locations *locs, svc_lookup_mapping *maps, base_arena *arena,
		    svc_response_pool *pool, const svc_rpc_json *json, struct evbuffer *body,
		    svc_lookup_result *out);

/*
 * The ELF virtual address of a location, as pprof normalizes it: a runtime
 * address becomes a file offset (address - memory_start + file_offset), and a
 * file offset becomes an address through the PT_LOAD segment that holds it.
 * A kernel image (ET_EXEC with _stext or _text, or a mapping in the upper
 * half): a runtime address less the slide pprof's elfexec.GetBase computes
 * (kernelBase: memory_start, memory_limit and file_offset as perf records the
 * kernel mapping, _stext's value, the first executable PT_LOAD).
 * False when the address is outside the mapping or no segment holds it.
 * Separate debug files carry PT_LOADs with p_offset and p_filesz zeroed;
 * their offsets are taken to be p_vaddr minus the first segment's page (the
 * layout GNU ld gives), which is exact for the executable segments it makes.
 */
bool svc_normalize_address(const sym_index_info *info, const Symbolizer__V1__Mapping *m,
			   uint64_t address, uint64_t *vaddr);

/*
 * The section a mapping's addresses are offsets in: Mapping.section (default
 * ".text") for ADDRESS_KIND_SECTION and for ADDRESS_KIND_RUNTIME on a
 * relocatable file (a kernel module); NULL otherwise.
 */
const char *svc_mapping_section(const Symbolizer__V1__Mapping *m, const sym_index_info *info);

/*
 * The address of a section offset: the offset is the address itself
 * (SECTION), or address - memory_start (RUNTIME, memory_start being where the
 * section is loaded). False outside the mapping or past the section's end.
 */
bool svc_section_address(const Symbolizer__V1__Mapping *m, uint64_t sec_addr,
			 uint64_t sec_size, uint64_t address, uint64_t *vaddr);

/*
 * The frames of one address of mapping m (resolved: m->entry set), innermost
 * first, as Symbolize answers them: the address normalized
 * (svc_normalize_address) into *vaddr, and a return address looked up at
 * *vaddr - 1, inside the call instruction. *n frames (at most max, 0 when
 * nothing covers it). False when the mapping has no index or the address is
 * outside it.
 */
bool svc_lookup_frames(const svc_lookup_mapping *m, uint64_t address, bool is_return_address,
		       sym_frame *frames, size_t max, size_t *n, uint64_t *vaddr);

#endif
