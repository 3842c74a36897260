// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_behind: the S3 tier's write-behind queue and its counters
 * (svc_s3.h). Fetched debug files and built indexes are copied into a
 * bounded FIFO (--s3-write-behind items); one thread writes them in order.
 * While S3 fails, the head item is retried with a backoff (1 s doubling to
 * 30 s) and the queue waits: when S3 is back it drains. A full queue drops
 * the new item (counted): write-behind is a cache, the source of truth for
 * it is the upstream it came from.
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base_expo.h"

static void wait_ms(svc_s3 *s3, int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&s3->cv, &s3->mu, &ts);
}

static void *drain(void *arg)
{
	svc_s3 *s3 = arg;
	int64_t backoff = 1000;
	pthread_mutex_lock(&s3->mu);
	while (!s3->stopping) {
		svc_s3_item *it = s3->head;
		if (!it) {
			pthread_cond_wait(&s3->cv, &s3->mu);
			continue;
		}
		pthread_mutex_unlock(&s3->mu);
		svc_error err = {0};
		bool ok = svc_s3_put(s3, it->key, it->data, it->size, &err) == SVC_OK;
		pthread_mutex_lock(&s3->mu);
		if (ok || err.code == SVC_E_TOO_LARGE) {
			s3->head = it->next;
			if (!s3->head)
				s3->tail = NULL;
			s3->len--;
			free(it->data);
			free(it);
			atomic_fetch_add(ok ? &s3->behind_written : &s3->behind_dropped, 1);
			backoff = 1000;
			continue;
		}
		atomic_fetch_add(&s3->behind_retries, 1);
		if (!s3->stopping)
			wait_ms(s3, backoff);
		backoff = backoff * 2 > 30000 ? 30000 : backoff * 2;
	}
	pthread_mutex_unlock(&s3->mu);
	return NULL;
}

bool svc_s3_behind_start(svc_s3 *s3, svc_error *err)
{
	pthread_mutex_init(&s3->mu, NULL);
	pthread_cond_init(&s3->cv, NULL);
	if (pthread_create(&s3->thread, NULL, drain, s3) != 0)
		return svc_error_set(err, SVC_E_NOMEM, "s3: cannot start the write-behind thread"),
		       false;
	s3->thread_started = true;
	return true;
}

void svc_s3_behind_stop(svc_s3 *s3)
{
	if (s3->thread_started) {
		pthread_mutex_lock(&s3->mu);
		s3->stopping = true;
		pthread_cond_broadcast(&s3->cv);
		pthread_mutex_unlock(&s3->mu);
		pthread_join(s3->thread, NULL);
		s3->thread_started = false;
	}
	for (svc_s3_item *it = s3->head, *next; it; it = next) {
		next = it->next;
		free(it->data);
		free(it);
	}
	s3->head = s3->tail = NULL;
	pthread_mutex_destroy(&s3->mu);
	pthread_cond_destroy(&s3->cv);
}

bool svc_s3_behind(svc_s3 *s3, const char *key, const uint8_t *data, size_t size)
{
	svc_s3_item *it = calloc(1, sizeof(*it));
	uint8_t *copy = size ? malloc(size) : NULL;
	bool full;
	pthread_mutex_lock(&s3->mu);
	full = s3->len >= (size_t)s3->set.write_behind;
	pthread_mutex_unlock(&s3->mu);
	if (!it || (size && !copy) || full || strlen(key) >= sizeof(it->key)) {
		free(it);
		free(copy);
		atomic_fetch_add(&s3->behind_dropped, 1);
		return false;
	}
	memcpy(copy, data, size);
	memcpy(it->key, key, strlen(key) + 1);
	it->data = copy;
	it->size = size;
	pthread_mutex_lock(&s3->mu);
	if (s3->tail)
		s3->tail->next = it;
	else
		s3->head = it;
	s3->tail = it;
	s3->len++;
	pthread_cond_signal(&s3->cv);
	pthread_mutex_unlock(&s3->mu);
	atomic_fetch_add(&s3->behind_queued, 1);
	return true;
}

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
	base_expo_family(b, "symbolizer_s3_write_behind_queued", "gauge",
			 "Objects waiting in the write-behind queue.");
	base_expo_u64(b, "symbolizer_s3_write_behind_queued", "", st.behind_len);
}
