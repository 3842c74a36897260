/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_fixture: the generic Connect handler (service/rpc/svc_rpc) serving a
 * table of test-only methods on a real evhttp server on 127.0.0.1 (port 0),
 * its loop on a thread of its own, and a libcurl client for it; shared by
 * test_svc_rpc (the handler) and test_svc_client (symbolctl's client). The
 * methods:
 *   Echo    answers its body, at once
 *   Fail    fails with the svc_errc given as the body's first byte
 *   Late    answers its body 150 ms later (a timer on the loop)
 *   Worker  answers its body, packed and compressed on a pool worker
 *   Hang    answers when the server shuts down (its stop hook); it starts
 *           the shutdown itself, 30 ms later
 * and the routes /metrics (the RPC families) and /quit.
 */
#ifndef RPC_FIXTURE_H
#define RPC_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/base_buf.h"
#include "service/core/svc_pool.h"
#include "service/rpc/svc_rpc.h"

typedef struct fixture {
	struct event_base *base;
	struct evhttp *http;
	svc_pool *pool;
	svc_rpc *rpc;
	int port;
	pthread_t thread;
} fixture;

/* One answer: status, the headers the tests read, the body (NUL after len). */
typedef struct reply {
	long status;
	char ctype[128], cenc[64], allow[64];
	base_buf body;
} reply;

bool fixture_start(fixture *f);
void fixture_stop(fixture *f);

/* A request to path (POST when body is not NULL) with extra header lines. */
bool request(const fixture *f, const char *path, const void *body, size_t n,
	     const char *const *headers, reply *r);

#endif
