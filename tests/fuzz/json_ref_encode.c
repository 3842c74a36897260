// SPDX-License-Identifier: Apache-2.0
/*
 * json_ref_encode: the Connect JSON encoder as it was before the table-driven
 * fast path (service/rpc/svc_rpc_json_encode_fast.c), with the number writer
 * of that time (a digit-pair loop) and its scalar writers. Kept, unchanged but
 * for names, only as the reference fuzz_json_encode_differential compares the
 * encoder with: same code, same JSON bytes.
 *
 * (As it was:) a message's wire bytes -> its proto3 JSON, written straight
 * into a buffer from the descriptors. The fields are written in the order
 * they first appear in the wire; a repeated field's elements, wherever they
 * are in the message, make one array (the first occurrence gathers them all;
 * later ones are skipped).
 */
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_wire.h"
#include "json_ref_encode.h"

/* ---- the number writer of that time ---- */

static uint8_t *ref_write_number(uint8_t *p, uint64_t v, bool neg, bool quoted)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	if (quoted)
		*p++ = '"';
	if (neg)
		*p++ = '-';
	unsigned digits = 1;
	for (uint64_t x = v; x >= 10; x /= 10)  /* the encoder's digit count is gone */
		digits++;
	uint8_t *e = p + digits, *s = e;
	while (v >= 100) {
		unsigned k = (unsigned)(v % 100) * 2;
		v /= 100;
		*--s = (uint8_t)pairs[k + 1];
		*--s = (uint8_t)pairs[k];
	}
	if (v >= 10) {
		*--s = (uint8_t)pairs[v * 2 + 1];
		*--s = (uint8_t)pairs[v * 2];
	} else {
		*--s = (uint8_t)('0' + v);
	}
	if (quoted)
		*e++ = '"';
	return e;
}

static bool ref_put_number(base_buf *b, uint64_t v, bool neg, bool quoted)
{
	uint8_t *p = json_room(b, JSON_NUMBER_MAX);
	if (!p)
		return false;
	b->len = (size_t)(ref_write_number(p, v, neg, quoted) - b->data);
	return true;
}

static bool ref_put_i64(base_buf *b, int64_t v, bool quoted)
{
	return ref_put_number(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0, quoted);
}

/* ---- the wire ---- */

/* A field's value as read from the wire. */
typedef struct wire_value {
	int type;               /* SVC_WIRE_* */
	uint64_t v;             /* VARINT, I64, I32 */
	const uint8_t *data;    /* LEN */
	size_t len;
} wire_value;

/* Reads a field (tag and value) at *p; false when malformed or a group. */
static inline __attribute__((always_inline)) bool read_field(const uint8_t **p, const uint8_t *end,
							     uint32_t *id, wire_value *w)
{
	uint64_t tag;
	if (*p < end && **p < 0x80)
		tag = *(*p)++;  /* fields 1 to 15: one byte */
	else if (!svc_wire_get_varint(p, end, &tag))
		return false;
	if (tag >> 3 == 0 || tag >> 3 > UINT32_MAX)
		return false;
	*id = (uint32_t)(tag >> 3);
	w->type = (int)(tag & 7);
	switch (w->type) {
	case SVC_WIRE_VARINT:
		if (*p < end && **p < 0x80) {
			w->v = *(*p)++;
			return true;
		}
		return svc_wire_get_varint(p, end, &w->v);
	case SVC_WIRE_I64:
	case SVC_WIRE_I32: {
		size_t n = w->type == SVC_WIRE_I64 ? 8 : 4;
		if ((size_t)(end - *p) < n)
			return false;
		w->v = 0;
		for (size_t i = 0; i < n; i++)
			w->v |= (uint64_t)(*p)[i] << (8 * i);
		*p += n;
		return true;
	}
	case SVC_WIRE_LEN: {
		uint64_t n;
		if (!svc_wire_get_varint(p, end, &n) || n > (uint64_t)(end - *p))
			return false;
		w->data = *p;
		w->len = (size_t)n;
		*p += n;
		return true;
	}
	default:
		return false;
	}
}

/* ---- values ---- */

typedef struct ref_enc {
	base_buf *b;
	svc_error *err;
	int depth;
} enc;

static svc_errc bad(enc *e, const json_field *f, const char *what)
{
	return svc_error_set(e->err, SVC_E_INTERNAL, "response field %s: %s", f->fd->name, what);
}

static svc_errc encode_msg(enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end);

/* Whether a singular value is proto3's default (omitted). */
static bool is_default(const json_field *f, const wire_value *w)
{
	if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		return false;
	return w->type == SVC_WIRE_LEN ? w->len == 0 : w->v == 0;
}

static bool put_enum(base_buf *b, const ProtobufCEnumDescriptor *d, int32_t v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(d, v);
	if (!ev)
		return ref_put_i64(b, v, false);
	size_t n = strlen(ev->name);
	return json_put_char(b, '"') && json_put(b, ev->name, n) && json_put_char(b, '"');
}

/*
 * An integer of f's type from its bits, as a magnitude, a sign and whether it
 * is quoted (64-bit); false for a type that is not an integer.
 */
static inline bool integer_of(const json_field *f, uint64_t v, uint64_t *mag, bool *neg,
			      bool *quoted)
{
	int64_t s;
	switch (f->type) {
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*mag = v, *neg = false, *quoted = true;
		return true;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*mag = (uint32_t)v, *neg = false, *quoted = false;
		return true;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		s = (int64_t)v, *quoted = true;
		break;
	case PROTOBUF_C_TYPE_SINT64:
		s = (int64_t)(v >> 1 ^ -(v & 1)), *quoted = true;
		break;
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		s = (int32_t)(uint32_t)v, *quoted = false;
		break;
	case PROTOBUF_C_TYPE_SINT32:
		s = (int32_t)((uint32_t)v >> 1 ^ -(uint32_t)(v & 1)), *quoted = false;
		break;
	default:
		return false;
	}
	*neg = s < 0;
	*mag = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
	return true;
}

/* A scalar of f's type from its bits. */
static bool put_scalar(base_buf *b, const json_field *f, uint64_t v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return ref_put_i64(b, (int32_t)(uint32_t)v, false);
	case PROTOBUF_C_TYPE_SINT32:
		return ref_put_i64(b, (int32_t)((uint32_t)v >> 1 ^ -(uint32_t)(v & 1)), false);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return ref_put_number(b, (uint32_t)v, false, false);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return ref_put_i64(b, (int64_t)v, true);
	case PROTOBUF_C_TYPE_SINT64:
		return ref_put_i64(b, (int64_t)(v >> 1 ^ -(v & 1)), true);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return ref_put_number(b, v, false, true);
	case PROTOBUF_C_TYPE_BOOL:
		return v ? json_put(b, "true", 4) : json_put(b, "false", 5);
	case PROTOBUF_C_TYPE_ENUM:
		if (f->enum_number)
			return ref_put_i64(b, (int32_t)(uint32_t)v, false);
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

/* Every element of a packed run of f's scalars, each after a ',' but the first. */
static svc_errc put_packed(enc *e, const json_field *f, const wire_value *w, size_t *count)
{
	const uint8_t *p = w->data, *end = w->data + w->len;
	int wt = f->wire_type;
	while (p < end) {
		uint64_t v = 0;
		if (wt == SVC_WIRE_VARINT) {
			if (!svc_wire_get_varint(&p, end, &v))
				return bad(e, f, "malformed packed varint");
		} else {
			size_t n = wt == SVC_WIRE_I64 ? 8 : 4;
			if ((size_t)(end - p) < n)
				return bad(e, f, "truncated packed value");
			for (size_t i = 0; i < n; i++)
				v |= (uint64_t)p[i] << (8 * i);
			p += n;
		}
		if ((*count && !json_put_char(e->b, ',')) || !put_scalar(e->b, f, v))
			return SVC_E_NOMEM;
		++*count;
	}
	return SVC_OK;
}

/* One value of f (one element of a repeated field; a packed run: several). */
static svc_errc put_value(enc *e, const json_field *f, const wire_value *w, size_t *count)
{
	ProtobufCType t = f->type;
	if (f->packable && w->type == SVC_WIRE_LEN)
		return put_packed(e, f, w, count);
	if (w->type != f->wire_type)
		return bad(e, f, "wire type does not match the field's type");
	if (*count && !json_put_char(e->b, ','))
		return SVC_E_NOMEM;
	++*count;
	switch (t) {
	case PROTOBUF_C_TYPE_STRING:
		return svc_rpc_json_put_string(e->b, w->data, w->len) ? SVC_OK : SVC_E_NOMEM;
	case PROTOBUF_C_TYPE_BYTES:
		if (f->hex)
			return svc_rpc_json_put_hex(e->b, w->data, w->len) ? SVC_OK : SVC_E_NOMEM;
		return svc_rpc_json_put_base64(e->b, w->data, w->len) ? SVC_OK : SVC_E_NOMEM;
	case PROTOBUF_C_TYPE_MESSAGE:
		return encode_msg(e, f->msg, w->data, w->data + w->len);
	default:
		return put_scalar(e->b, f, w->v) ? SVC_OK : SVC_E_NOMEM;
	}
}

/* ---- messages ---- */

/* f's elements from p (its first occurrence) to the message's end, as an array. */
static svc_errc put_repeated(enc *e, const json_field *f, const uint8_t *p, const uint8_t *end)
{
	size_t mark = e->b->len, count = 0;
	if (!json_put(e->b, f->key, f->key_len) || !json_put_char(e->b, '['))
		return SVC_E_NOMEM;
	while (p < end) {
		uint32_t id;
		wire_value w;
		if (!read_field(&p, end, &id, &w))
			return bad(e, f, "malformed message");
		if (id != f->fd->id)
			continue;
		svc_errc rc = put_value(e, f, &w, &count);
		if (rc != SVC_OK)
			return rc;
	}
	if (!count) {  /* empty packed runs only: omitted, as an empty list is */
		e->b->len = mark;
		return SVC_OK;
	}
	return json_put_char(e->b, ']') ? SVC_OK : SVC_E_NOMEM;
}

/* A singular f: its last value in the message (w: the first one, at p). */
static svc_errc put_singular(enc *e, const json_field *f, wire_value w, const uint8_t *p,
			     const uint8_t *end)
{
	while (p < end) {
		uint32_t id;
		wire_value later;
		if (!read_field(&p, end, &id, &later))
			return bad(e, f, "malformed message");
		if (id == f->fd->id)
			w = later;
	}
	if (is_default(f, &w))
		return SVC_OK;
	size_t count = 0;  /* no ',' from put_value: the caller wrote it */
	if (!json_put(e->b, f->key, f->key_len))
		return SVC_E_NOMEM;
	return put_value(e, f, &w, &count);
}

/* Fields already written: a bit per field (a small message's on the stack). */

static bool set_init(field_set *s, unsigned n)
{
	s->small = 0;
	s->bits = n > 64 ? calloc((n + 63) / 64, 8) : &s->small;
	return s->bits != NULL;
}

static void set_deinit(field_set *s)
{
	if (s->bits != &s->small)
		free(s->bits);
}

/* Whether k was in the set (and puts it in). */
static bool ref_set_test_add(field_set *s, size_t k)
{
	bool was = s->bits[k / 64] >> (k % 64) & 1;
	s->bits[k / 64] |= 1ull << (k % 64);
	return was;
}

/* The slow path, for any message: each field's first occurrence gathers the
 * rest (a repeated field's elements, a singular field's last value). */
static svc_errc encode_slow(enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end)
{
	field_set done;
	if (!set_init(&done, m->n_fields))
		return SVC_E_NOMEM;
	svc_errc rc = json_put_char(e->b, '{') ? SVC_OK : SVC_E_NOMEM;
	bool first = true;
	while (rc == SVC_OK && p < end) {
		uint32_t id;
		wire_value w;
		const uint8_t *at = p;
		if (!read_field(&p, end, &id, &w)) {
			rc = svc_error_set(e->err, SVC_E_INTERNAL, "response: malformed %s",
					   m->d->name);
			break;
		}
		const json_field *f = json_msg_field(m, id);
		if (!f || ref_set_test_add(&done, (size_t)(f - m->fields)))
			continue;  /* unknown (dropped, as protojson does) or written */
		size_t before = e->b->len;
		if (!first && !json_put_char(e->b, ',')) {
			rc = SVC_E_NOMEM;
			break;
		}
		size_t after_comma = e->b->len;
		rc = f->repeated ? put_repeated(e, f, at, end) : put_singular(e, f, w, p, end);
		if (e->b->len == after_comma)
			e->b->len = before;  /* nothing written (a default): no ',' either */
		else
			first = false;
	}
	set_deinit(&done);
	if (rc == SVC_OK && !json_put_char(e->b, '}'))
		rc = SVC_E_NOMEM;
	return rc;
}

#define RETRY SVC_E_N_CODES  /* the fast path met a field twice: take the slow one */

/* A singular varint field (not a default), after a ',' unless first: an
 * integer written in the same room as its key. */
static inline svc_errc put_varint_field(enc *e, const json_field *f, uint64_t v, bool first)
{
	uint8_t *q = json_room(e->b, JSON_KEY_ROOM(f));
	if (!q)
		return SVC_E_NOMEM;
	if (!first)
		*q++ = ',';
	q = json_write_key(q, f);
	uint64_t mag;
	bool neg, quoted;
	if (integer_of(f, v, &mag, &neg, &quoted)) {
		e->b->len = (size_t)(ref_write_number(q, mag, neg, quoted) - e->b->data);
		return SVC_OK;
	}
	e->b->len = (size_t)(q - e->b->data);
	return put_scalar(e->b, f, v) ? SVC_OK : SVC_E_NOMEM;
}

/*
 * Any other field, its first value w read, *p past it: a repeated field's
 * whole run (*p moved past it). *wrote: whether anything was written (not an
 * empty packed run).
 */
static svc_errc put_field_run(enc *e, const json_field *f, wire_value w, const uint8_t **p,
			      const uint8_t *end, bool first, bool *wrote)
{
	size_t before = e->b->len, count = 0;
	uint8_t *q = json_room(e->b, JSON_KEY_ROOM(f));
	if (!q)
		return SVC_E_NOMEM;
	if (!first)
		*q++ = ',';
	q = json_write_key(q, f);
	if (f->repeated)
		*q++ = '[';
	e->b->len = (size_t)(q - e->b->data);
	svc_errc rc = put_value(e, f, &w, &count);
	/* The rest of a repeated field's run. */
	while (rc == SVC_OK && f->repeated && *p < end) {
		const uint8_t *next = *p;
		uint32_t nid;
		if (!read_field(&next, end, &nid, &w) || nid != f->fd->id)
			break;
		*p = next;
		rc = put_value(e, f, &w, &count);
	}
	if (rc != SVC_OK)
		return rc;
	*wrote = count != 0;
	if (!count)
		e->b->len = before;  /* empty packed runs: nothing */
	else if (f->repeated && !json_put_char(e->b, ']'))
		return SVC_E_NOMEM;
	return SVC_OK;
}

/*
 * The fast path, for messages as encoders write them (each field once, a
 * repeated field's elements in one run): one read of each field. RETRY when
 * the message is not so. The fields seen: a bit each, in a register for a
 * message of 64 fields or fewer.
 */
static svc_errc encode_fast(enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end)
{
	field_set big = {0, NULL};
	uint64_t seen = 0;
	if (m->n_fields > 64 && !set_init(&big, m->n_fields))
		return SVC_E_NOMEM;
	svc_errc rc = json_put_char(e->b, '{') ? SVC_OK : SVC_E_NOMEM;
	bool first = true;
	while (rc == SVC_OK && p < end) {
		uint32_t id;
		wire_value w;
		if (!read_field(&p, end, &id, &w)) {
			rc = svc_error_set(e->err, SVC_E_INTERNAL, "response: malformed %s",
					   m->d->name);
			break;
		}
		const json_field *f = json_msg_field(m, id);
		if (!f)
			continue;
		size_t k = (size_t)(f - m->fields);
		bool again = big.bits ? ref_set_test_add(&big, k) : seen >> k & 1;
		seen |= 1ull << (k & 63);
		if (again) {
			rc = RETRY;
			break;
		}
		if (!f->repeated && is_default(f, &w))
			continue;
		if (!f->repeated && w.type == SVC_WIRE_VARINT && f->wire_type == SVC_WIRE_VARINT) {
			rc = put_varint_field(e, f, w.v, first);  /* the common case */
			first = false;
			continue;
		}
		bool wrote = false;
		rc = put_field_run(e, f, w, &p, end, first, &wrote);
		if (wrote)
			first = false;
	}
	if (big.bits)
		set_deinit(&big);
	if (rc == SVC_OK && !json_put_char(e->b, '}'))
		rc = SVC_E_NOMEM;
	return rc;
}

static svc_errc encode_msg(enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end)
{
	if (++e->depth > SVC_RPC_JSON_MAX_DEPTH)
		return svc_error_set(e->err, SVC_E_INTERNAL, "response nested too deep");
	size_t mark = e->b->len;
	svc_errc rc = encode_fast(e, m, p, end);
	if (rc == RETRY) {
		e->b->len = mark;
		rc = encode_slow(e, m, p, end);
	}
	e->depth--;
	return rc;
}

svc_errc json_ref_encode(const svc_rpc_json *j, const uint8_t *wire, size_t len, base_buf *out,
			 svc_error *err)
{
	enc e = {.b = out, .err = err};
	static const uint8_t none[1];
	if (!wire)  /* an empty message: no bytes, maybe no buffer */
		wire = none;
	svc_errc rc = encode_msg(&e, &j->msgs[0], wire, wire + len);
	if (rc == SVC_E_NOMEM || out->over || out->nomem) {
		rc = out->over ? SVC_E_TOO_LARGE : SVC_E_NOMEM;
		svc_error_set(err, rc, "%s", rc == SVC_E_TOO_LARGE ? "JSON response over its cap"
								   : "out of memory writing JSON");
	}
	return rc;
}
