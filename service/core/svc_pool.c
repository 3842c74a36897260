// SPDX-License-Identifier: Apache-2.0
/*
 * svc_pool: worker threads + an eventfd back to the event loop (svc_pool.h):
 * a worker that finishes the first job of a batch adds 1 to it, the loop
 * reads it once (back to 0) and delivers every finished job.
 */
#include "service/core/svc_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/eventfd.h>

#include <event2/event.h>

struct job {
	void *arg;
	svc_pool_work_fn work;
	svc_pool_done_fn done;
	struct job *next;
};

struct svc_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *q_head, *q_tail;       /* waiting to run */
	struct job *d_head, *d_tail;       /* finished, waiting for the loop */
	bool stop;
	int n_threads;
	pthread_t *threads;
	int wake_fd;   /* eventfd: nonzero while finished jobs wait for the loop */
	struct event *ev;
};

static void push(struct job **head, struct job **tail, struct job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

static void *worker(void *arg)
{
	svc_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->q_head)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		struct job *j = p->q_head;
		p->q_head = j->next;
		if (!p->q_head)
			p->q_tail = NULL;
		pthread_mutex_unlock(&p->mu);
		j->work(j->arg);
		pthread_mutex_lock(&p->mu);
		bool was_empty = !p->d_head;
		push(&p->d_head, &p->d_tail, j);
		if (was_empty) {
			uint64_t one = 1;
			ssize_t w;
			do
				w = write(p->wake_fd, &one, sizeof(one));
			while (w < 0 && errno == EINTR);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* On the loop: deliver every finished job. */
static void drain(svc_pool *p, bool cancelled_unused)
{
	(void)cancelled_unused;
	pthread_mutex_lock(&p->mu);
	uint64_t count;
	ssize_t got;
	do
		got = read(p->wake_fd, &count, sizeof(count));
	while (got < 0 && errno == EINTR);
	struct job *j = p->d_head;
	p->d_head = p->d_tail = NULL;
	pthread_mutex_unlock(&p->mu);
	while (j) {
		struct job *next = j->next;
		j->done(j->arg, false);
		free(j);
		j = next;
	}
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain(arg, false);
}

svc_pool *svc_pool_create(struct event_base *base, int threads)
{
	svc_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wake_fd < 0) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->ev = event_new(base, p->wake_fd, EV_READ | EV_PERSIST, wake_cb, p);
	p->threads = calloc((size_t)threads, sizeof(*p->threads));
	if (!p->ev || !p->threads || event_add(p->ev, NULL) != 0) {
		svc_pool_destroy(p);
		return NULL;
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
			break;
		p->n_threads++;
	}
	if (p->n_threads == 0) {
		svc_pool_destroy(p);
		return NULL;
	}
	return p;
}

bool svc_pool_submit(svc_pool *p, void *arg, svc_pool_work_fn work, svc_pool_done_fn done)
{
	struct job *j = malloc(sizeof(*j));
	if (!j)
		return false;
	j->arg = arg;
	j->work = work;
	j->done = done;
	pthread_mutex_lock(&p->mu);
	if (p->stop) {
		pthread_mutex_unlock(&p->mu);
		free(j);
		return false;
	}
	push(&p->q_head, &p->q_tail, j);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return true;
}

void svc_pool_destroy(svc_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	drain(p, false);
	struct job *j = p->q_head;
	p->q_head = p->q_tail = NULL;
	while (j) {
		struct job *next = j->next;
		j->done(j->arg, true);
		free(j);
		j = next;
	}
	if (p->ev)
		event_free(p->ev);
	close(p->wake_fd);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p);
}
