// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_profile_decode: the profile path of SymbolizeProfile on outside bytes
 * (svc_profile_decode: gzip, protobuf-c, the checks), then the fill step with
 * no mapping resolved (it must leave the profile as it was) and a round trip:
 * what the daemon would pack must decode again, to the same counts. Limits
 * and the arena's cap as the daemon's, scaled down so the fuzzer stays fast.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/symbolize/svc_profile_decode.h"
#include "service/symbolize/svc_profile_fill.h"

static void check_doc(const svc_profile_doc *d)
{
	const Perftools__Profiles__Profile *p = d->p;
	for (size_t i = 0; i < p->n_location; i++)
		if (d->loc_mapping[i] > p->n_mapping)
			abort();
	for (size_t i = 0; i < p->n_mapping; i++)
		if ((uint64_t)p->mapping[i]->build_id >= p->n_string_table)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svc_profile_limits lim = {1u << 20, 64, 4096};
	base_arena a = {0};
	svc_profile_doc d;
	svc_error err;
	if (!svc_profile_decode(data, size, &lim, &a, &d, &err)) {
		if (err.code == SVC_OK)
			abort();
		svc_profile_doc_release(&d);
		base_arena_deinit(&a);
		return 0;
	}
	check_doc(&d);
	size_t n_maps = d.p->n_mapping ? d.p->n_mapping : 1;
	svc_lookup_mapping *maps = calloc(n_maps, sizeof(*maps));
	svc_profile_fill_stats st = {0};
	size_t n_str = d.p->n_string_table, n_fn = d.p->n_function;
	if (!maps || !svc_profile_fill(&d, maps, false, false, &a, &st, &err))
		abort();
	/* Nothing resolved: nothing added but the "" an empty table needs. */
	if (st.symbolized || d.p->n_function != n_fn || d.p->n_string_table > n_str + 1)
		abort();
	size_t len = perftools__profiles__profile__get_packed_size(d.p);
	uint8_t *buf = malloc(len ? len : 1);
	perftools__profiles__profile__pack(d.p, buf);
	base_arena b = {0};
	svc_profile_doc d2;
	lim.max_bytes = len + 1;
	bool back = svc_profile_decode(buf, len, &lim, &b, &d2, &err);
	if (!back ||
	    d2.p->n_location != d.p->n_location || d2.p->n_sample != d.p->n_sample ||
	    d2.p->n_mapping != d.p->n_mapping)
		abort();
	svc_profile_doc_release(&d2);
	base_arena_deinit(&b);
	free(buf);
	free(maps);
	svc_profile_doc_release(&d);
	base_arena_deinit(&a);
	return 0;
}
