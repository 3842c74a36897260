// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc: gRPC protocol helpers (svc_grpc.h).
 */
#include "service/rpc/svc_grpc.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "service/rpc/svc_connect.h"

svc_errc svc_grpc_parse_unary(const uint8_t *buf, size_t len, uint64_t cap,
			      const uint8_t **msg, size_t *msg_len, bool *compressed,
			      svc_error *err)
{
	if (len < SVC_GRPC_PREFIX)
		return svc_error_set(err, SVC_E_INVALID,
				     "gRPC request: %zu bytes, not a whole message prefix (5)", len);
	if (buf[0] & ~1u)
		return svc_error_set(err, SVC_E_INVALID, "gRPC request: message flags 0x%02x",
				     buf[0]);
	uint64_t n = (uint64_t)buf[1] << 24 | (uint64_t)buf[2] << 16 | (uint64_t)buf[3] << 8 |
		     buf[4];
	if (n > cap)
		return svc_error_set(err, SVC_E_TOO_LARGE,
				     "gRPC message of %" PRIu64 " bytes is over the limit of %" PRIu64,
				     n, cap);
	if (n > len - SVC_GRPC_PREFIX)
		return svc_error_set(err, SVC_E_INVALID,
				     "gRPC request: message of %" PRIu64 " bytes truncated at %zu", n,
				     len - SVC_GRPC_PREFIX);
	if (n < len - SVC_GRPC_PREFIX)
		return svc_error_set(err, SVC_E_INVALID,
				     "gRPC request: %zu bytes after the message (unary: one message)",
				     len - SVC_GRPC_PREFIX - (size_t)n);
	*msg = buf + SVC_GRPC_PREFIX;
	*msg_len = (size_t)n;
	*compressed = buf[0] & 1;
	return SVC_OK;
}

void svc_grpc_prefix(uint8_t out[SVC_GRPC_PREFIX], uint8_t flags, uint32_t len)
{
	out[0] = flags;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

bool svc_grpc_parse_timeout(const char *value, int64_t *ms)
{
	size_t n = strlen(value);
	if (n < 2 || n > 9)
		return false;
	int64_t v = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		if (value[i] < '0' || value[i] > '9')
			return false;
		v = v * 10 + (value[i] - '0');
	}
	switch (value[n - 1]) {
	case 'H': *ms = v * 3600000; return true;
	case 'M': *ms = v * 60000; return true;
	case 'S': *ms = v * 1000; return true;
	case 'm': *ms = v; return true;
	case 'u': *ms = (v + 999) / 1000; return true;
	case 'n': *ms = (v + 999999) / 1000000; return true;
	default: return false;
	}
}

size_t svc_grpc_percent_encode(const char *msg, char *out, size_t out_size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	if (!out_size)
		return 0;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		bool plain = *p >= 0x20 && *p <= 0x7e && *p != '%';
		size_t need = plain ? 1 : 3;
		if (o + need >= out_size)
			break;
		if (plain) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return o;
}

int svc_grpc_status(svc_errc code)
{
	/* gRPC's codes are numbered as Connect's names them (svc_connect_code). */
	return (int)svc_errc_connect(code);
}

bool svc_grpc_content_type(const char *ctype, const char *prefix, bool *json)
{
	size_t n = strlen(prefix);
	*json = false;
	if (!ctype || strncasecmp(ctype, prefix, n) != 0)
		return false;
	const char *rest = ctype + n;
	if (*rest == '\0' || *rest == ';')
		return true;
	if (strncasecmp(rest, "+proto", 6) == 0 && (rest[6] == '\0' || rest[6] == ';'))
		return true;
	if (strncasecmp(rest, "+json", 5) == 0 && (rest[5] == '\0' || rest[5] == ';')) {
		*json = true;
		return true;
	}
	return false;
}

bool svc_grpc_lists_gzip(const char *value)
{
	return value && svc_connect_lists_gzip(value);
}

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

svc_errc svc_grpc_base64_decode(const char *in, size_t len, uint8_t *out, size_t *out_len)
{
	size_t o = 0;
	if (len % 4)
		return SVC_E_INVALID;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		int pad = 0;
		for (int k = 0; k < 4; k++) {
			unsigned char ch = (unsigned char)in[i + k];
			if (ch == '=' && k >= 2) {
				pad++;
				v[k] = 0;
				continue;
			}
			if (pad)  /* a character after padding */
				return SVC_E_INVALID;
			if ((v[k] = b64_value(ch)) < 0)
				return SVC_E_INVALID;
		}
		uint32_t q = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
			     (uint32_t)v[3];
		out[o++] = (uint8_t)(q >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(q >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)q;
	}
	*out_len = o;
	return SVC_OK;
}

bool svc_grpc_base64_encode(const uint8_t *in, size_t len, struct evbuffer *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		q[0] = abc[v >> 18 & 63];
		q[1] = abc[v >> 12 & 63];
		q[2] = i + 1 < len ? abc[v >> 6 & 63] : '=';
		q[3] = i + 2 < len ? abc[v & 63] : '=';
		if (evbuffer_add(out, q, 4) != 0)
			return false;
	}
	return true;
}

/* HealthCheckRequest.service (field 1, a string), the only field we read;
 * others skipped. False: not a valid message. */
bool svc_grpc_health_request(const uint8_t *p, size_t len, char *service, size_t size)
{
	service[0] = '\0';
	size_t i = 0;
	while (i < len) {
		uint64_t key = 0;
		for (int shift = 0;; shift += 7) {
			if (i >= len || shift > 63)
				return false;
			key |= (uint64_t)(p[i] & 0x7f) << shift;
			if (!(p[i++] & 0x80))
				break;
		}
		unsigned wt = key & 7;
		uint64_t n = 0;
		if (wt == 0 || wt == 2) {
			for (int shift = 0;; shift += 7) {
				if (i >= len || shift > 63)
					return false;
				n |= (uint64_t)(p[i] & 0x7f) << shift;
				if (!(p[i++] & 0x80))
					break;
			}
		} else if (wt == 1 || wt == 5) {
			n = wt == 1 ? 8 : 4;
			if (len - i < n)
				return false;
			i += n;
			continue;
		} else {
			return false;
		}
		if (wt == 0)
			continue;
		if (n > len - i)
			return false;
		if (key >> 3 == 1) {
			if (n >= size)
				return false;
			memcpy(service, p + i, (size_t)n);
			service[n] = '\0';
		}
		i += (size_t)n;
	}
	return true;
}
