/*
 * svc_metrics: counters and the Prometheus text exposition (svc_metrics.h).
 * Every family has HELP and TYPE lines; counters end in _total; label values
 * are escaped as the format requires. Checked by `promtool check metrics` in
 * the integration tests.
 */
#include "service/http/svc_metrics.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "service/http/svc_server_impl.h"

void svc_metrics_init(svc_metrics *m)
{
	memset(m, 0, sizeof(*m));
	base_histogram_init(&m->rpc_seconds, base_latency_bounds, base_latency_n_bounds);
}

void svc_metrics_http(svc_metrics *m, const char *handler, int status)
{
	for (unsigned i = 0; i < m->n_http; i++) {
		if (m->http[i].status == status && strcmp(m->http[i].handler, handler) == 0) {
			m->http[i].count++;
			return;
		}
	}
	if (m->n_http < SVC_METRICS_MAX_HTTP) {
		m->http[m->n_http].handler = handler;
		m->http[m->n_http].status = status;
		m->http[m->n_http].count = 1;
		m->n_http++;
	}
}

static void family(struct evbuffer *b, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void escaped(struct evbuffer *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			evbuffer_add_printf(b, "\\%c", *s);
		else if (*s == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, s, 1);
	}
}

static void histogram(struct evbuffer *b, const char *name, const char *labels,
		      const base_histogram *h)
{
	uint64_t cum = 0;
	const char *sep = labels[0] ? "," : "";
	for (size_t i = 0; i < h->n_bounds; i++) {
		cum += h->counts[i];
		evbuffer_add_printf(b, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels, sep,
				    h->bounds[i], cum);
	}
	cum += h->counts[h->n_bounds];
	evbuffer_add_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, sep, cum);
	if (labels[0]) {
		evbuffer_add_printf(b, "%s_sum{%s} %.6f\n%s_count{%s} %" PRIu64 "\n", name, labels,
				    h->sum, name, labels, h->count);
	} else {
		evbuffer_add_printf(b, "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->sum, name,
				    h->count);
	}
}

static const char *const map_status_names[SVC_MAP_STATUSES] = {
	"unspecified", "ok", "not_found", "pending", "error", "no_symbols", "invalid", "too_large",
};

void svc_metrics_render(struct svc_server *s, struct evbuffer *b)
{
	const svc_metrics *m = &s->metrics;

	family(b, "symbolizer_rpc_requests_total", "counter",
	       "RPC calls by method and Connect code.");
	for (int c = 0; c < SVC_CONNECT_N_CODES; c++)
		if (m->rpc_requests[c] || c == SVC_CONNECT_OK)
			evbuffer_add_printf(b,
					    "symbolizer_rpc_requests_total{method=\"Symbolize\","
					    "code=\"%s\"} %" PRIu64 "\n",
					    svc_connect_code_name(c), m->rpc_requests[c]);
	family(b, "symbolizer_rpc_duration_seconds", "histogram",
	       "Latency of RPC calls, from the request's arrival to its reply.");
	histogram(b, "symbolizer_rpc_duration_seconds", "method=\"Symbolize\"", &m->rpc_seconds);

	family(b, "symbolizer_http_requests_total", "counter",
	       "HTTP replies by handler and status code.");
	for (unsigned i = 0; i < m->n_http; i++)
		evbuffer_add_printf(b,
				    "symbolizer_http_requests_total{handler=\"%s\",code=\"%d\"} "
				    "%" PRIu64 "\n",
				    m->http[i].handler, m->http[i].status, m->http[i].count);

	family(b, "symbolizer_frames_symbolized_total", "counter",
	       "Frames (lines, inlined ones included) sent in Symbolize responses.");
	evbuffer_add_printf(b, "symbolizer_frames_symbolized_total %" PRIu64 "\n", m->frames);
	family(b, "symbolizer_locations_total", "counter",
	       "Locations asked for, by whether they got at least one line.");
	evbuffer_add_printf(b, "symbolizer_locations_total{result=\"symbolized\"} %" PRIu64 "\n",
			    m->locations_symbolized);
	evbuffer_add_printf(b, "symbolizer_locations_total{result=\"unsymbolized\"} %" PRIu64 "\n",
			    m->locations - m->locations_symbolized);
	family(b, "symbolizer_mappings_total", "counter",
	       "Mappings answered, by MappingResult status.");
	for (int i = 1; i < SVC_MAP_STATUSES; i++)
		evbuffer_add_printf(b, "symbolizer_mappings_total{status=\"%s\"} %" PRIu64 "\n",
				    map_status_names[i], m->mappings[i]);
	family(b, "symbolizer_worker_lookups_total", "counter",
	       "Symbolize calls whose lookups ran on a worker thread.");
	evbuffer_add_printf(b, "symbolizer_worker_lookups_total %" PRIu64 "\n", m->worker_lookups);
	family(b, "symbolizer_calls_in_flight", "gauge", "Symbolize calls in progress.");
	evbuffer_add_printf(b, "symbolizer_calls_in_flight %u\n", s->n_calls);

	/* Tiers: memory index cache, stored index, stored debug info, sources. */
	const svc_resolver_stats *rs = svc_resolver_get_stats(s->resolver);
	family(b, "symbolizer_cache_requests_total", "counter",
	       "Lookups of a build ID in each tier (memory, store_index, store_file) by result.");
	evbuffer_add_printf(b,
			    "symbolizer_cache_requests_total{tier=\"memory\",result=\"hit\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"memory\",result=\"miss\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"negative\",result=\"hit\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"store_index\",result=\"hit\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"store_index\",result=\"miss\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"store_file\",result=\"hit\"} %" PRIu64
			    "\n"
			    "symbolizer_cache_requests_total{tier=\"store_file\",result=\"miss\"} %" PRIu64
			    "\n",
			    rs->memory_hits, rs->memory_misses,
			    rs->negative_hits, rs->store_index_hits, rs->store_index_misses,
			    rs->store_file_hits, rs->source_fetches);
	family(b, "symbolizer_resolutions_in_flight", "gauge",
	       "Build IDs being loaded, fetched or indexed now.");
	evbuffer_add_printf(b, "symbolizer_resolutions_in_flight %zu\n", rs->in_flight);
	family(b, "symbolizer_index_builds_total", "counter", "Index builds by result.");
	evbuffer_add_printf(b, "symbolizer_index_builds_total{result=\"ok\"} %" PRIu64 "\n",
			    rs->builds_ok);
	evbuffer_add_printf(b, "symbolizer_index_builds_total{result=\"failed\"} %" PRIu64 "\n",
			    rs->builds_failed);
	family(b, "symbolizer_index_build_duration_seconds", "histogram",
	       "Wall time of index builds (reading the debug info from the store included).");
	histogram(b, "symbolizer_index_build_duration_seconds", "", &rs->build_seconds);
	family(b, "symbolizer_stored_index_rejected_total", "counter",
	       "Stored indexes of another format version or damaged, rebuilt.");
	evbuffer_add_printf(b, "symbolizer_stored_index_rejected_total %" PRIu64 "\n",
			    rs->stored_index_rejected);
	family(b, "symbolizer_debuginfo_rechecks_total", "counter",
	       "Background searches for the debug info of indexes built from an executable alone, "
	       "by result (found: the index was rebuilt with it).");
	evbuffer_add_printf(b, "symbolizer_debuginfo_rechecks_total{result=\"started\"} %" PRIu64 "\n",
			    rs->rechecks);
	evbuffer_add_printf(b, "symbolizer_debuginfo_rechecks_total{result=\"found\"} %" PRIu64 "\n",
			    rs->upgrades);

	svc_index_cache_stats cs;
	svc_index_cache_get_stats(s->cache, &cs);
	family(b, "symbolizer_index_cache_bytes", "gauge", "Bytes of the loaded indexes in memory.");
	evbuffer_add_printf(b, "symbolizer_index_cache_bytes %zu\n", cs.bytes);
	family(b, "symbolizer_index_cache_max_bytes", "gauge", "Bound of the index cache.");
	evbuffer_add_printf(b, "symbolizer_index_cache_max_bytes %zu\n", cs.max_bytes);
	family(b, "symbolizer_index_cache_entries", "gauge", "Indexes loaded in memory.");
	evbuffer_add_printf(b, "symbolizer_index_cache_entries %zu\n", cs.entries);
	family(b, "symbolizer_index_cache_evictions_total", "counter",
	       "Indexes dropped from memory to stay under the bound.");
	evbuffer_add_printf(b, "symbolizer_index_cache_evictions_total %" PRIu64 "\n",
			    cs.evictions);

	svc_fetcher_stats fs;
	svc_fetcher_get_stats(s->fetcher, &fs);
	family(b, "symbolizer_fetches_total", "counter",
	       "Fetches of build IDs by outcome (store: already held; local: a debug dir; "
	       "upstream: downloaded).");
	evbuffer_add_printf(b,
			    "symbolizer_fetches_total{outcome=\"store\"} %" PRIu64 "\n"
			    "symbolizer_fetches_total{outcome=\"local\"} %" PRIu64 "\n"
			    "symbolizer_fetches_total{outcome=\"upstream\"} %" PRIu64 "\n"
			    "symbolizer_fetches_total{outcome=\"not_found\"} %" PRIu64 "\n"
			    "symbolizer_fetches_total{outcome=\"error\"} %" PRIu64 "\n"
			    "symbolizer_fetches_total{outcome=\"too_large\"} %" PRIu64 "\n",
			    fs.cache_hits, fs.local_hits, fs.upstream_hits, fs.not_found, fs.errors,
			    fs.too_large);
	family(b, "symbolizer_fetches_in_flight", "gauge", "Build IDs being fetched now.");
	evbuffer_add_printf(b, "symbolizer_fetches_in_flight %zu\n", fs.in_flight);

	svc_upstream_stats us[32];
	size_t nu = svc_fetcher_get_upstreams(s->fetcher, us, 32);
	family(b, "symbolizer_upstream_requests_total", "counter",
	       "HTTP requests to upstream debuginfod servers, by server and outcome.");
	for (size_t i = 0; i < nu; i++) {
		const struct {
			const char *name;
			uint64_t v;
		} outcomes[] = {{"ok", us[i].ok},
				{"not_found", us[i].not_found},
				{"too_large", us[i].too_large},
				{"failure", us[i].failures},
				{"rejected", us[i].rejected},
				{"skipped", us[i].skipped}};
		for (size_t k = 0; k < sizeof(outcomes) / sizeof(outcomes[0]); k++) {
			evbuffer_add_printf(b, "symbolizer_upstream_requests_total{server=\"");
			escaped(b, us[i].url);
			evbuffer_add_printf(b, "\",outcome=\"%s\"} %" PRIu64 "\n", outcomes[k].name,
					    outcomes[k].v);
		}
	}
	family(b, "symbolizer_upstream_bytes_total", "counter",
	       "Body bytes received from upstream servers (200 answers).");
	for (size_t i = 0; i < nu; i++) {
		evbuffer_add_printf(b, "symbolizer_upstream_bytes_total{server=\"");
		escaped(b, us[i].url);
		evbuffer_add_printf(b, "\"} %" PRIu64 "\n", us[i].bytes);
	}
	family(b, "symbolizer_upstream_breaker_open", "gauge",
	       "1 while a server's circuit breaker is open (the server is skipped).");
	for (size_t i = 0; i < nu; i++) {
		evbuffer_add_printf(b, "symbolizer_upstream_breaker_open{server=\"");
		escaped(b, us[i].url);
		evbuffer_add_printf(b, "\"} %d\n", us[i].breaker == SVC_BREAKER_OPEN);
	}

	stor_stats ss;
	stor_get_stats(s->store, &ss);
	family(b, "symbolizer_store_bytes", "gauge", "Logical size of everything in the store.");
	evbuffer_add_printf(b, "symbolizer_store_bytes %" PRIu64 "\n", ss.bytes);
	family(b, "symbolizer_store_max_bytes", "gauge", "Bound of the store (0: none).");
	evbuffer_add_printf(b, "symbolizer_store_max_bytes %" PRIu64 "\n", ss.max_bytes);
	family(b, "symbolizer_store_entries", "gauge", "Build IDs with a record in the store.");
	evbuffer_add_printf(b, "symbolizer_store_entries %" PRIu64 "\n", ss.entries);
	family(b, "symbolizer_store_indexes", "gauge", "Build IDs with a stored index.");
	evbuffer_add_printf(b, "symbolizer_store_indexes %" PRIu64 "\n", ss.indexes);
	family(b, "symbolizer_store_evictions_total", "counter",
	       "Store entries evicted to stay under the bound.");
	evbuffer_add_printf(b, "symbolizer_store_evictions_total %" PRIu64 "\n", ss.evictions);

	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	family(b, "symbolizer_uptime_seconds", "gauge", "Seconds since the server started.");
	evbuffer_add_printf(b, "symbolizer_uptime_seconds %.3f\n",
			    (double)(now - s->started_ms) / 1000.0);
}
