// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_behind: the S3 tier's write-behind queue and its counters
 * (svc_s3.h). Fetched debug files and built indexes are copied into a
 * bounded FIFO (--s3-write-behind items); one thread writes them in order.
 * While S3 fails, the head item is retried with a backoff (1 s doubling to
 * 30 s) and the queue waits: when S3 is back it drains. A full queue drops
 * the new item (counted): write-behind is a cache, the source of truth for
 * it is the upstream it came from. The counters are in svc_s3_stats.c.
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>


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
