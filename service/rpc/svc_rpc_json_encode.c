// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_encode: a message's wire bytes -> its proto3 JSON
 * (svc_rpc_json.h), written straight into a buffer from the descriptors: no
 * unpacked message and no JSON tree, since a big SymbolizeResponse is a hot
 * path. The fields are written in the order they first appear in the wire;
 * a repeated field's elements, wherever they are in the message, make one
 * array (the first occurrence gathers them all; later ones are skipped).
 * A message of 64 fields or fewer goes first to the table-driven fast path
 * (svc_rpc_json_encode_fast.c), which hands this file's general step any
 * field it does not write itself; a field met twice: the slow path here.
 */
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_wire.h"

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

typedef json_enc enc;

static svc_errc bad(enc *e, const json_field *f, const char *what)
{
	return svc_error_set(e->err, SVC_E_INTERNAL, "response field %s: %s", f->fd->name, what);
}

#define encode_msg svc_rpc_json_encode_msg

/* Whether a singular value is proto3's default (omitted). */
static bool is_default(const json_field *f, const wire_value *w)
{
	if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		return false;
	return w->type == SVC_WIRE_LEN ? w->len == 0 : w->v == 0;
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
		if ((*count && !json_put_char(e->b, ',')) || !svc_rpc_json_put_scalar(e->b, f, v))
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
		return svc_rpc_json_put_scalar(e->b, f, w->v) ? SVC_OK : SVC_E_NOMEM;
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
		if (!f || set_test_add(&done, (size_t)(f - m->fields)))
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

#define RETRY JSON_RETRY

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
		e->b->len = (size_t)(json_write_number(q, mag, neg, quoted) - e->b->data);
		return SVC_OK;
	}
	e->b->len = (size_t)(q - e->b->data);
	return svc_rpc_json_put_scalar(e->b, f, v) ? SVC_OK : SVC_E_NOMEM;
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

svc_errc svc_rpc_json_encode_field(json_enc *e, const json_msg *m, const uint8_t **p,
				   const uint8_t *end, bool *first, field_set *seen)
{
	uint32_t id;
	wire_value w;
	if (!read_field(p, end, &id, &w))
		return svc_error_set(e->err, SVC_E_INTERNAL, "response: malformed %s", m->d->name);
	const json_field *f = json_msg_field(m, id);
	if (!f)
		return SVC_OK;
	if (set_test_add(seen, (size_t)(f - m->fields)))
		return RETRY;
	if (!f->repeated && is_default(f, &w))
		return SVC_OK;
	svc_errc rc;
	if (!f->repeated && w.type == SVC_WIRE_VARINT && f->wire_type == SVC_WIRE_VARINT) {
		rc = put_varint_field(e, f, w.v, *first);  /* the common case */
		*first = false;
		return rc;
	}
	bool wrote = false;
	rc = put_field_run(e, f, w, p, end, *first, &wrote);
	if (wrote)
		*first = false;
	return rc;
}

/*
 * The fast path for a message of more than 64 fields (svc_rpc_json_encode_table
 * takes the others): as encoders write them (each field once, a repeated
 * field's elements in one run), one read of each field; RETRY when the
 * message is not so.
 */
static svc_errc encode_wide(enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end)
{
	field_set seen;
	if (!set_init(&seen, m->n_fields))
		return SVC_E_NOMEM;
	svc_errc rc = json_put_char(e->b, '{') ? SVC_OK : SVC_E_NOMEM;
	bool first = true;
	while (rc == SVC_OK && p < end)
		rc = svc_rpc_json_encode_field(e, m, &p, end, &first, &seen);
	set_deinit(&seen);
	if (rc == SVC_OK && !json_put_char(e->b, '}'))
		rc = SVC_E_NOMEM;
	return rc;
}

svc_errc svc_rpc_json_encode_msg(json_enc *e, const json_msg *m, const uint8_t *p,
				 const uint8_t *end)
{
	if (++e->depth > SVC_RPC_JSON_MAX_DEPTH)
		return svc_error_set(e->err, SVC_E_INTERNAL, "response nested too deep");
	size_t mark = e->b->len;
	svc_errc rc = m->n_fields <= 64 ? svc_rpc_json_encode_table(e, m, p, end)
					: encode_wide(e, m, p, end);
	if (rc == RETRY) {
		e->b->len = mark;
		rc = encode_slow(e, m, p, end);
	}
	e->depth--;
	return rc;
}

svc_errc svc_rpc_json_encode(const svc_rpc_json *j, const uint8_t *wire, size_t len,
			     base_buf *out, svc_error *err)
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
