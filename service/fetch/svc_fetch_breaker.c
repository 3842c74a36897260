// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_breaker: the circuit breaker of one upstream server
 * (svc_fetch_impl.h). Closed, requests flow; after `threshold` failures in a
 * row it opens and the server is skipped for the cooldown; then it is
 * half-open and lets one probe request through: an answer closes it, a failure
 * opens it again. It keeps the last few failure reasons, and those that opened
 * it, so that a status page and an error text can say why it is open. Pure
 * bookkeeping on monotonic milliseconds; the caller logs and counts.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdio.h>
#include <string.h>

svc_breaker_state svc_breaker_state_at(const svc_breaker *b, int64_t now_ms)
{
	if (!b->open_until)
		return SVC_BREAKER_CLOSED;
	return now_ms < b->open_until ? SVC_BREAKER_OPEN : SVC_BREAKER_HALF_OPEN;
}

bool svc_breaker_allows(const svc_breaker *b, int64_t now_ms)
{
	switch (svc_breaker_state_at(b, now_ms)) {
	case SVC_BREAKER_CLOSED: return true;
	case SVC_BREAKER_OPEN: return false;
	case SVC_BREAKER_HALF_OPEN: return !b->probing;
	}
	return false;
}

void svc_breaker_request(svc_breaker *b, int64_t now_ms)
{
	if (svc_breaker_state_at(b, now_ms) == SVC_BREAKER_HALF_OPEN)
		b->probing = true;
}

void svc_breaker_request_end(svc_breaker *b)
{
	b->probing = false;
}

bool svc_breaker_success(svc_breaker *b)
{
	bool was_open = b->open_until != 0;
	b->consecutive_failures = 0;
	b->open_until = 0;
	return was_open;
}

bool svc_breaker_failure(svc_breaker *b, int64_t now_ms, int threshold, int64_t cooldown_ms)
{
	b->consecutive_failures++;
	bool half_open = svc_breaker_state_at(b, now_ms) == SVC_BREAKER_HALF_OPEN;
	if (half_open ||
	    (!b->open_until && threshold > 0 && b->consecutive_failures >= threshold)) {
		b->open_until = now_ms + cooldown_ms;
		b->opened_at = now_ms;
		unsigned n = (unsigned)b->consecutive_failures;
		b->n_opened_by = svc_breaker_recent(b, b->opened_by);
		if (b->n_opened_by > n) { /* only this streak's failures */
			memmove(b->opened_by, b->opened_by + (b->n_opened_by - n), n * sizeof(b->opened_by[0]));
			b->n_opened_by = n;
		}
		return true;
	}
	return false;
}

void svc_breaker_note(svc_breaker *b, int64_t now_ms, const char *why)
{
	svc_breaker_failure_note *n = &b->recent[b->recent_next];
	n->at_ms = now_ms;
	snprintf(n->why, sizeof(n->why), "%s", why);
	b->recent_next = (b->recent_next + 1) % SVC_BREAKER_NOTES;
	if (b->n_recent < SVC_BREAKER_NOTES)
		b->n_recent++;
}

unsigned svc_breaker_recent(const svc_breaker *b, svc_breaker_failure_note *out)
{
	unsigned first = (b->recent_next + SVC_BREAKER_NOTES - b->n_recent) % SVC_BREAKER_NOTES;
	for (unsigned i = 0; i < b->n_recent; i++)
		out[i] = b->recent[(first + i) % SVC_BREAKER_NOTES];
	return b->n_recent;
}

void svc_breaker_describe(const svc_breaker *b, int64_t now_ms, char *out, size_t cap)
{
	const char *last = b->n_opened_by ? b->opened_by[b->n_opened_by - 1].why : "unknown";
	snprintf(out, cap, "circuit breaker open for %.1f s more, since %.1f s ago after %d "
		 "failure(s) in a row (last: %s)",
		 (double)(b->open_until - now_ms) / 1000.0, (double)(now_ms - b->opened_at) / 1000.0,
		 b->consecutive_failures, last);
}
