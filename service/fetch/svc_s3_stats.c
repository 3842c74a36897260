// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_stats: the S3 client's counters (atomic: any thread counts) and
 * their Prometheus families (svc_s3.h). A leaf.
 */
#include "service/fetch/svc_s3_impl.h"

#include <string.h>

#include "base/base_expo.h"

void svc_s3_count_put(svc_s3 *s3, bool ok, size_t bytes)
{
	atomic_fetch_add(ok ? &s3->puts_ok : &s3->puts_failed, 1);
	if (ok)
		atomic_fetch_add(&s3->put_bytes, bytes);
}

void svc_s3_count_get(svc_s3 *s3, int what, uint64_t bytes)
{
	if (what >= SVC_S3_GET_OK && what <= SVC_S3_GET_BAD)
		atomic_fetch_add(&s3->gets[what], 1);
	if (what == SVC_S3_GET_OK)
		atomic_fetch_add(&s3->get_bytes, bytes);
}

void svc_s3_get_stats(const svc_s3 *s3, svc_s3_stats *o)
{
	svc_s3 *m = (svc_s3 *)s3;
	memset(o, 0, sizeof(*o));
	o->puts_ok = atomic_load(&m->puts_ok);
	o->puts_failed = atomic_load(&m->puts_failed);
	o->put_bytes = atomic_load(&m->put_bytes);
	o->behind_queued = atomic_load(&m->behind_queued);
	o->behind_written = atomic_load(&m->behind_written);
	o->behind_dropped = atomic_load(&m->behind_dropped);
	o->behind_retries = atomic_load(&m->behind_retries);
	o->gets_ok = atomic_load(&m->gets[SVC_S3_GET_OK]);
	o->gets_missing = atomic_load(&m->gets[SVC_S3_GET_MISSING]);
	o->gets_failed = atomic_load(&m->gets[SVC_S3_GET_FAILED]);
	o->gets_bad = atomic_load(&m->gets[SVC_S3_GET_BAD]);
	o->get_bytes = atomic_load(&m->get_bytes);
	pthread_mutex_lock(&m->mu);
	o->behind_len = m->len;
	pthread_mutex_unlock(&m->mu);
}

void svc_s3_metrics_render(const svc_s3 *s3, base_buf *b)
{
	svc_s3_stats st;
	svc_s3_get_stats(s3, &st);
	base_expo_family(b, "symbolizer_s3_puts_total", "counter",
			 "Objects written to the S3 tier (and verified), by result.");
	base_expo_u64(b, "symbolizer_s3_puts_total", "result=\"ok\"", st.puts_ok);
	base_expo_u64(b, "symbolizer_s3_puts_total", "result=\"failed\"", st.puts_failed);
	base_expo_family(b, "symbolizer_s3_gets_total", "counter",
			 "Reads from the S3 tier by result (bad: a size or checksum that did not "
			 "match, never served).");
	const struct {
		const char *l;
		uint64_t v;
	} g[] = {{"result=\"ok\"", st.gets_ok},
		 {"result=\"missing\"", st.gets_missing},
		 {"result=\"failed\"", st.gets_failed},
		 {"result=\"bad\"", st.gets_bad}};
	for (size_t i = 0; i < 4; i++)
		base_expo_u64(b, "symbolizer_s3_gets_total", g[i].l, g[i].v);
	base_expo_family(b, "symbolizer_s3_bytes_total", "counter", "Body bytes to and from S3.");
	base_expo_u64(b, "symbolizer_s3_bytes_total", "direction=\"put\"", st.put_bytes);
	base_expo_u64(b, "symbolizer_s3_bytes_total", "direction=\"get\"", st.get_bytes);
	base_expo_family(b, "symbolizer_s3_write_behind_total", "counter",
			 "Write-behind objects by event (queued, written, dropped, retries).");
	base_expo_u64(b, "symbolizer_s3_write_behind_total", "event=\"queued\"", st.behind_queued);
	base_expo_u64(b, "symbolizer_s3_write_behind_total", "event=\"written\"", st.behind_written);
	base_expo_u64(b, "symbolizer_s3_write_behind_total", "event=\"dropped\"", st.behind_dropped);
	base_expo_u64(b, "symbolizer_s3_write_behind_total", "event=\"retry\"", st.behind_retries);
	long last = 0;
	uint64_t refusals = 0;
	svc_s3_auth a = svc_s3_auth_state(s3, &last, &refusals);
	base_expo_family(b, "symbolizer_s3_auth_failures_total", "counter",
			 "S3 answers that refused the credentials (HTTP 401 or 403).");
	base_expo_u64(b, "symbolizer_s3_auth_failures_total", "", refusals);
	base_expo_family(b, "symbolizer_s3_credentials_ok", "gauge",
			 "1 while S3 takes the credentials, 0 once it refuses them (until a "
			 "request succeeds again).");
	base_expo_u64(b, "symbolizer_s3_credentials_ok", "", a == SVC_S3_AUTH_OK);
	base_expo_family(b, "symbolizer_s3_write_behind_queued", "gauge",
			 "Objects waiting in the write-behind queue.");
	base_expo_u64(b, "symbolizer_s3_write_behind_queued", "", st.behind_len);
}
