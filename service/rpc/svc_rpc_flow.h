/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_flow: one method call's lifecycle, the same for every method that
 * waits for work: decode -> limit -> wait -> work (on a worker when big) ->
 * encode -> answer, with one error path. A method gives its steps as an ops
 * table; the flow owns the order, the wait budget (svc_rpc_call_wait_budget_ms
 * from the call's deadline and the request's max_wait_ms), the memory a
 * waiting call holds (svc_rpc_call_wait), the stop hook on shutdown, the
 * worker hop (svc_pool), the encoding (svc_rpc_call_encode), and freeing the
 * call whichever way it ends.
 *
 * What a method waits for is its own: Symbolize, SymbolizeProfile and
 * GetTypeLayouts wait on the resolver's resolve-and-wait service
 * (service/resolve/svc_resolve_set.h), which this room does not know.
 *
 * Loop thread, but the work step (any thread holding the call).
 */
#ifndef SVC_RPC_FLOW_H
#define SVC_RPC_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_error.h"
#include "service/core/svc_pool.h"
#include "service/rpc/svc_rpc.h"

typedef struct svc_rpc_flow svc_rpc_flow;

typedef enum svc_rpc_flow_wait {
	SVC_RPC_FLOW_READY,     /* nothing to wait for: the work runs now */
	SVC_RPC_FLOW_WAITING,   /* the method calls svc_rpc_flow_resume() later, once */
	SVC_RPC_FLOW_FAILED,    /* fl->err says why */
} svc_rpc_flow_wait;

typedef struct svc_rpc_flow_ops {
	size_t call_size;  /* the method's call struct, svc_rpc_flow its first member */
	/* Decode and limits: the request into the call (fl->asked_wait_ms from
	 * its options); false: fl->err says why. The body is dropped afterwards. */
	bool (*decode)(svc_rpc_flow *fl, const uint8_t *body, size_t len);
	/* Starts waiting for what the work needs, for at most budget_ms; when it
	 * waits, *held is the memory the call holds meanwhile. */
	svc_rpc_flow_wait (*wait)(svc_rpc_flow *fl, int64_t budget_ms, uint64_t *held);
	/* Shutdown while the call waits: ends the wait now (the method then calls
	 * svc_rpc_flow_resume). NULL: the call fails with shutting_down. */
	void (*stop)(svc_rpc_flow *fl);
	/* Whether the work goes to the pool (asked only when there is one). NULL: never. */
	bool (*on_worker)(svc_rpc_flow *fl);
	/* The work: appends the response to svc_rpc_call_response(); fl->err on
	 * failure. On the loop or a worker; the flow encodes afterwards. */
	void (*work)(svc_rpc_flow *fl);
	/* On the loop after the work succeeded, before the answer: may set
	 * fl->err to answer that error instead (OTLP's Export: the forward
	 * queue is full). NULL: nothing. */
	void (*before_answer)(svc_rpc_flow *fl);
	/* The call was answered OK before its deadline: its figures. NULL: none. */
	void (*answered)(svc_rpc_flow *fl);
	/* Lets go of what the method's call holds (not the call itself). NULL: nothing. */
	void (*release)(svc_rpc_flow *fl);
} svc_rpc_flow_ops;

typedef struct svc_rpc_flow_conf {
	svc_pool *pool;            /* the work of big calls (NULL: on the loop) */
	int64_t default_wait_ms;   /* a call's wait when the request says nothing */
	int64_t max_wait_ms;       /* cap on the request's max_wait_ms */
} svc_rpc_flow_conf;

struct svc_rpc_flow {
	svc_rpc_call *rpc;
	const svc_rpc_flow_ops *ops;
	const svc_rpc_flow_conf *conf;
	void *method;              /* the method's context (the handler's ctx) */
	int64_t asked_wait_ms;     /* set by decode: the request's max_wait_ms (0: default) */
	bool waiting;
	svc_error err;
};

/* Runs a call through the steps of ops: a method's handler in one line. */
void svc_rpc_flow_run(svc_rpc_call *rpc, const svc_rpc_flow_ops *ops,
		      const svc_rpc_flow_conf *conf, void *method);

/* The wait ended (the method's wait answered everything, or gave up). */
void svc_rpc_flow_resume(svc_rpc_flow *fl);

#endif
