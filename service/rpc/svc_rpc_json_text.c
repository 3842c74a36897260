// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_text: writing JSON text into a buffer (svc_rpc_json_text.h,
 * svc_rpc_json_impl.h): numbers, doubles, any scalar of a field's type,
 * strings (escapes, 8 bytes at a time over the plain runs, invalid UTF-8 as
 * U+FFFD) and base64, for the encoder (svc_rpc_json_encode.c), which writes a
 * message's fields with them, and for svc_response_json.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/base_utf8.h"
#include "service/rpc/svc_rpc_json_impl.h"

/* n (below 1,000): its digits, zeros after, and their count; its 3 digits. */
#define DEC_DIGIT(n, k) ((char)('0' + (n) / (k) % 10))
#define DEC3(n)                                                                               \
	{(n) < 10 ? DEC_DIGIT(n, 1) : (n) < 100 ? DEC_DIGIT(n, 10) : DEC_DIGIT(n, 100),         \
	 (n) < 10 ? 0 : (n) < 100 ? DEC_DIGIT(n, 1) : DEC_DIGIT(n, 10),                          \
	 (n) < 100 ? 0 : DEC_DIGIT(n, 1),                                                        \
	 (char)((n) < 10 ? 1 : (n) < 100 ? 2 : 3),                                               \
	 DEC_DIGIT(n, 100), DEC_DIGIT(n, 10), DEC_DIGIT(n, 1), 0}
#define DEC3_10(n) DEC3(n), DEC3(n + 1), DEC3(n + 2), DEC3(n + 3), DEC3(n + 4), DEC3(n + 5), \
	DEC3(n + 6), DEC3(n + 7), DEC3(n + 8), DEC3(n + 9)
#define DEC3_100(n) DEC3_10(n), DEC3_10(n + 10), DEC3_10(n + 20), DEC3_10(n + 30),           \
	DEC3_10(n + 40), DEC3_10(n + 50), DEC3_10(n + 60), DEC3_10(n + 70), DEC3_10(n + 80),  \
	DEC3_10(n + 90)

const char svc_rpc_json_dec3[1000][8] = {
	DEC3_100(0), DEC3_100(100), DEC3_100(200), DEC3_100(300), DEC3_100(400),
	DEC3_100(500), DEC3_100(600), DEC3_100(700), DEC3_100(800), DEC3_100(900),
};

bool svc_rpc_json_put_number(base_buf *b, uint64_t v, bool neg, bool quoted)
{
	uint8_t *p = json_room(b, JSON_NUMBER_MAX);
	if (!p)
		return false;
	b->len = (size_t)(json_write_number(p, v, neg, quoted) - b->data);
	return true;
}

bool svc_rpc_json_put_i64(base_buf *b, int64_t v, bool quoted)
{
	return svc_rpc_json_put_number(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0, quoted);
}

bool svc_rpc_json_put_double(base_buf *b, double d, bool is_float)
{
	if (isnan(d))
		return json_put(b, "\"NaN\"", 5);
	if (isinf(d))
		return d > 0 ? json_put(b, "\"Infinity\"", 10) : json_put(b, "\"-Infinity\"", 11);
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), is_float ? "%.9g" : "%.17g", d);
	return json_put(b, tmp, (size_t)n);
}

/* Bytes written as they are in a JSON string: printable ASCII but '"' and '\\'. */
static const bool plain_char[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x80 to 0xff: 0 (UTF-8, checked) */
};

bool svc_rpc_json_put_string(base_buf *b, const uint8_t *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	if (!json_put_char(b, '"'))
		return false;
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		uint64_t w, care = 0;
		while (run + 8 <= n && (memcpy(&w, s + run, 8), !(care = json_care_mask(w))))
			run += 8;
		if (care)  /* the first byte that needs care, from the word */
			run += (size_t)__builtin_ctzll(care) / 8;
		else
			while (run < n && plain_char[s[run]])
				run++;
		if (run > i && !json_put(b, s + i, run - i))
			return false;
		i = run;
		if (i == n)
			break;
		uint8_t c = s[i];
		if (c >= 0x80) {
			size_t len = base_utf8_seq_len((const char *)s + i, n - i);
			if (!(len ? json_put(b, s + i, len) : json_put(b, "\xef\xbf\xbd", 3)))
				return false;
			i += len ? len : 1;
			continue;
		}
		char esc[6] = {'\\', (char)c};
		size_t elen = 2;
		if (c == '\n')
			esc[1] = 'n';
		else if (c == '\t')
			esc[1] = 't';
		else if (c == '\r')
			esc[1] = 'r';
		else if (c < 0x20) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		if (!json_put(b, esc, elen))
			return false;
		i++;
	}
	return json_put_char(b, '"');
}

bool svc_rpc_json_put_base64(base_buf *b, const uint8_t *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *p = json_room(b, (n + 2) / 3 * 4 + 2);
	if (!p)
		return false;
	uint8_t *q = p;
	*q++ = '"';
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*q++ = (uint8_t)tab[v >> 18];
		*q++ = (uint8_t)tab[v >> 12 & 63];
		*q++ = (uint8_t)tab[v >> 6 & 63];
		*q++ = (uint8_t)tab[v & 63];
	}
	if (n - i) {
		uint32_t v = (uint32_t)s[i] << 16 | (n - i == 2 ? (uint32_t)s[i + 1] << 8 : 0);
		*q++ = (uint8_t)tab[v >> 18];
		*q++ = (uint8_t)tab[v >> 12 & 63];
		*q++ = n - i == 2 ? (uint8_t)tab[v >> 6 & 63] : '=';
		*q++ = '=';
	}
	*q++ = '"';
	b->len += (size_t)(q - p);
	return true;
}

bool svc_rpc_json_put_hex(base_buf *b, const uint8_t *s, size_t n)
{
	static const char tab[] = "0123456789abcdef";
	uint8_t *p = json_room(b, n * 2 + 2);
	if (!p)
		return false;
	uint8_t *q = p;
	*q++ = '"';
	for (size_t i = 0; i < n; i++) {
		*q++ = (uint8_t)tab[s[i] >> 4];
		*q++ = (uint8_t)tab[s[i] & 15];
	}
	*q++ = '"';
	b->len += (size_t)(q - p);
	return true;
}

static bool put_enum(base_buf *b, const ProtobufCEnumDescriptor *d, int32_t v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);
	if (!ev)
		return svc_rpc_json_put_i64(b, v, false);
	size_t n = strlen(ev->name);
	return json_put_char(b, '"') && json_put(b, ev->name, n) && json_put_char(b, '"');
}

bool svc_rpc_json_put_scalar(base_buf *b, const json_field *f, uint64_t v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return svc_rpc_json_put_i64(b, (int32_t)(uint32_t)v, false);
	case PROTOBUF_C_TYPE_SINT32:
		return svc_rpc_json_put_i64(b, (int32_t)((uint32_t)v >> 1 ^ -(uint32_t)(v & 1)), false);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return svc_rpc_json_put_number(b, (uint32_t)v, false, false);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return svc_rpc_json_put_i64(b, (int64_t)v, true);
	case PROTOBUF_C_TYPE_SINT64:
		return svc_rpc_json_put_i64(b, (int64_t)(v >> 1 ^ -(v & 1)), true);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return svc_rpc_json_put_number(b, v, false, true);
	case PROTOBUF_C_TYPE_BOOL:
		return v ? json_put(b, "true", 4) : json_put(b, "false", 5);
	case PROTOBUF_C_TYPE_ENUM:
		if (f->enum_number)
			return svc_rpc_json_put_i64(b, (int32_t)(uint32_t)v, false);
		return put_enum(b, f->fd->descriptor, (int32_t)(uint32_t)v);
	case PROTOBUF_C_TYPE_FLOAT: {
		float x;
		uint32_t u = (uint32_t)v;
		memcpy(&x, &u, 4);
		return svc_rpc_json_put_double(b, x, true);
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double x;
		memcpy(&x, &v, 8);
		return svc_rpc_json_put_double(b, x, false);
	}
	default:
		return false;
	}
}
