// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_retry: OTLP's retry rules for the forwarder (svc_otlp_forward.h):
 * which answers are retried, and the delay a server asks for, from HTTP's
 * Retry-After or gRPC's google.rpc.RetryInfo (in grpc-status-details-bin:
 * a base64 google.rpc.Status whose details hold an Any of it), read with a
 * few lines of wire decoding rather than two more .proto files.
 */
#include "service/otlp/svc_otlp_impl.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/base_clock.h"
#include "service/rpc/svc_grpc.h"

bool svc_otlp_http_retryable(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

bool svc_otlp_grpc_retryable(int code)
{
	switch (code) {
	case 1:  /* CANCELLED */
	case 4:  /* DEADLINE_EXCEEDED */
	case 8:  /* RESOURCE_EXHAUSTED */
	case 10: /* ABORTED */
	case 11: /* OUT_OF_RANGE */
	case 14: /* UNAVAILABLE */
	case 15: /* DATA_LOSS */
		return true;
	default:
		return false;
	}
}

int64_t svc_otlp_retry_after_ms(const char *value, size_t n)
{
	char tmp[64];
	while (n && (*value == ' ' || *value == '\t'))
		value++, n--;
	while (n && (value[n - 1] == '\r' || value[n - 1] == '\n' || value[n - 1] == ' '))
		n--;
	if (!n || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, value, n);
	tmp[n] = '\0';
	char *end;
	long long s = strtoll(tmp, &end, 10);
	if (end != tmp && *end == '\0')
		return s < 0 ? -1 : s > 3600 ? 3600000 : s * 1000;
	time_t when = curl_getdate(tmp, NULL);  /* an HTTP date */
	if (when < 0)
		return -1;
	int64_t ms = ((int64_t)when - base_real_ms() / 1000) * 1000;
	return ms < 0 ? 0 : ms > 3600000 ? 3600000 : ms;
}

/* ---- the wire, just enough ---- */

typedef struct wire {
	const uint8_t *p, *end;
} wire;

static bool varint(wire *w, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && w->p < w->end; shift += 7) {
		uint8_t b = *w->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number and, for a LEN field, its bytes in *sub; false
 * at the end or on a malformed field. Other types are skipped (sub empty). */
static bool next_field(wire *w, uint32_t *field, uint64_t *value, wire *sub)
{
	uint64_t tag, len;
	if (w->p >= w->end || !varint(w, &tag))
		return false;
	*field = (uint32_t)(tag >> 3);
	sub->p = sub->end = NULL;
	switch (tag & 7) {
	case 0:
		return varint(w, value);
	case 1:
	case 5: {
		size_t k = (tag & 7) == 1 ? 8 : 4;
		if ((size_t)(w->end - w->p) < k)
			return false;
		w->p += k;
		return true;
	}
	case 2:
		if (!varint(w, &len) || len > (uint64_t)(w->end - w->p))
			return false;
		sub->p = w->p, sub->end = w->p + len;
		w->p += len;
		return true;
	default:
		return false;
	}
}

/* google.rpc.RetryInfo's retry_delay (a Duration) in ms; -1: none. */
static int64_t retry_info(wire w)
{
	uint32_t f;
	uint64_t v;
	wire sub;
	while (next_field(&w, &f, &v, &sub)) {
		if (f != 1 || !sub.p)
			continue;
		int64_t ms = 0;
		wire d = sub;
		while (next_field(&d, &f, &v, &sub))
			ms += f == 1 ? (int64_t)(v > 3600 ? 3600 : v) * 1000
			      : f == 2 ? (int64_t)(uint32_t)v / 1000000 : 0;
		return ms;
	}
	return -1;
}

#define RETRY_INFO_TYPE "type.googleapis.com/google.rpc.RetryInfo"

int64_t svc_otlp_grpc_retry_info_ms(const char *b64, size_t n)
{
	while (n && (b64[n - 1] == '\r' || b64[n - 1] == '\n' || b64[n - 1] == ' '))
		n--;
	while (n && *b64 == ' ')
		b64++, n--;
	if (!n || n > 8192)
		return -1;
	char *padded = malloc(n + 4);
	uint8_t *bin = malloc(n + 4);
	size_t len = 0, pn = n;
	int64_t ms = -1;
	if (!padded || !bin)
		goto out;
	memcpy(padded, b64, n);
	while (pn % 4)
		padded[pn++] = '=';
	if (svc_grpc_base64_decode(padded, pn, bin, &len) != SVC_OK)
		goto out;
	wire w = {bin, bin + len}, any, sub;
	uint32_t f;
	uint64_t v;
	while (ms < 0 && next_field(&w, &f, &v, &any)) {
		if (f != 3 || !any.p)  /* google.rpc.Status.details */
			continue;
		bool is_retry = false;
		wire value = {NULL, NULL};
		while (next_field(&any, &f, &v, &sub)) {
			size_t tl = sizeof(RETRY_INFO_TYPE) - 1;
			if (f == 1 && sub.p && (size_t)(sub.end - sub.p) == tl &&
			    memcmp(sub.p, RETRY_INFO_TYPE, tl) == 0)
				is_retry = true;
			else if (f == 2 && sub.p)
				value = sub;
		}
		if (is_retry && value.p)
			ms = retry_info(value);
	}
out:
	free(padded);
	free(bin);
	return ms;
}
