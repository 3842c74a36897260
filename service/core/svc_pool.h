/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_pool: worker threads of the service. Jobs that block or take long run
 * here: the fetcher's local file reads, ELF checks and store writes, index
 * builds, and the lookups of big Symbolize batches. Their completion is
 * handed back to the event loop through an eventfd, so the loop never waits on a
 * disk and never needs libevent's thread support.
 */
#ifndef SVC_POOL_H
#define SVC_POOL_H

#include <stdbool.h>

struct event_base;
typedef struct svc_pool svc_pool;

/* work runs on a worker thread; done runs afterwards on the loop's thread. */
typedef void (*svc_pool_work_fn)(void *job);
typedef void (*svc_pool_done_fn)(void *job, bool cancelled);

svc_pool *svc_pool_create(struct event_base *base, int threads);

/* Queues a job (FIFO). False when out of memory or shutting down. */
bool svc_pool_submit(svc_pool *p, void *job, svc_pool_work_fn work, svc_pool_done_fn done);

/* Lets running jobs finish, then calls done(job, true) for jobs that never ran
 * and done(job, false) for finished ones not yet delivered. NULL is a no-op. */
void svc_pool_destroy(svc_pool *p);

#endif
