// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc_details: grpc-status-details-bin (svc_grpc.h), the details gRPC
 * carries beside grpc-status and grpc-message: a google.rpc.Status with the
 * code, the message (as is, not percent-encoded) and one detail, a
 * google.rpc.ErrorInfo whose reason is our error's stable name upper-cased
 * (svc_errc_name: "too_large" -> "TOO_LARGE", finer than the gRPC code) in
 * the domain "symbolizer". Written by hand (three small messages), then
 * base64 without padding as a -bin header wants. Connect's error JSON
 * (svc_connect.c) carries the same ErrorInfo (svc_grpc_error_info).
 */
#include <ctype.h>
#include <string.h>

#include "service/rpc/svc_grpc.h"

#define ERROR_INFO_URL "type.googleapis.com/google.rpc.ErrorInfo"
#define DOMAIN SVC_GRPC_ERROR_DOMAIN

typedef struct pb {
	uint8_t *p;
	size_t n, cap;
	bool full;
} pb;

static void put_byte(pb *b, uint8_t v)
{
	if (b->n == b->cap)
		b->full = true;
	else
		b->p[b->n++] = v;
}

static void put_varint(pb *b, uint64_t v)
{
	do {
		put_byte(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void put_bytes(pb *b, uint32_t field, const void *p, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	for (size_t i = 0; i < n; i++)
		put_byte(b, ((const uint8_t *)p)[i]);
}

static size_t base64_nopad(const uint8_t *in, size_t len, char *out, size_t size)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t chars = len - i >= 3 ? 4 : len - i + 1;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		if (o + chars >= size)
			return 0;
		for (size_t k = 0; k < chars; k++)
			out[o++] = abc[v >> (18 - 6 * k) & 63];
	}
	out[o] = '\0';
	return o;
}

void svc_grpc_error_reason(svc_errc code, char out[SVC_GRPC_REASON_MAX])
{
	const char *name = svc_errc_name(code);
	size_t n = 0;
	for (; name[n] && n < SVC_GRPC_REASON_MAX - 1; n++)
		out[n] = (char)toupper((unsigned char)name[n]);
	out[n] = '\0';
}

/* google.rpc.ErrorInfo{reason, domain} of err into info. */
static void error_info(pb *info, const svc_error *err)
{
	char reason[SVC_GRPC_REASON_MAX];
	svc_grpc_error_reason(err->code, reason);
	put_bytes(info, 1, reason, strlen(reason));             /* ErrorInfo.reason */
	put_bytes(info, 2, DOMAIN, sizeof(DOMAIN) - 1);         /* .domain */
}

size_t svc_grpc_error_info(const svc_error *err, char *out, size_t size)
{
	uint8_t info_b[64];
	pb info = {info_b, 0, sizeof(info_b), false};
	error_info(&info, err);
	if (info.full || size == 0)
		return 0;
	return base64_nopad(info.p, info.n, out, size);
}

size_t svc_grpc_status_details(const svc_error *err, char *out, size_t size)
{
	uint8_t info_b[64], any_b[128], status_b[SVC_ERROR_MSG_MAX + 160];
	pb info = {info_b, 0, sizeof(info_b), false};
	pb any = {any_b, 0, sizeof(any_b), false};
	pb st = {status_b, 0, sizeof(status_b), false};
	error_info(&info, err);
	put_bytes(&any, 1, ERROR_INFO_URL, sizeof(ERROR_INFO_URL) - 1);  /* Any.type_url */
	put_bytes(&any, 2, info.p, info.n);                     /* Any.value */
	int code = svc_grpc_status(err->code);
	if (code) {
		put_varint(&st, 1 << 3 | 0);                    /* Status.code */
		put_varint(&st, (uint64_t)code);
	}
	size_t mn = strnlen(err->msg, sizeof(err->msg));
	if (mn)
		put_bytes(&st, 2, err->msg, mn);                /* Status.message */
	put_bytes(&st, 3, any.p, any.n);                        /* Status.details */
	if (info.full || any.full || st.full || size == 0)
		return 0;
	return base64_nopad(st.p, st.n, out, size);
}
