// SPDX-License-Identifier: Apache-2.0
/*
 * bench_rpc_json: bench_rpc's messages in Connect JSON (--json): a
 * SymbolizeRequest written as JSON text (addresses as strings, as 64-bit
 * integers are in the protobuf JSON mapping), and a SymbolizeResponse read
 * by a scan of its text for the frames (the objects of each "lines" array),
 * the located addresses and the first mapping's status. A scan, not a JSON
 * parser: the client's CPU is taken from the daemon's on the same cores.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_rpc_impl.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"

struct body encode_json(const char *build_id, const uint64_t *pool, size_t n_pool, size_t start,
			size_t batch, uint32_t max_wait_ms)
{
	size_t cap = 256 + strlen(build_id) + batch * 48;
	char *s = malloc(cap);
	if (!s)
		die("out of memory");
	size_t n = (size_t)snprintf(s, cap, "{\"mappings\":[{\"buildId\":\"%s\"}],\"locations\":[",
				    build_id);
	for (size_t i = 0; i < batch; i++)
		n += (size_t)snprintf(s + n, cap - n, "%s{\"address\":\"%" PRIu64 "\"}",
				      i ? "," : "", pool[(start + i) % n_pool]);
	n += (size_t)snprintf(s + n, cap - n, "],\"options\":{\"maxWaitMs\":%u}}", max_wait_ms);
	return (struct body){.data = (uint8_t *)s, .len = n};
}

/* The first occurrence of needle in [p, end), or NULL. */
static const char *find(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	return end - p >= (ptrdiff_t)n ? memmem(p, (size_t)(end - p), needle, n) : NULL;
}

struct outcome decode_json(const uint8_t *data, size_t len)
{
	struct outcome o = {.status = -1};
	const char *p = (const char *)data, *end = p + len;
	const char *st = find(p, end, "\"mappings\":[{\"status\":\"");
	if (st) {
		st += strlen("\"mappings\":[{\"status\":\"");
		if (find(st, end, "STATUS_OK\"") == st)
			o.status = SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK;
		else if (find(st, end, "STATUS_PENDING\"") == st)
			o.status = SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_PENDING;
	}
	/* Past "locations":[ the only arrays are the "lines" ones: each '[' is
	 * checked to follow "lines": (memchr, not a memmem per location: the
	 * needle's setup costs more than the search here). */
	static const char key[] = "\"lines\":";
	const size_t klen = sizeof(key) - 1;
	const char *q = find(p, end, "\"locations\":[");
	const char *from = q;
	while (q && q < end && (q = memchr(q + 1, '[', (size_t)(end - q - 1)))) {
		if (q - from < (ptrdiff_t)klen || memcmp(q - klen, key, klen) != 0)
			continue;
		o.located++;
		for (q++; q < end && *q != ']'; q++)
			o.frames += *q == '{';
	}
	return o;
}
