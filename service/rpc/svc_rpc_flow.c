// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_flow: a method call's lifecycle (svc_rpc_flow.h): the one order of
 * its steps and its one error path.
 */
#include "service/rpc/svc_rpc_flow.h"

#include <stdlib.h>

/* After the answer: lets go of what the call holds. */
static void flow_free(svc_rpc_flow *fl)
{
	if (fl->ops->release)
		fl->ops->release(fl);
	free(fl);
}

/* The one error path: answers with fl->err and ends the call. */
static void fail(svc_rpc_flow *fl)
{
	svc_rpc_call_fail(fl->rpc, &fl->err);
	flow_free(fl);
}

static void work_job(void *arg)
{
	svc_rpc_flow *fl = arg;
	fl->ops->work(fl);
	if (fl->err.code == SVC_OK && !svc_rpc_call_encode(fl->rpc))
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory packing the response");
}

static void work_done(void *arg, bool cancelled)
{
	svc_rpc_flow *fl = arg;
	if (cancelled)
		svc_error_set(&fl->err, SVC_E_SHUTTING_DOWN, "server shutting down");
	if (fl->err.code == SVC_OK && fl->ops->before_answer)
		fl->ops->before_answer(fl);
	if (fl->err.code != SVC_OK) {
		fail(fl);
		return;
	}
	/* Counted when answered (not when the deadline passed first). */
	if (svc_rpc_call_ok(fl->rpc) && fl->ops->answered)
		fl->ops->answered(fl);
	flow_free(fl);
}

void svc_rpc_flow_resume(svc_rpc_flow *fl)
{
	fl->waiting = false;
	svc_pool *pool = fl->conf->pool;
	if (pool && fl->ops->on_worker && fl->ops->on_worker(fl) &&
	    svc_pool_submit(pool, fl, work_job, work_done))
		return;
	work_job(fl);
	work_done(fl, false);
}

/* On shutdown: a waiting call answers now. */
static void stop_hook(void *arg)
{
	svc_rpc_flow *fl = arg;
	if (!fl->waiting)
		return;
	if (fl->ops->stop) {
		fl->ops->stop(fl);  /* resumes: may free fl */
		return;
	}
	svc_error_set(&fl->err, SVC_E_SHUTTING_DOWN, "server shutting down");
	fail(fl);
}

void svc_rpc_flow_run(svc_rpc_call *rpc, const svc_rpc_flow_ops *ops,
		      const svc_rpc_flow_conf *conf, void *method)
{
	svc_rpc_flow *fl = calloc(1, ops->call_size);
	if (!fl) {
		svc_rpc_call_failf(rpc, SVC_E_NOMEM, "out of memory");
		return;
	}
	fl->rpc = rpc;
	fl->ops = ops;
	fl->conf = conf;
	fl->method = method;
	svc_rpc_call_on_stop(rpc, stop_hook, fl);
	size_t len;
	const uint8_t *body = svc_rpc_call_body(rpc, &len);
	bool ok = ops->decode(fl, body, len);
	svc_rpc_call_drop_body(rpc);
	if (!ok) {
		fail(fl);
		return;
	}
	int64_t budget = svc_rpc_call_wait_budget_ms(rpc, fl->asked_wait_ms, conf->default_wait_ms,
						     conf->max_wait_ms);
	uint64_t held = 0;
	switch (ops->wait(fl, budget, &held)) {
	case SVC_RPC_FLOW_READY:
		svc_rpc_flow_resume(fl);
		return;
	case SVC_RPC_FLOW_FAILED:
		fail(fl);
		return;
	case SVC_RPC_FLOW_WAITING:
		break;
	}
	fl->waiting = true;
	if (!svc_rpc_call_wait(rpc, held)) {
		/* The work goes on without it: a retry finds it done. */
		svc_rpc_call_fail_waiting(rpc, held);
		flow_free(fl);  /* the method's wait ends, without resuming */
	}
}
