// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload_should: the ShouldUpload method (svc_upload.h). Each build ID is
 * asked of the fetcher (store, local dirs, upstreams, with its single flight
 * and negative cache: asking fetches what a source has into the store). The
 * call waits up to its wait budget (Options.max_wait_ms or --default-wait,
 * within Connect-Timeout-Ms, as Symbolize), then answers; a build ID whose
 * search goes on answers PENDING with a retry hint. Answers: PRESENT when the
 * server holds debug info (or the executable, when that is all the agent
 * offers), UPLOAD when nothing as good is found or the sources failed (an
 * upload is checked like any file, so asking for it is cheap), TOO_LARGE when
 * a source has it over the size cap, INVALID for a malformed build ID.
 */
#include "service/upload/svc_upload_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/core/svc_build_id.h"

#define ANSWER(x) SYMBOLIZER__V1__UPLOAD_DECISION__ANSWER__ANSWER_##x
#define PENDING_RETRY_MS 1000

struct call;

struct cand {
	struct call *c;
	int answer;
	bool offers_executable;
	char reason[SYM_ERROR_MSG_MAX + STOR_SOURCE_MAX + 64];
};

struct call {
	svc_upload *u;
	svc_rpc_call *rpc;           /* NULL once answered */
	Symbolizer__V1__ShouldUploadRequest *msg;
	struct cand *cands;
	size_t waiting;              /* fetches not answered yet */
	size_t refs;                 /* the call itself + each fetch callback owed */
	struct event *timer;
};

static void call_put(struct call *c)
{
	if (--c->refs)
		return;
	if (c->timer)
		event_free(c->timer);
	if (c->msg)
		symbolizer__v1__should_upload_request__free_unpacked(c->msg, NULL);
	free(c->cands);
	free(c);
}

/* Answers with what is known; the searches still running answer PENDING. */
static void answer(struct call *c)
{
	if (!c->rpc)
		return;
	size_t n = c->msg->n_candidates;
	Symbolizer__V1__UploadDecision *d = calloc(n ? n : 1, sizeof(*d));
	Symbolizer__V1__UploadDecision **dp = calloc(n ? n : 1, sizeof(*dp));
	if (!d || !dp) {
		svc_rpc_call_failf(c->rpc, SVC_E_NOMEM, "out of memory");
	} else {
		for (size_t i = 0; i < n; i++) {
			Symbolizer__V1__UploadDecision x = SYMBOLIZER__V1__UPLOAD_DECISION__INIT;
			x.build_id = c->msg->candidates[i]->build_id;
			x.answer = c->cands[i].answer ? c->cands[i].answer : ANSWER(PENDING);
			x.reason = c->cands[i].answer ? c->cands[i].reason : (char *)"searching";
			x.retry_after_ms = x.answer == ANSWER(PENDING) ? PENDING_RETRY_MS : 0;
			d[i] = x;
			dp[i] = &d[i];
			if ((int)x.answer < SHOULD_ANSWERS)
				c->u->should[x.answer]++;
		}
		Symbolizer__V1__ShouldUploadResponse r = SYMBOLIZER__V1__SHOULD_UPLOAD_RESPONSE__INIT;
		r.n_decisions = n;
		r.decisions = dp;
		size_t len = symbolizer__v1__should_upload_response__get_packed_size(&r);
		uint8_t *buf = malloc(len ? len : 1);
		if (buf && (len == 0 || symbolizer__v1__should_upload_response__pack(&r, buf) == len) &&
		    evbuffer_add(svc_rpc_call_response(c->rpc), buf, len) == 0)
			svc_rpc_call_ok(c->rpc);
		else
			svc_rpc_call_failf(c->rpc, SVC_E_NOMEM, "out of memory packing the response");
		free(buf);
	}
	free(d);
	free(dp);
	c->rpc = NULL;
	call_put(c);
}

static void decide(struct cand *k, const svc_fetch_result *res)
{
	switch (res->status) {
	case SVC_FETCH_OK:
		if (res->kind == STOR_KIND_DEBUGINFO || k->offers_executable) {
			k->answer = ANSWER(PRESENT);
			snprintf(k->reason, sizeof(k->reason), "held: %s from %s",
				 stor_kind_name(res->kind), res->source);
		} else {
			k->answer = ANSWER(UPLOAD);
			snprintf(k->reason, sizeof(k->reason), "only the executable is known (%s)",
				 res->error[0] ? res->error : "no debug info found");
		}
		break;
	case SVC_FETCH_PENDING:  /* a package scan under way may still bring it */
		k->answer = ANSWER(PENDING);
		snprintf(k->reason, sizeof(k->reason), "%s", res->error);
		break;
	case SVC_FETCH_TOO_LARGE:
		k->answer = ANSWER(TOO_LARGE);
		snprintf(k->reason, sizeof(k->reason), "%s", res->error);
		break;
	default:
		k->answer = ANSWER(UPLOAD);
		snprintf(k->reason, sizeof(k->reason), "%s: %s", svc_fetch_status_name(res->status),
			 res->error[0] ? res->error : "not found anywhere");
		break;
	}
}

static void fetched(const svc_fetch_result *res, void *arg)
{
	struct cand *k = arg;
	struct call *c = k->c;
	decide(k, res);
	c->waiting--;
	if (c->waiting == 0)
		answer(c);
	call_put(c);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	answer(arg);
}

static void stop_hook(void *arg)
{
	answer(arg);
}

/* Starts the search of candidate i, or answers it now. */
static void ask(struct call *c, size_t i)
{
	const Symbolizer__V1__UploadCandidate *in = c->msg->candidates[i];
	struct cand *k = &c->cands[i];
	k->c = c;
	k->offers_executable = in->kind == SYMBOLIZER__V1__UPLOAD_KIND__UPLOAD_KIND_EXECUTABLE;
	sym_build_id id;
	const char *bad = svc_build_id_check_kind(in->build_id_kind, in->build_id, &id);
	if (bad) {
		k->answer = ANSWER(INVALID);
		snprintf(k->reason, sizeof(k->reason), "%s", bad);
		return;
	}
	svc_errc e = svc_fetch_start(c->u->o.fetcher, &id, SVC_FETCH_SYMBOLS,
				     SVC_FETCH_POLICY_FULL, fetched, k);
	if (e == SVC_OK) {
		c->waiting++;
		c->refs++;
	}  /* else: PENDING (busy or stopping) */
}

void svc_upload_should_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_upload *u = ctx;
	struct call *c = calloc(1, sizeof(*c));
	size_t len;
	const uint8_t *body = svc_rpc_call_body(rpc, &len);
	if (!c) {
		svc_rpc_call_failf(rpc, SVC_E_NOMEM, "out of memory");
		return;
	}
	*c = (struct call){.u = u, .rpc = rpc, .refs = 1};
	c->msg = symbolizer__v1__should_upload_request__unpack(NULL, len, body);
	svc_rpc_call_drop_body(rpc);
	if (!c->msg) {
		svc_rpc_call_failf(rpc, SVC_E_INVALID,
				   "request body is not a valid symbolizer.v1.ShouldUploadRequest");
		return call_put(c);
	}
	size_t n = c->msg->n_candidates;
	if (n > u->o.max_candidates) {
		svc_rpc_call_failf(rpc, SVC_E_TOO_LARGE, "%zu candidates: at most %u", n,
				   u->o.max_candidates);
		return call_put(c);
	}
	if (!(c->cands = calloc(n ? n : 1, sizeof(*c->cands)))) {
		svc_rpc_call_failf(rpc, SVC_E_NOMEM, "out of memory");
		return call_put(c);
	}
	svc_rpc_call_on_stop(rpc, stop_hook, c);
	for (size_t i = 0; i < n; i++)
		ask(c, i);
	if (c->waiting == 0)
		return answer(c);
	const Symbolizer__V1__Options *opt = c->msg->options;
	int64_t wait = svc_rpc_call_wait_budget_ms(rpc, opt ? opt->max_wait_ms : 0,
						   u->o.default_wait_ms, u->o.max_wait_ms);
	struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)((wait % 1000) * 1000)};
	if (!(c->timer = evtimer_new(u->o.base, timer_cb, c)) || evtimer_add(c->timer, &tv) != 0)
		answer(c);
}
