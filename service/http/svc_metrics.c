// SPDX-License-Identifier: Apache-2.0
/*
 * svc_metrics: the HTTP room's counters and the /metrics assembler
 * (svc_metrics.h). Every family has HELP and TYPE lines; counters end in
 * _total; label values are escaped as the format requires (base_expo).
 * Checked by `promtool check metrics` in the integration tests; the names,
 * labels and lines of a family are what dashboards read, so they do not
 * change.
 */
#include "service/http/svc_metrics.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/base_clock.h"
#include "base/base_expo.h"
#include "service/http/svc_h2_impl.h"
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

/* ---- the exposition ---- */

/* Each room renders the families it owns: the RPC handler's and the HTTP
 * room's, then the rooms' in table order, then the shared tier's. */
bool svc_metrics_render(struct svc_server *s, struct evbuffer *out)
{
	base_buf b;
	base_buf_init(&b, SIZE_MAX);
	svc_rpc_render_metrics(s->rpc, &b);
	svc_metrics_render_http(&s->metrics, &b);
	svc_conns_render_metrics(s->conns, &b);
	if (s->h2)
		svc_h2_render_metrics(s->h2, &b);
	svc_room_set_render_metrics(&s->rooms, &b);
	svc_rpc_render_calls(s->rpc, &b);
	svc_resolver_metrics_render(s->resolver, &b);
	svc_index_cache_metrics_render(s->cache, &b);
	svc_fetcher_metrics_render(s->fetcher, &b);
	if (s->packages)
		svc_packages_metrics_render(s->packages, &b);
	stor_db_metrics_render(s->store, &b);
	svc_metrics_render_uptime(&s->metrics, &b);
	bool ok = !b.nomem && !b.over && evbuffer_add(out, b.data, b.len) == 0;
	base_buf_deinit(&b);
	return ok;
}
