// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolver_metrics: the resolver's metric families for /metrics
 * (svc_resolver.h): lookups by tier, flights in progress, index builds and
 * their duration, stored indexes rejected, background rechecks. The HTTP room
 * joins them into the exposition; names and labels are what dashboards read.
 */
#include "service/resolve/svc_resolver_impl.h"

#include "base/base_expo.h"

/* The build memory budget and the remembered failures. */
static void render_budget(const svc_resolver *r, base_buf *out)
{
	uint64_t max, in_use, peak;
	size_t queued;
	svc_resolver_build_memory(r, &max, &in_use, &peak, &queued);
	base_expo_family(out, "symbolizer_index_build_memory_bytes", "gauge",
			 "Expected memory of the index builds running now (their estimates).");
	base_expo_u64(out, "symbolizer_index_build_memory_bytes", "", in_use);
	base_expo_family(out, "symbolizer_index_build_memory_peak_bytes", "gauge",
			 "Highest symbolizer_index_build_memory_bytes since start.");
	base_expo_u64(out, "symbolizer_index_build_memory_peak_bytes", "", peak);
	base_expo_family(out, "symbolizer_index_build_memory_max_bytes", "gauge",
			 "The build memory budget (--build-memory-bytes).");
	base_expo_u64(out, "symbolizer_index_build_memory_max_bytes", "", max);
	base_expo_family(out, "symbolizer_index_builds_queued", "gauge",
			 "Index builds waiting for room in the build memory budget.");
	base_expo_u64(out, "symbolizer_index_builds_queued", "", queued);
	base_expo_family(out, "symbolizer_index_builds_queued_total", "counter",
			 "Index builds that waited for room in the build memory budget.");
	base_expo_u64(out, "symbolizer_index_builds_queued_total", "", r->st.builds_queued);
	base_expo_family(out, "symbolizer_negative_cache_entries", "gauge",
			 "Failures remembered in memory (bound: --negative-cache-entries).");
	base_expo_u64(out, "symbolizer_negative_cache_entries", "", svc_resolve_neg_map_size(&r->negs));
	base_expo_family(out, "symbolizer_negative_cache_evictions_total", "counter",
			 "Remembered failures pushed out by newer ones (LRU).");
	base_expo_u64(out, "symbolizer_negative_cache_evictions_total", "", r->st.negative_evictions);
}

void svc_resolver_metrics_render(const svc_resolver *r, base_buf *out)
{
	const svc_resolver_stats *rs = &r->st;
	const struct {
		const char *labels;
		uint64_t v;
	} tiers[] = {
		{"tier=\"memory\",result=\"hit\"", rs->memory_hits},
		{"tier=\"memory\",result=\"miss\"", rs->memory_misses},
		{"tier=\"negative\",result=\"hit\"", rs->negative_hits},
		{"tier=\"store_index\",result=\"hit\"", rs->store_index_hits},
		{"tier=\"store_index\",result=\"miss\"", rs->store_index_misses},
		{"tier=\"store_file\",result=\"hit\"", rs->store_file_hits},
		{"tier=\"store_file\",result=\"miss\"", rs->source_fetches},
	};
	base_expo_family(out, "symbolizer_cache_requests_total", "counter",
			 "Lookups of a build ID in each tier (memory, store_index, store_file) by result.");
	for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++)
		base_expo_u64(out, "symbolizer_cache_requests_total", tiers[i].labels, tiers[i].v);
	base_expo_family(out, "symbolizer_resolutions_in_flight", "gauge",
			 "Build IDs being loaded, fetched or indexed now.");
	base_expo_u64(out, "symbolizer_resolutions_in_flight", "", rs->in_flight);
	base_expo_family(out, "symbolizer_index_builds_total", "counter", "Index builds by result.");
	base_expo_u64(out, "symbolizer_index_builds_total", "result=\"ok\"", rs->builds_ok);
	base_expo_u64(out, "symbolizer_index_builds_total", "result=\"failed\"", rs->builds_failed);
	base_expo_u64(out, "symbolizer_index_builds_total", "result=\"skipped_failed_before\"",
		      rs->builds_skipped);
	base_expo_family(out, "symbolizer_s3_index_hits_total", "counter",
			 "Indexes read from the shared S3 tier instead of built.");
	base_expo_u64(out, "symbolizer_s3_index_hits_total", "", rs->s3_index_hits);
	base_expo_family(out, "symbolizer_index_build_duration_seconds", "histogram",
			 "Wall time of index builds (reading the debug info from the store included).");
	base_expo_histogram(out, "symbolizer_index_build_duration_seconds", "", &rs->build_seconds);
	base_expo_family(out, "symbolizer_stored_index_rejected_total", "counter",
			 "Stored indexes of another format version or damaged, rebuilt.");
	base_expo_u64(out, "symbolizer_stored_index_rejected_total", "", rs->stored_index_rejected);
	base_expo_family(out, "symbolizer_debuginfo_rechecks_total", "counter",
			 "Background searches for the debug info of indexes built from an executable "
			 "alone, by result (found: the index was rebuilt with it).");
	base_expo_u64(out, "symbolizer_debuginfo_rechecks_total", "result=\"started\"", rs->rechecks);
	base_expo_u64(out, "symbolizer_debuginfo_rechecks_total", "result=\"found\"", rs->upgrades);
	render_budget(r, out);
}
