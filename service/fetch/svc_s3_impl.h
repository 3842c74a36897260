/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_s3_impl: the S3 client's object, shared by its files in service/fetch/
 * only (svc_s3.c: the object; svc_s3_key.c: keys, URLs, signing;
 * svc_s3_request.c: blocking requests; svc_s3_behind.c: the write-behind
 * queue; svc_s3_stats.c: counters; svc_s3_creds.c: pure helpers;
 * svc_provider_s3.c: reads on the fetcher's multi handle).
 */
#ifndef SVC_S3_IMPL_H
#define SVC_S3_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "service/fetch/svc_s3.h"

typedef struct svc_s3_item {
	struct svc_s3_item *next;
	char key[SVC_S3_KEY_MAX];
	uint8_t *data;
	size_t size;
} svc_s3_item;

struct svc_s3 {
	svc_s3_settings set;
	char name[400];              /* s3://bucket/prefix */
	char sigv4[96];              /* aws:amz:REGION:s3 */
	char user_agent[128];
	char key[256], secret[256];  /* never shown */
	/* write-behind: a FIFO drained by one thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool thread_started, stopping;
	svc_s3_item *head, *tail;
	size_t len;
	_Atomic uint64_t puts_ok, puts_failed, put_bytes;
	_Atomic uint64_t behind_queued, behind_written, behind_dropped, behind_retries;
	_Atomic uint64_t gets[4], get_bytes;
};

/* svc_s3_behind.c */
bool svc_s3_behind_start(svc_s3 *s3, svc_error *err);
void svc_s3_behind_stop(svc_s3 *s3);
/* svc_s3_stats.c */
void svc_s3_count_put(svc_s3 *s3, bool ok, size_t bytes);

#endif
