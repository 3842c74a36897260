// SPDX-License-Identifier: Apache-2.0
/*
 * svc_layout: the GetTypeLayouts method (svc_layout.h) on the method
 * lifecycle (svc_rpc_flow) and the resolver's resolve-and-wait service
 * (svc_resolve_set, kind SVC_ARTIFACT_LAYOUT): the layout index is the
 * resolver's, this file decodes, waits and answers.
 */
#include "service/layout/svc_layout.h"

#include <stdio.h>
#include <stdlib.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/core/svc_build_id.h"
#include "service/layout/svc_layout_encode.h"
#include "service/resolve/svc_resolve_set.h"
#include "service/rpc/svc_rpc_flow.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct svc_layout {
	svc_layout_options o;
	svc_rpc_flow_conf flow;
};

struct call {
	svc_rpc_flow fl;            /* first: the call's lifecycle (svc_rpc_flow) */
	Symbolizer__V1__GetTypeLayoutsRequest *msg;
	size_t request_bytes;
	svc_resolve_set *set;
	/* The answer. */
	svc_index_entry *entry;     /* OK: the layout index (referenced) */
	int status;
	char error[SYM_ERROR_MSG_MAX];
	uint32_t retry_after_ms;
};

svc_layout *svc_layout_create(const svc_layout_options *o)
{
	svc_layout *ly = calloc(1, sizeof(*ly));
	if (!ly)
		return NULL;
	ly->o = *o;
	/* Answers are encoded on the loop: no pool. */
	ly->flow = (svc_rpc_flow_conf){NULL, o->default_wait_ms, o->max_wait_ms};
	return ly;
}

void svc_layout_destroy(svc_layout *ly)
{
	free(ly);
}

static svc_layout *ly_of(const struct call *c)
{
	return c->fl.method;
}

/* ---- the steps of a call (svc_rpc_flow) ---- */

static void release(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	svc_resolve_set_destroy(c->set);
	svc_resolver_release(ly_of(c)->o.resolver, c->entry);
	if (c->msg)
		symbolizer__v1__get_type_layouts_request__free_unpacked(c->msg, NULL);
}

static bool decode(svc_rpc_flow *fl, const uint8_t *body, size_t len)
{
	struct call *c = (struct call *)fl;
	const svc_layout_options *o = &ly_of(c)->o;
	c->msg = symbolizer__v1__get_type_layouts_request__unpack(NULL, len, body);
	if (!c->msg) {
		svc_error_set(&fl->err, SVC_E_INVALID,
			      "request body is not a valid symbolizer.v1.GetTypeLayoutsRequest");
		return false;
	}
	if (c->msg->n_types + c->msg->n_fields > o->max_queries) {
		svc_error_set(&fl->err, SVC_E_TOO_LARGE, "%zu types and fields: at most %u",
			      c->msg->n_types + c->msg->n_fields, o->max_queries);
		return false;
	}
	c->request_bytes = len;
	fl->asked_wait_ms = c->msg->options ? c->msg->options->max_wait_ms : 0;
	return true;
}

static void set_answer(struct call *c, int status, const char *error, uint32_t retry_ms)
{
	c->status = status;
	snprintf(c->error, sizeof(c->error), "%s", error);
	c->retry_after_ms = retry_ms;
}

/* The resolver's answer for the build ID's layout index. */
static void answer(void *arg, size_t i, const svc_resolve_answer *a)
{
	(void)i;
	struct call *c = arg;
	if (a->pending) {
		set_answer(c, STATUS(PENDING), a->why, a->retry_after_ms);
		return;
	}
	svc_resolution *res = a->res;
	switch (res->status) {
	case SVC_RESOLVE_OK: {
		const svc_layout_artifact *l = res->entry->artifact;
		c->entry = res->entry;
		if (l->layout)
			set_answer(c, STATUS(OK), "", 0);
		else
			set_answer(c, STATUS(NO_SYMBOLS), l->no_layout, 0);
		break;
	}
	case SVC_RESOLVE_NOT_FOUND: set_answer(c, STATUS(NOT_FOUND), res->error, 0); break;
	case SVC_RESOLVE_NO_SYMBOLS: set_answer(c, STATUS(NO_SYMBOLS), res->error, 0); break;
	case SVC_RESOLVE_TOO_LARGE: set_answer(c, STATUS(TOO_LARGE), res->error, 0); break;
	default: set_answer(c, STATUS(ERROR), res->error, 5000); break;
	}
}

static void resolved(void *arg)
{
	svc_rpc_flow_resume(arg);
}

static svc_rpc_flow_wait wait_layout(svc_rpc_flow *fl, int64_t budget_ms, uint64_t *held)
{
	struct call *c = (struct call *)fl;
	svc_layout *ly = ly_of(c);
	sym_build_id id;
	const char *bad = svc_build_id_check(c->msg->build_id, &id);
	if (bad) {
		set_answer(c, STATUS(INVALID), bad, 0);
		return SVC_RPC_FLOW_READY;
	}
	c->set = svc_resolve_set_create(ly->o.base, ly->o.resolver, 1, answer, c);
	if (!c->set) {
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory");
		return SVC_RPC_FLOW_FAILED;
	}
	svc_resolve_set_add(c->set, 0, &id, SVC_ARTIFACT_LAYOUT);
	if (svc_resolve_set_wait(c->set, budget_ms, resolved, c))
		return SVC_RPC_FLOW_READY;
	*held = c->request_bytes + sizeof(*c) + SVC_RESOLVE_SET_WAIT_BYTES;
	return SVC_RPC_FLOW_WAITING;
}

static void work(svc_rpc_flow *fl)
{
	struct call *c = (struct call *)fl;
	const svc_layout_artifact *l = c->entry ? c->entry->artifact : NULL;
	if (!svc_layout_encode(c->msg, l ? l->layout : NULL, c->status, c->error,
			       c->retry_after_ms, svc_rpc_call_response(fl->rpc)))
		svc_error_set(&fl->err, SVC_E_NOMEM, "out of memory packing the response");
}

static const svc_rpc_flow_ops layout_ops = {
	.call_size = sizeof(struct call),
	.decode = decode,
	.wait = wait_layout,
	.stop = NULL,   /* a waiting call fails with shutting_down */
	.work = work,
	.release = release,
};

void svc_layout_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_layout *ly = ctx;
	svc_rpc_flow_run(rpc, &layout_ops, &ly->flow, ly);
}
