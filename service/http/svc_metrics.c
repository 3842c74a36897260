/*
 * svc_metrics: the HTTP room's counters and the /metrics assembler
 * (svc_metrics.h). Every family has HELP and TYPE lines; counters end in
 * _total; label values are escaped as the format requires (base_expo).
 * Checked by `promtool check metrics` in the integration tests; the names,
 * labels and order are what dashboards read, so they do not change.
 */
#include "service/http/svc_metrics.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/base_clock.h"
#include "base/base_expo.h"
#include "service/http/svc_server_impl.h"

void svc_metrics_init(svc_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->started_ms = base_mono_ms();
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

void svc_metrics_render_http(const svc_metrics *m, base_buf *b)
{
	char labels[128];
	base_expo_family(b, "symbolizer_http_requests_total", "counter",
			 "HTTP replies by handler and status code.");
	for (unsigned i = 0; i < m->n_http; i++) {
		snprintf(labels, sizeof(labels), "handler=\"%s\",code=\"%d\"", m->http[i].handler,
			 m->http[i].status);
		base_expo_u64(b, "symbolizer_http_requests_total", labels, m->http[i].count);
	}
}

void svc_metrics_render_uptime(const svc_metrics *m, base_buf *b)
{
	base_expo_family(b, "symbolizer_uptime_seconds", "gauge", "Seconds since the server started.");
	base_expo_double(b, "symbolizer_uptime_seconds", "",
			 (double)(base_mono_ms() - m->started_ms) / 1000.0);
}

/*
 * ---- families of other rooms, still rendered here ----
 *
 * Each function below renders one owner's families, reading its stats as it
 * always did; each is to be replaced by a call to its owner's own render
 * function (the resolver, the index cache, the fetcher, the store), in the
 * same place of svc_metrics_render.
 */

/* TODO(owner: service/resolve/svc_resolver): tiers, resolutions, index builds, rechecks. */
static void render_resolver_families_TODO_OWNER(svc_server *s, base_buf *b)
{
	const svc_resolver_stats *rs = svc_resolver_get_stats(s->resolver);
	const char *const name = "symbolizer_cache_requests_total";
	base_expo_family(b, name, "counter",
			 "Lookups of a build ID in each tier (memory, store_index, store_file) by "
			 "result.");
	base_expo_u64(b, name, "tier=\"memory\",result=\"hit\"", rs->memory_hits);
	base_expo_u64(b, name, "tier=\"memory\",result=\"miss\"", rs->memory_misses);
	base_expo_u64(b, name, "tier=\"negative\",result=\"hit\"", rs->negative_hits);
	base_expo_u64(b, name, "tier=\"store_index\",result=\"hit\"", rs->store_index_hits);
	base_expo_u64(b, name, "tier=\"store_index\",result=\"miss\"", rs->store_index_misses);
	base_expo_u64(b, name, "tier=\"store_file\",result=\"hit\"", rs->store_file_hits);
	base_expo_u64(b, name, "tier=\"store_file\",result=\"miss\"", rs->source_fetches);
	base_expo_family(b, "symbolizer_resolutions_in_flight", "gauge",
			 "Build IDs being loaded, fetched or indexed now.");
	base_expo_u64(b, "symbolizer_resolutions_in_flight", "", rs->in_flight);
	base_expo_family(b, "symbolizer_index_builds_total", "counter", "Index builds by result.");
	base_expo_u64(b, "symbolizer_index_builds_total", "result=\"ok\"", rs->builds_ok);
	base_expo_u64(b, "symbolizer_index_builds_total", "result=\"failed\"", rs->builds_failed);
	base_expo_family(b, "symbolizer_index_build_duration_seconds", "histogram",
			 "Wall time of index builds (reading the debug info from the store "
			 "included).");
	base_expo_histogram(b, "symbolizer_index_build_duration_seconds", "", &rs->build_seconds);
	base_expo_family(b, "symbolizer_stored_index_rejected_total", "counter",
			 "Stored indexes of another format version or damaged, rebuilt.");
	base_expo_u64(b, "symbolizer_stored_index_rejected_total", "", rs->stored_index_rejected);
	base_expo_family(b, "symbolizer_debuginfo_rechecks_total", "counter",
			 "Background searches for the debug info of indexes built from an "
			 "executable alone, by result (found: the index was rebuilt with it).");
	base_expo_u64(b, "symbolizer_debuginfo_rechecks_total", "result=\"started\"", rs->rechecks);
	base_expo_u64(b, "symbolizer_debuginfo_rechecks_total", "result=\"found\"", rs->upgrades);
}

/* TODO(owner: service/resolve/svc_index_cache): the loaded indexes. */
static void render_index_cache_families_TODO_OWNER(svc_server *s, base_buf *b)
{
	svc_index_cache_stats cs;
	svc_index_cache_get_stats(s->cache, &cs);
	base_expo_family(b, "symbolizer_index_cache_bytes", "gauge",
			 "Bytes of the loaded indexes in memory.");
	base_expo_u64(b, "symbolizer_index_cache_bytes", "", cs.bytes);
	base_expo_family(b, "symbolizer_index_cache_max_bytes", "gauge", "Bound of the index cache.");
	base_expo_u64(b, "symbolizer_index_cache_max_bytes", "", cs.max_bytes);
	base_expo_family(b, "symbolizer_index_cache_entries", "gauge", "Indexes loaded in memory.");
	base_expo_u64(b, "symbolizer_index_cache_entries", "", cs.entries);
	base_expo_family(b, "symbolizer_index_cache_evictions_total", "counter",
			 "Indexes dropped from memory to stay under the bound.");
	base_expo_u64(b, "symbolizer_index_cache_evictions_total", "", cs.evictions);
}

/* TODO(owner: storage/stor_db): the store. */
static void render_store_families_TODO_OWNER(svc_server *s, base_buf *b)
{
	stor_stats ss;
	stor_get_stats(s->store, &ss);
	base_expo_family(b, "symbolizer_store_bytes", "gauge",
			 "Logical size of everything in the store.");
	base_expo_u64(b, "symbolizer_store_bytes", "", ss.bytes);
	base_expo_family(b, "symbolizer_store_max_bytes", "gauge", "Bound of the store (0: none).");
	base_expo_u64(b, "symbolizer_store_max_bytes", "", ss.max_bytes);
	base_expo_family(b, "symbolizer_store_entries", "gauge",
			 "Build IDs with a record in the store.");
	base_expo_u64(b, "symbolizer_store_entries", "", ss.entries);
	base_expo_family(b, "symbolizer_store_indexes", "gauge", "Build IDs with a stored index.");
	base_expo_u64(b, "symbolizer_store_indexes", "", ss.indexes);
	base_expo_family(b, "symbolizer_store_evictions_total", "counter",
			 "Store entries evicted to stay under the bound.");
	base_expo_u64(b, "symbolizer_store_evictions_total", "", ss.evictions);
}

/* ---- the exposition ---- */

bool svc_metrics_render(struct svc_server *s, struct evbuffer *out)
{
	base_buf b;
	base_buf_init(&b, SIZE_MAX);
	svc_rpc_render_metrics(s->rpc, &b);
	svc_metrics_render_http(&s->metrics, &b);
	svc_symbolize_render_metrics(s->symbolize, &b);
	svc_rpc_render_calls(s->rpc, &b);
	render_resolver_families_TODO_OWNER(s, &b);
	render_index_cache_families_TODO_OWNER(s, &b);
	svc_fetcher_metrics_render(s->fetcher, &b);
	render_store_families_TODO_OWNER(s, &b);
	svc_metrics_render_uptime(&s->metrics, &b);
	bool ok = !b.nomem && !b.over && evbuffer_add(out, b.data, b.len) == 0;
	base_buf_deinit(&b);
	return ok;
}
