// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_metrics: the fetcher's Prometheus families (svc_fetcher.h),
 * rendered by the room that owns the counters; the HTTP room joins them into
 * /metrics. Names, labels and HELP texts are what dashboards depend on: keep
 * them byte for byte. One fetcher serves every policy: its counters are the
 * daemon's.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdint.h>

#include "base/base_clock.h"
#include "base/base_expo.h"
#include "service/fetch/svc_s3.h"

static void render_fetches(const svc_fetcher *f, base_buf *b)
{
	svc_fetcher_stats fs;
	svc_fetcher_get_stats(f, &fs);
	base_expo_family(b, "symbolizer_fetches_total", "counter",
			 "Fetches of build IDs by outcome (store: already held; local: a debug dir; "
			 "upstream: downloaded).");
	const struct {
		const char *labels;
		uint64_t v;
	} outcomes[] = {
		{"outcome=\"store\"", fs.cache_hits},   {"outcome=\"local\"", fs.local_hits},
		{"outcome=\"upstream\"", fs.upstream_hits}, {"outcome=\"not_found\"", fs.not_found},
		{"outcome=\"error\"", fs.errors},       {"outcome=\"too_large\"", fs.too_large},
		{"outcome=\"pending\"", fs.pending},
	};
	for (size_t k = 0; k < sizeof(outcomes) / sizeof(outcomes[0]); k++)
		base_expo_u64(b, "symbolizer_fetches_total", outcomes[k].labels, outcomes[k].v);
	base_expo_family(b, "symbolizer_fetches_in_flight", "gauge", "Build IDs being fetched now.");
	base_expo_u64(b, "symbolizer_fetches_in_flight", "", fs.in_flight);
}

/* One sample of a per-server family: name{server="URL"[,extra]} v. */
static void server_sample(base_buf *b, const char *name, const char *url, const char *extra,
			  uint64_t v)
{
	base_buf_printf(b, "%s{server=\"", name);
	base_expo_escape(b, url);
	base_buf_printf(b, "\"%s%s} %llu\n", extra[0] ? "," : "", extra, (unsigned long long)v);
}

static void render_upstreams(const svc_fetcher *f, base_buf *b)
{
	int64_t now = base_mono_ms();
	base_expo_family(b, "symbolizer_upstream_requests_total", "counter",
			 "HTTP requests to upstream debuginfod servers, by server and outcome.");
	for (size_t i = 0; i < f->n_ups; i++) {
		const svc_upstream_stats *s = &f->ups[i].st;
		const struct {
			const char *labels;
			uint64_t v;
		} outcomes[] = {{"outcome=\"ok\"", s->ok},
				{"outcome=\"not_found\"", s->not_found},
				{"outcome=\"too_large\"", s->too_large},
				{"outcome=\"failure\"", s->failures},
				{"outcome=\"rejected\"", s->rejected},
				{"outcome=\"skipped\"", s->skipped}};
		for (size_t k = 0; k < sizeof(outcomes) / sizeof(outcomes[0]); k++)
			server_sample(b, "symbolizer_upstream_requests_total", f->ups[i].url,
				      outcomes[k].labels, outcomes[k].v);
	}
	base_expo_family(b, "symbolizer_upstream_bytes_total", "counter",
			 "Body bytes received from upstream servers (200 answers).");
	for (size_t i = 0; i < f->n_ups; i++)
		server_sample(b, "symbolizer_upstream_bytes_total", f->ups[i].url, "",
			      f->ups[i].st.bytes);
	base_expo_family(b, "symbolizer_upstream_breaker_open", "gauge",
			 "1 while a server's circuit breaker is open (the server is skipped).");
	for (size_t i = 0; i < f->n_ups; i++)
		server_sample(b, "symbolizer_upstream_breaker_open", f->ups[i].url, "",
			      svc_breaker_state_at(&f->ups[i].breaker, now) == SVC_BREAKER_OPEN);
}

/* Appended after the others: the families above keep their order. */
static void render_deferrals(const svc_fetcher *f, base_buf *b)
{
	svc_fetcher_stats fs;
	svc_fetcher_get_stats(f, &fs);
	base_expo_family(b, "symbolizer_fetch_deferrals_total", "counter",
			 "Times a fetch put off a server whose every slot was busy and asked the "
			 "next ones first.");
	base_expo_u64(b, "symbolizer_fetch_deferrals_total", "", fs.deferred);
}

void svc_fetcher_metrics_render(const svc_fetcher *f, base_buf *out)
{
	render_fetches(f, out);
	render_upstreams(f, out);
	render_deferrals(f, out);
	if (f->s3)
		svc_s3_metrics_render(f->s3, out);
}
