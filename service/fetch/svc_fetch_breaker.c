// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_breaker: the circuit breaker of one upstream server
 * (svc_fetch_impl.h). Closed, requests flow; after `threshold` failures in a
 * row it opens and the server is skipped for the cooldown; then it is
 * half-open and lets one probe request through: an answer closes it, a failure
 * opens it again. Pure bookkeeping on monotonic milliseconds; the caller logs
 * and counts.
 */
#include "service/fetch/svc_fetch_impl.h"

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
		return true;
	}
	return false;
}
