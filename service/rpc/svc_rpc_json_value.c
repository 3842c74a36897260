// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_value: one JSON value of a field -> its wire bytes, for the
 * decoder (svc_rpc_json_decode.c, which reads the messages and lists around
 * it): integers (plain ones as the scanner read them, the rest exactly from
 * their text), floats, enums, booleans, strings (copied once, from the text
 * or the scanner's scratch), bytes from base64 or hex. A wrong type or range
 * is a refusal naming why (dec_bad), the value read past.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_decode_impl.h"

/* ---- integers ---- */

static dec_rc integral_result(dec *d, int r)
{
	if (r == 0)
		return DEC_OK;
	d->what = r == 2 ? "integer out of the field's range" : "not an integer";
	return DEC_BAD;
}

/* A number's text, exactly (a fraction or exponent: 1.5e1 is 15). */
static dec_rc integral_of_number(dec *d, const json_num *num, svc_rpc_json_integral *v)
{
	if (num->integer) {
		v->mag = num->mag;
		v->neg = num->neg && num->mag;  /* -0 is 0 */
		return DEC_OK;
	}
	json_str str = {.s = num->s, .n = num->n};
	const char *c = json_scan_cstr(&d->sc, &str);
	if (!c)
		return dec_wire_full(d);
	return integral_result(d, svc_rpc_json_integral_number(c, v));
}

/* "123", "-5" or a number in string form ("1e3"). */
static dec_rc integral_of_string(dec *d, const json_str *str, svc_rpc_json_integral *v)
{
	if (str->nul)
		return integral_result(d, 1);
	const char *s = str->s;
	size_t n = str->n, neg = n && *s == '-', k = neg;
	uint64_t u = 0;
	while (k < n && k - neg < 19 && s[k] >= '0' && s[k] <= '9')
		u = u * 10 + (uint64_t)(s[k++] - '0');
	if (k == n && k > neg) {  /* the common case: up to 19 digits */
		v->neg = neg && u;
		v->mag = u;
		return DEC_OK;
	}
	const char *c = json_scan_cstr(&d->sc, str);
	if (!c)
		return dec_wire_full(d);
	return integral_result(d, svc_rpc_json_integral_text(c, v));
}

static dec_rc get_integral(dec *d, svc_rpc_json_integral *v)
{
	int c = json_scan_peek(&d->sc);
	if (c == '"') {
		if (dec_digits_string(&d->sc, v))
			return DEC_OK;
		json_str str;
		return json_scan_string(&d->sc, &str) ? integral_of_string(d, &str, v) : DEC_STOP;
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		json_num num;
		return json_scan_number(&d->sc, &num) ? integral_of_number(d, &num, v) : DEC_STOP;
	}
	return dec_bad(d, "expected an integer (a number or a string)");
}

/* The bits of an integer field's value, range-checked. */
static dec_rc int_bits(dec *d, ProtobufCType t, uint64_t *bits)
{
	svc_rpc_json_integral v = {0, false};
	dec_rc rc = get_integral(d, &v);
	if (rc != DEC_OK)
		return rc;
	bool is32 = t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
		    t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_UINT32 ||
		    t == PROTOBUF_C_TYPE_FIXED32;
	bool is_unsigned = t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_FIXED32 ||
			   t == PROTOBUF_C_TYPE_UINT64 || t == PROTOBUF_C_TYPE_FIXED64;
	uint64_t max = is_unsigned ? (is32 ? UINT32_MAX : UINT64_MAX)
				   : (is32 ? INT32_MAX : INT64_MAX);
	if (v.neg ? is_unsigned || v.mag > max + 1 : v.mag > max) {
		d->what = is_unsigned && v.neg ? "negative value for an unsigned field"
					       : "integer out of the field's range";
		return DEC_BAD;
	}
	int64_t s = v.neg ? (int64_t)(0 - v.mag) : (int64_t)v.mag;
	switch (t) {
	case PROTOBUF_C_TYPE_SINT32:
		*bits = (uint32_t)((uint32_t)s << 1 ^ (uint32_t)(s >> 31));
		break;
	case PROTOBUF_C_TYPE_SINT64:
		*bits = (uint64_t)s << 1 ^ (uint64_t)(s >> 63);
		break;
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
		*bits = (uint32_t)s;
		break;
	default:  /* int32 is sign-extended to 64 bits on the wire */
		*bits = v.neg ? (uint64_t)s : v.mag;
	}
	return DEC_OK;
}

/* ---- floats, enums ---- */

static dec_rc float_value(dec *d, double *x)
{
	int c = json_scan_peek(&d->sc);
	if (c == '-' || (c >= '0' && c <= '9')) {
		json_num num;
		if (!json_scan_number(&d->sc, &num))
			return DEC_STOP;
		if (num.integer) {  /* as json-c: the integer converted (-0 is 0) */
			*x = num.neg ? -(double)num.mag : (double)num.mag;
			*x = *x == 0 ? 0 : *x;
			return DEC_OK;
		}
		json_str str = {.s = num.s, .n = num.n};
		const char *t = json_scan_cstr(&d->sc, &str);
		if (!t)
			return dec_wire_full(d);
		*x = strtod(t, NULL);
		return DEC_OK;
	}
	if (c != '"')
		return dec_bad(d, "expected a number");
	json_str str;
	if (!json_scan_string(&d->sc, &str))
		return DEC_STOP;
	const char *s = json_scan_cstr(&d->sc, &str);
	char *end;
	if (!s)
		return dec_wire_full(d);
	if (!strcmp(s, "NaN"))
		*x = NAN;
	else if (!strcmp(s, "Infinity"))
		*x = INFINITY;
	else if (!strcmp(s, "-Infinity"))
		*x = -INFINITY;
	else if (!*s || (*x = strtod(s, &end), *end) || !isfinite(*x))
		return d->what = "not a number", DEC_BAD;
	return DEC_OK;
}

static dec_rc float_bits(dec *d, ProtobufCType t, uint64_t *bits)
{
	double x;
	dec_rc rc = float_value(d, &x);
	if (rc != DEC_OK)
		return rc;
	if (t == PROTOBUF_C_TYPE_DOUBLE) {
		memcpy(bits, &x, 8);
		return DEC_OK;
	}
	if (isfinite(x) && fabs(x) > 3.4028234663852886e38)
		return d->what = "number out of a float's range", DEC_BAD;
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, 4);
	*bits = u;
	return DEC_OK;
}

static dec_rc enum_bits(dec *d, const json_field *f, uint64_t *bits)
{
	int c = json_scan_peek(&d->sc);
	if (c == '"') {
		json_str str;
		if (!json_scan_string(&d->sc, &str))
			return DEC_STOP;
		const char *name = json_scan_cstr(&d->sc, &str);
		if (!name)
			return dec_wire_full(d);
		const ProtobufCEnumValue *ev =
			protobuf_c_enum_descriptor_get_value_by_name(f->fd->descriptor, name);
		if (!ev)
			return d->what = "unknown enum value name", DEC_BAD;
		*bits = (uint64_t)(int64_t)ev->value;
		return DEC_OK;
	}
	if (c != '-' && (c < '0' || c > '9'))
		return dec_bad(d, "expected an enum value's name or number");
	return int_bits(d, PROTOBUF_C_TYPE_INT32, bits);
}

dec_rc dec_scalar_bits(dec *d, const json_field *f, uint64_t *bits, int *wt)
{
	ProtobufCType t = f->type;
	*wt = f->wire_type;
	switch (t) {
	case PROTOBUF_C_TYPE_BOOL: {
		int c = json_scan_peek(&d->sc);
		bool b;
		if (c != 't' && c != 'f')
			return dec_bad(d, "expected true or false");
		if (!json_scan_literal(&d->sc, &b))
			return DEC_STOP;
		*bits = b;
		return DEC_OK;
	}
	case PROTOBUF_C_TYPE_ENUM:
		return enum_bits(d, f, bits);
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		return float_bits(d, t, bits);
	default:
		return int_bits(d, t, bits);
	}
}

bool dec_put_bits(dec *d, int wt, uint64_t bits)
{
	if (wt == SVC_WIRE_VARINT)
		return dec_put_varint(d, bits);
	uint8_t b[8];
	size_t n = wt == SVC_WIRE_I64 ? 8 : 4;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(bits >> (8 * i));
	return base_buf_append(d->w, b, n);
}

/* ---- strings and bytes ---- */

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Base64 (standard or URL-safe, padding optional) appended to the wire. */
static dec_rc put_base64_decoded(dec *d, const char *s, size_t n)
{
	while (n && s[n - 1] == '=' && n % 4 != 1)
		n--;
	if (n % 4 == 1)
		return d->what = "not base64", DEC_BAD;
	if (!base_buf_reserve(d->w, n / 4 * 3 + n % 4 * 6 / 8))  /* exactly what it makes */
		return dec_wire_full(d);
	uint8_t *out = d->w->data + d->w->len;
	uint32_t acc = 0;
	size_t bits = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(s[i]);
		if (v < 0)
			return d->what = "not base64", DEC_BAD;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (uint8_t)(acc >> bits);
		}
	}
	d->w->len += k;
	return DEC_OK;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Hex (OTLP/JSON's IDs, either case) appended to the wire. */
static dec_rc put_hex_decoded(dec *d, const char *s, size_t n)
{
	if (n % 2)
		return d->what = "not hex (an odd number of digits)", DEC_BAD;
	if (!base_buf_reserve(d->w, n / 2))
		return dec_wire_full(d);
	uint8_t *out = d->w->data + d->w->len;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
		if (hi < 0 || lo < 0)
			return d->what = "not hex", DEC_BAD;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	d->w->len += n / 2;
	return DEC_OK;
}

static dec_rc put_text(dec *d, const json_field *f)
{
	bool is_string = f->type == PROTOBUF_C_TYPE_STRING;
	if (json_scan_peek(&d->sc) != '"')
		return dec_bad(d, f->hex ? "expected a hex string"
				  : is_string ? "expected a string" : "expected a base64 string");
	json_str str;
	if (!json_scan_string(&d->sc, &str))
		return DEC_STOP;
	if (is_string && str.bad_utf8)
		return d->what = "invalid UTF-8", DEC_BAD;  /* json-c's check lets some through */
	if (str.nul)  /* a C string would end there: a build ID cut short */
		return d->what = "a NUL character (\\u0000) in a string", DEC_BAD;
	if (!dec_put_varint(d, SVC_WIRE_TAG(f->fd->id, SVC_WIRE_LEN)))
		return dec_wire_full(d);
	if (is_string)  /* its length known: no placeholder */
		return dec_put_varint(d, str.n) && base_buf_append(d->w, str.s, str.n)
			       ? DEC_OK : dec_wire_full(d);
	size_t start = dec_open_len(d);
	if (!start)
		return dec_wire_full(d);
	dec_rc rc = f->hex ? put_hex_decoded(d, str.s, str.n) : put_base64_decoded(d, str.s, str.n);
	if (rc == DEC_OK && !dec_close_len(d, start))
		return dec_wire_full(d);
	return rc;
}

dec_rc dec_put_value(dec *d, const json_field *f)
{
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES)
		return put_text(d, f);
	svc_rpc_json_integral v;
	if (f->type == PROTOBUF_C_TYPE_UINT64 && json_scan_peek(&d->sc) == '"' &&
	    dec_digits_string(&d->sc, &v))  /* an address: any 19 digits are in range */
		return dec_put_varint(d, SVC_WIRE_TAG(f->fd->id, SVC_WIRE_VARINT)) &&
			       dec_put_varint(d, v.mag)
		       ? DEC_OK : dec_wire_full(d);
	uint64_t bits;
	int wt;
	dec_rc rc = dec_scalar_bits(d, f, &bits, &wt);
	if (rc != DEC_OK)
		return rc;
	return dec_put_varint(d, SVC_WIRE_TAG(f->fd->id, wt)) && dec_put_bits(d, wt, bits)
		       ? DEC_OK : dec_wire_full(d);
}
