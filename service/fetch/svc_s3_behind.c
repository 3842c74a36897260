// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_behind: the S3 tier's write-behind queue (svc_s3.h). Fetched debug
 * files and built indexes are copied, with their checksums computed on the
 * caller's thread (a worker), into a bounded FIFO (--s3-write-behind
 * items); the loop, woken through an eventfd, writes them in order, one at
 * a time, on the fetcher's multi handle (svc_s3_put.c). While S3 fails, the
 * head item is retried with a backoff (1 s doubling to 30 s, a loop timer)
 * and the queue waits: when S3 is back it drains. A full queue drops the new
 * item (counted): write-behind is a cache, the source of truth for it is the
 * upstream it came from. The counters are in svc_s3_stats.c.
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdlib.h>
#include <string.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000

static void start_head(svc_s3 *s3);

static void pop_head(svc_s3 *s3)
{
	pthread_mutex_lock(&s3->mu);
	svc_s3_item *it = s3->head;
	s3->head = it->next;
	if (!s3->head)
		s3->tail = NULL;
	s3->len--;
	pthread_mutex_unlock(&s3->mu);
	svc_s3_put_free(it->op);
	free(it);
}

static void written(svc_s3_put *op, void *arg)
{
	svc_s3 *s3 = arg;
	svc_errc rc = svc_s3_put_result(op, NULL);
	s3->writing = false;
	if (rc == SVC_OK || rc == SVC_E_TOO_LARGE || !s3->http) {
		atomic_fetch_add(rc == SVC_OK ? &s3->behind_written : &s3->behind_dropped, 1);
		pop_head(s3);
		s3->backoff_ms = BACKOFF_MIN_MS;
		start_head(s3);
		return;
	}
	atomic_fetch_add(&s3->behind_retries, 1);
	struct timeval tv = {s3->backoff_ms / 1000, (s3->backoff_ms % 1000) * 1000};
	evtimer_add(s3->retry_ev, &tv);
	s3->backoff_ms = s3->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : s3->backoff_ms * 2;
}

/* Loop: the head item's write, unless one is running or waiting to retry. */
static void start_head(svc_s3 *s3)
{
	if (s3->writing || !s3->http || evtimer_pending(s3->retry_ev, NULL))
		return;
	pthread_mutex_lock(&s3->mu);
	svc_s3_item *it = s3->head;
	pthread_mutex_unlock(&s3->mu);
	if (!it)
		return;
	s3->writing = true;
	if (!svc_s3_put_start(it->op, written, s3))
		written(it->op, s3);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	uint64_t n;
	if (read(fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: woken already */
	}
	start_head(arg);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	start_head(arg);
}

void svc_s3_behind_init(svc_s3 *s3)
{
	pthread_mutex_init(&s3->mu, NULL);
	s3->wake_fd = -1;
	s3->backoff_ms = BACKOFF_MIN_MS;
}

bool svc_s3_behind_attach(svc_s3 *s3, svc_error *err)
{
	s3->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s3->wake_fd >= 0)
		s3->wake_ev = event_new(s3->base, s3->wake_fd, EV_READ | EV_PERSIST, on_wake, s3);
	s3->retry_ev = evtimer_new(s3->base, on_retry, s3);
	if (s3->wake_fd < 0 || !s3->wake_ev || !s3->retry_ev || event_add(s3->wake_ev, NULL) != 0)
		return svc_error_set(err, SVC_E_NOMEM, "s3: cannot set up the write-behind queue"),
		       false;
	return true;
}

void svc_s3_behind_detach(svc_s3 *s3)
{
	if (s3->wake_ev)
		event_free(s3->wake_ev);
	if (s3->retry_ev)
		event_free(s3->retry_ev);
	s3->wake_ev = s3->retry_ev = NULL;
	/* The head's write in flight is ended by svc_s3_detach (its callback
	 * sees no multi handle left and drops it). */
}

void svc_s3_behind_free(svc_s3 *s3)
{
	for (svc_s3_item *it = s3->head, *next; it; it = next) {
		next = it->next;
		svc_s3_put_free(it->op);
		free(it);
	}
	s3->head = s3->tail = NULL;
	s3->len = 0;
	if (s3->wake_fd >= 0)
		close(s3->wake_fd);
	s3->wake_fd = -1;
	pthread_mutex_destroy(&s3->mu);
}

bool svc_s3_behind(svc_s3 *s3, const char *key, const uint8_t *data, size_t size)
{
	pthread_mutex_lock(&s3->mu);
	bool full = s3->len >= (size_t)s3->set.write_behind || s3->wake_fd < 0;
	pthread_mutex_unlock(&s3->mu);
	svc_error err = {0};
	svc_s3_item *it = full ? NULL : calloc(1, sizeof(*it));
	if (it && !(it->op = svc_s3_put_new(s3, key, data, size, true, &err))) {
		free(it);
		it = NULL;
	}
	if (!it) {
		atomic_fetch_add(&s3->behind_dropped, 1);
		return false;
	}
	pthread_mutex_lock(&s3->mu);
	if (s3->tail)
		s3->tail->next = it;
	else
		s3->head = it;
	s3->tail = it;
	s3->len++;
	pthread_mutex_unlock(&s3->mu);
	atomic_fetch_add(&s3->behind_queued, 1);
	uint64_t one = 1;
	if (write(s3->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the loop is woken anyway */
	}
	return true;
}
