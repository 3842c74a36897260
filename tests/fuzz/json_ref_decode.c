// SPDX-License-Identifier: Apache-2.0
/*
 * json_ref_decode: the Connect JSON decoder as it was before the streaming
 * one (service/rpc/svc_rpc_json_decode.c): json-c parses the text into its
 * tree, the tree is walked with the descriptors. Kept only as the
 * reference fuzz_json_differential compares the streaming decoder with:
 * same acceptance, same wire bytes, same errors. Changed but for its name
 * in one way, made in both: room is reserved for the bytes a value makes,
 * not more, so a message that fits the wire cap is taken by each.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/base_utf8.h"
#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_wire.h"
#include "json_ref_decode.h"

typedef struct dec {
	base_buf *w;
	svc_error *err;
	const char *what;       /* an INVALID's reason (set by fail) */
	char path[160];         /* its field's path, written from the end as */
	size_t pstart;          /* the error unwinds: path + pstart, cut when long */
	int depth;
} dec;

/* ---- errors and the path ---- */

/* An invalid value: the reason now, the field's path as the error unwinds
 * (nothing is spent on paths while all goes well). */
static svc_errc fail(dec *d, const char *what)
{
	d->what = what;
	return SVC_E_INVALID;
}

/* Puts a segment in front of the path: a field's name or an index. */
static void prepend(dec *d, const char *name, long index)
{
	char seg[80];
	size_t n;
	if (index >= 0) {
		char digits[24];
		size_t k = 0;
		unsigned long v = (unsigned long)index;
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		n = 0;
		seg[n++] = '[';
		while (k)
			seg[n++] = digits[--k];
		seg[n++] = ']';
	} else {
		const char *nm = name ? name : "";
		size_t len = strlen(nm);
		len = len < sizeof(seg) - 2 ? len : sizeof(seg) - 2;
		memcpy(seg, nm, len);
		n = len;
	}
	/* A name follows with a '.', an index without. */
	if (d->pstart < sizeof(d->path) - 1 && d->path[d->pstart] != '[')
		seg[n++] = '.';
	if (n > d->pstart)
		return;  /* too long: the innermost part is kept */
	d->pstart -= n;
	memcpy(d->path + d->pstart, seg, n);
}

/* ---- writing the wire ---- */

static inline bool put_varint(dec *d, uint64_t v)
{
	if (d->w->cap - d->w->len < 10 && !base_buf_reserve(d->w, svc_wire_varint_size(v)))
		return false;
	d->w->len = (size_t)(svc_wire_put_varint(d->w->data + d->w->len, v) - d->w->data);
	return true;
}

static bool put_fixed(dec *d, uint64_t v, size_t n)
{
	uint8_t b[8];
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return base_buf_append(d->w, b, n);
}

static bool put_tag(dec *d, const json_field *f, int type)
{
	return put_varint(d, SVC_WIRE_TAG(f->fd->id, type));
}

/* Starts a length-delimited value: a one-byte length, set by close_len.
 * Returns where its bytes start (0: no room). */
static size_t open_len(dec *d)
{
	if (d->w->cap == d->w->len && !base_buf_reserve(d->w, 1))
		return 0;
	d->w->data[d->w->len++] = 0;
	return d->w->len;
}

/* Sets the length of the bytes written since start (open_len's) before them:
 * in the placeholder byte when under 128, else moved to make room. */
static bool close_len(dec *d, size_t start)
{
	size_t n = d->w->len - start, k = svc_wire_varint_size(n);
	uint8_t *p = d->w->data + start - 1;
	if (k == 1) {
		*p = (uint8_t)n;
		return true;
	}
	if (!base_buf_reserve(d->w, k - 1))
		return false;
	p = d->w->data + start - 1;
	memmove(p + k, p + 1, n);
	svc_wire_put_varint(p, n);
	d->w->len += k - 1;
	return true;
}

static svc_errc wire_full(dec *d)
{
	return d->w->over ? svc_error_set(d->err, SVC_E_TOO_LARGE,
					  "request over the size limit once decoded from JSON")
			  : svc_error_set(d->err, SVC_E_NOMEM, "out of memory");
}

/* ---- scalars ---- */

static svc_errc integral_result(dec *d, int r)
{
	return r == 0 ? SVC_OK : fail(d, r == 2 ? "integer out of the field's range"
						: "not an integer");
}

static svc_errc get_integral(dec *d, json_object *o, svc_rpc_json_integral *v)
{
	switch (json_object_get_type(o)) {
	case json_type_int: {
		int64_t i = json_object_get_int64(o);
		v->neg = i < 0;
		v->mag = i < 0 ? 0 - (uint64_t)i : json_object_get_uint64(o);
		return SVC_OK;
	}
	case json_type_double:  /* json-c keeps a parsed number's own text: read it exactly */
		return integral_result(d, svc_rpc_json_integral_number(json_object_to_json_string(o), v));
	case json_type_string:
		if (strlen(json_object_get_string(o)) != (size_t)json_object_get_string_len(o))
			return fail(d, "not an integer");
		return integral_result(d, svc_rpc_json_integral_text(json_object_get_string(o), v));
	default:
		return fail(d, "expected an integer (a number or a string)");
	}
}

/* The bits of an integer field's value, range-checked. */
static svc_errc int_bits(dec *d, ProtobufCType t, json_object *o, uint64_t *bits)
{
	svc_rpc_json_integral v = {0, false};
	svc_errc rc = get_integral(d, o, &v);
	if (rc != SVC_OK)
		return rc;
	bool is32 = t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
		    t == PROTOBUF_C_TYPE_SFIXED32 || t == PROTOBUF_C_TYPE_UINT32 ||
		    t == PROTOBUF_C_TYPE_FIXED32;
	bool is_unsigned = t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_FIXED32 ||
			   t == PROTOBUF_C_TYPE_UINT64 || t == PROTOBUF_C_TYPE_FIXED64;
	uint64_t max = is_unsigned ? (is32 ? UINT32_MAX : UINT64_MAX)
				   : (is32 ? INT32_MAX : INT64_MAX);
	if (v.neg ? is_unsigned || v.mag > max + 1 : v.mag > max)
		return fail(d, is_unsigned && v.neg ? "negative value for an unsigned field"
						    : "integer out of the field's range");
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
	return SVC_OK;
}

static svc_errc float_bits(dec *d, ProtobufCType t, json_object *o, uint64_t *bits)
{
	double x;
	json_type jt = json_object_get_type(o);
	if (jt == json_type_int || jt == json_type_double) {
		x = json_object_get_double(o);
	} else if (jt == json_type_string) {
		const char *s = json_object_get_string(o);
		char *end;
		if (!strcmp(s, "NaN"))
			x = NAN;
		else if (!strcmp(s, "Infinity"))
			x = INFINITY;
		else if (!strcmp(s, "-Infinity"))
			x = -INFINITY;
		else if (!*s || (x = strtod(s, &end), *end) || !isfinite(x))
			return fail(d, "not a number");
	} else {
		return fail(d, "expected a number");
	}
	if (t == PROTOBUF_C_TYPE_DOUBLE) {
		memcpy(bits, &x, 8);
		return SVC_OK;
	}
	if (isfinite(x) && fabs(x) > 3.4028234663852886e38)
		return fail(d, "number out of a float's range");
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, 4);
	*bits = u;
	return SVC_OK;
}

static svc_errc enum_bits(dec *d, const json_field *f, json_object *o, uint64_t *bits)
{
	if (json_object_get_type(o) == json_type_string) {
		const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(
			f->fd->descriptor, json_object_get_string(o));
		if (!ev)
			return fail(d, "unknown enum value name");
		*bits = (uint64_t)(int64_t)ev->value;
		return SVC_OK;
	}
	if (json_object_get_type(o) != json_type_int && json_object_get_type(o) != json_type_double)
		return fail(d, "expected an enum value's name or number");
	return int_bits(d, PROTOBUF_C_TYPE_INT32, o, bits);
}

/* The bits of a scalar (not string, bytes or message) and the wire type they take. */
static svc_errc scalar_bits(dec *d, const json_field *f, json_object *o, uint64_t *bits,
			    int *wt)
{
	ProtobufCType t = f->fd->type;
	*wt = SVC_WIRE_VARINT;
	switch (t) {
	case PROTOBUF_C_TYPE_BOOL:
		if (json_object_get_type(o) != json_type_boolean)
			return fail(d, "expected true or false");
		*bits = json_object_get_boolean(o) ? 1 : 0;
		return SVC_OK;
	case PROTOBUF_C_TYPE_ENUM:
		return enum_bits(d, f, o, bits);
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		*wt = t == PROTOBUF_C_TYPE_FLOAT ? SVC_WIRE_I32 : SVC_WIRE_I64;
		return float_bits(d, t, o, bits);
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
		*wt = SVC_WIRE_I32;
		return int_bits(d, t, o, bits);
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
		*wt = SVC_WIRE_I64;
		return int_bits(d, t, o, bits);
	default:
		return int_bits(d, t, o, bits);
	}
}

static bool put_bits(dec *d, int wt, uint64_t bits)
{
	return wt == SVC_WIRE_VARINT ? put_varint(d, bits)
				     : put_fixed(d, bits, wt == SVC_WIRE_I64 ? 8 : 4);
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
static svc_errc put_base64_decoded(dec *d, const char *s, size_t n)
{
	while (n && s[n - 1] == '=' && n % 4 != 1)
		n--;
	if (n % 4 == 1)
		return fail(d, "not base64");
	if (!base_buf_reserve(d->w, n / 4 * 3 + n % 4 * 6 / 8))
		return wire_full(d);
	uint8_t *out = d->w->data + d->w->len;
	uint32_t acc = 0;
	size_t bits = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64_value(s[i]);
		if (v < 0)
			return fail(d, "not base64");
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (uint8_t)(acc >> bits);
		}
	}
	d->w->len += k;
	return SVC_OK;
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
static svc_errc put_hex_decoded(dec *d, const char *s, size_t n)
{
	if (n % 2)
		return fail(d, "not hex (an odd number of digits)");
	if (!base_buf_reserve(d->w, n / 2))
		return wire_full(d);
	uint8_t *out = d->w->data + d->w->len;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
		if (hi < 0 || lo < 0)
			return fail(d, "not hex");
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	d->w->len += n / 2;
	return SVC_OK;
}

static svc_errc put_text(dec *d, const json_field *f, json_object *o)
{
	if (json_object_get_type(o) != json_type_string)
		return fail(d, f->hex ? "expected a hex string"
			       : f->fd->type == PROTOBUF_C_TYPE_BYTES ? "expected a base64 string"
								      : "expected a string");
	const char *s = json_object_get_string(o);
	size_t n = (size_t)json_object_get_string_len(o);
	if (f->fd->type == PROTOBUF_C_TYPE_STRING && !base_utf8_valid(s, n))
		return fail(d, "invalid UTF-8");  /* json-c lets some through */
	if (memchr(s, '\0', n))  /* a C string would end there: a build ID cut short */
		return fail(d, "a NUL character (\\u0000) in a string");
	if (!put_tag(d, f, SVC_WIRE_LEN))
		return wire_full(d);
	if (f->fd->type == PROTOBUF_C_TYPE_STRING)  /* its length known: no placeholder */
		return put_varint(d, n) && base_buf_append(d->w, s, n) ? SVC_OK : wire_full(d);
	size_t start = open_len(d);
	if (!start)
		return wire_full(d);
	svc_errc rc = f->hex ? put_hex_decoded(d, s, n) : put_base64_decoded(d, s, n);
	if (rc == SVC_OK && !close_len(d, start))
		return wire_full(d);
	return rc;
}

/* ---- messages ---- */

static svc_errc decode_msg(dec *d, const json_msg *m, json_object *o);

/* One value of f with its tag (one element of a repeated field). */
static svc_errc put_one(dec *d, const json_field *f, json_object *o)
{
	ProtobufCType t = f->fd->type;
	if (t == PROTOBUF_C_TYPE_STRING || t == PROTOBUF_C_TYPE_BYTES)
		return put_text(d, f, o);
	if (t == PROTOBUF_C_TYPE_MESSAGE) {
		size_t start;
		if (!put_tag(d, f, SVC_WIRE_LEN) || !(start = open_len(d)))
			return wire_full(d);
		svc_errc rc = decode_msg(d, f->msg, o);
		if (rc == SVC_OK && !close_len(d, start))
			return wire_full(d);
		return rc;
	}
	uint64_t bits;
	int wt;
	svc_errc rc = scalar_bits(d, f, o, &bits, &wt);
	if (rc != SVC_OK)
		return rc;
	return put_tag(d, f, wt) && put_bits(d, wt, bits) ? SVC_OK : wire_full(d);
}

static svc_errc put_array(dec *d, const json_field *f, json_object *o)
{
	if (json_object_get_type(o) != json_type_array)
		return fail(d, "expected an array");
	size_t n = json_object_array_length(o), start = 0;
	if (!n)
		return SVC_OK;
	if (f->packed) {
		if (!put_tag(d, f, SVC_WIRE_LEN) || !(start = open_len(d)))
			return wire_full(d);
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);
		svc_errc rc = SVC_OK;
		if (!e) {
			rc = fail(d, "null in a list");
		} else if (f->packed) {
			uint64_t bits;
			int wt;
			rc = scalar_bits(d, f, e, &bits, &wt);
			if (rc == SVC_OK && !put_bits(d, wt, bits))
				rc = wire_full(d);
		} else {
			rc = put_one(d, f, e);
		}
		if (rc != SVC_OK) {
			if (rc == SVC_E_INVALID)
				prepend(d, NULL, (long)i);
			return rc;
		}
	}
	return f->packed && !close_len(d, start) ? wire_full(d) : SVC_OK;
}

/* The field named key (its JSON name or its .proto name); NULL: unknown. */
static const json_field *find(const json_msg *m, const char *key)
{
	for (unsigned i = 0; i < m->n_fields; i++)
		if (!strcmp(m->fields[i].json_name, key) || !strcmp(m->fields[i].fd->name, key))
			return &m->fields[i];
	return NULL;
}

static svc_errc decode_msg(dec *d, const json_msg *m, json_object *o)
{
	if (json_object_get_type(o) != json_type_object)
		return fail(d, "expected an object");
	if (++d->depth > SVC_RPC_JSON_MAX_DEPTH)
		return fail(d, "nested too deep");
	json_object_object_foreach(o, key, val) {
		const json_field *f = find(m, key);
		if (!f || !val)
			continue;  /* unknown fields are ignored (Connect-Go's way); null: default */
		svc_errc rc = f->repeated ? put_array(d, f, val) : put_one(d, f, val);
		if (rc != SVC_OK) {
			if (rc == SVC_E_INVALID)
				prepend(d, f->json_name, -1);
			return rc;
		}
	}
	d->depth--;
	return SVC_OK;
}

/* ---- the text ---- */

/* The error of a fail(), with the field's path when there is one. */
static svc_errc named(dec *d)
{
	d->path[sizeof(d->path) - 1] = '\0';
	if (d->pstart == sizeof(d->path) - 1)
		return svc_error_set(d->err, SVC_E_INVALID, "invalid JSON request: %s", d->what);
	return svc_error_set(d->err, SVC_E_INVALID, "invalid JSON request: field %s: %s",
			     d->path + d->pstart, d->what);
}

static bool only_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

svc_errc json_ref_decode(const svc_rpc_json *j, const char *text, size_t len,
			     size_t max_containers, base_buf *wire, svc_error *err)
{
	dec d = {.w = wire, .err = err, .pstart = sizeof(d.path) - 1};
	if (len == 0)
		return fail(&d, "an empty body is not a JSON object"), named(&d);
	if (len > INT_MAX)
		return svc_error_set(err, SVC_E_TOO_LARGE, "JSON request too large");
	bool single_quote = false, huge_int = false;
	size_t containers = svc_rpc_json_prescan(text, len, &single_quote, &huge_int);
	if (single_quote)
		return svc_error_set(err, SVC_E_INVALID,
				     "invalid JSON request: a single-quoted string (JSON quotes with \")");
	if (huge_int)
		return svc_error_set(err, SVC_E_INVALID,
				     "invalid JSON request: an integer past 64 bits (no field holds it)");
	if (containers > max_containers)
		return svc_error_set(err, SVC_E_TOO_LARGE,
				     "JSON request of %zu objects and arrays is over the limit of %zu",
				     containers, max_containers);
	json_tokener *tok = json_tokener_new_ex(SVC_RPC_JSON_MAX_DEPTH);
	if (!tok)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	svc_errc rc;
	if (jerr == json_tokener_continue)
		rc = fail(&d, "the JSON text ends early");  /* named below */
	else if (jerr != json_tokener_success || !o)
		rc = svc_error_set(err, SVC_E_INVALID, "invalid JSON request: %s at byte %zu",
				   json_tokener_error_desc(jerr), end);
	else if (!only_space(text + end, len - end))
		rc = svc_error_set(err, SVC_E_INVALID, "invalid JSON request: bytes after the value");
	else
		rc = decode_msg(&d, &j->msgs[0], o);
	json_object_put(o);
	return rc == SVC_E_INVALID && d.what ? named(&d) : rc;
}
