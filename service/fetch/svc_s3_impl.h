/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_s3_impl: the S3 client's object, shared by its files in service/fetch/
 * only (svc_s3.c: the object; svc_s3_key.c: keys, URLs, signing;
 * svc_s3_request.c: the blocking check and GET; svc_s3_put.c: writes on the
 * fetcher's multi handle; svc_s3_behind.c: the write-behind queue, drained
 * on the loop; svc_s3_auth.c: the credentials' state; svc_s3_stats.c:
 * counters; svc_s3_creds.c: pure helpers; svc_provider_s3.c: reads on the
 * fetcher's multi handle).
 */
#ifndef SVC_S3_IMPL_H
#define SVC_S3_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "service/fetch/svc_s3.h"
#include "service/fetch/svc_upstream_http.h"

struct event;

typedef struct svc_s3_item {
	struct svc_s3_item *next;
	svc_s3_put *op;              /* the object (its copy and checksums) */
} svc_s3_item;

struct svc_s3 {
	svc_s3_settings set;
	char name[400];              /* s3://bucket/prefix */
	char sigv4[96];              /* aws:amz:REGION:s3 */
	char user_agent[128];
	char key[256], secret[256];  /* never shown */
	/* the loop's (svc_s3_attach): the multi handle the writes go on */
	struct event_base *base;
	svc_http *http;
	svc_s3_put *ops;             /* writes in flight (loop only) */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	/* write-behind: a FIFO filled from any thread, drained on the loop
	 * (woken through an eventfd); one object at a time, retried with a
	 * backoff while S3 fails */
	pthread_mutex_t mu;
	svc_s3_item *head, *tail;
	size_t len;
	int wake_fd;                 /* eventfd; -1 until attached */
	struct event *wake_ev, *retry_ev;
	bool writing;                /* the head is being written */
	int64_t backoff_ms;
	/* the credentials' state (svc_s3_auth.c) */
	_Atomic int auth_state;      /* enum svc_s3_auth */
	_Atomic uint64_t auth_failures;
	_Atomic long auth_status;    /* the status that last failed them */
	_Atomic uint64_t puts_ok, puts_failed, put_bytes;
	_Atomic uint64_t behind_queued, behind_written, behind_dropped, behind_retries;
	_Atomic uint64_t gets[4], get_bytes;
};

/* svc_s3_behind.c */
void svc_s3_behind_init(svc_s3 *s3);
bool svc_s3_behind_attach(svc_s3 *s3, svc_error *err);
void svc_s3_behind_detach(svc_s3 *s3);
void svc_s3_behind_free(svc_s3 *s3);
/* svc_s3_put.c: the writes in flight stop, with no callback (svc_s3_detach). */
void svc_s3_put_stop_all(svc_s3 *s3);
/* svc_s3_auth.c */
void svc_s3_log(svc_s3 *s3, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* svc_s3_stats.c */
void svc_s3_count_put(svc_s3 *s3, bool ok, size_t bytes);

#endif
