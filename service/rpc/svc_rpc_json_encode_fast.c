// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_encode_fast: the encoder's fast path (svc_rpc_json_encode.c
 * has the rest) for a message of 64 fields or fewer as encoders write it:
 * each field once, a repeated field's elements in one run. A field's one-byte
 * tag picks its way from the message's table (json_msg.fast, built in
 * svc_rpc_json.c): a singular integer, a string, a message, singular or
 * repeated, is written here with the output's end and room held in
 * registers; anything else (another type, a longer tag, a wire type that does
 * not match, an unknown field) goes to svc_rpc_json_encode_field, and a field
 * met twice sends the whole message to the slow path (JSON_RETRY). A run of
 * strings or of small messages (a Line, a Function, a LocationResult) goes
 * first to svc_rpc_json_encode_plain.c, which writes what it can of it
 * without a check per field. The bytes are the same as the general path's.
 */
#include <string.h>

#include "service/rpc/svc_rpc_json_encode_impl.h"

static bool plain_byte(uint8_t c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* s as a quoted JSON string at q, when no byte of it needs care (q has room
 * for n + 10 bytes); NULL when one does. */
JSON_HOT uint8_t *put_plain(uint8_t *q, const uint8_t *s, size_t n)
{
	uint64_t w;
	*q++ = '"';
	if (n >= 8) {
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			memcpy(&w, s + i, 8);
			if (json_care_mask(w))
				return NULL;
			memcpy(q + i, &w, 8);
		}
		memcpy(&w, s + n - 8, 8);  /* the tail, overlapping what was checked */
		if (json_care_mask(w))
			return NULL;
		memcpy(q + n - 8, &w, 8);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (!plain_byte(s[i]))
				return NULL;
			q[i] = s[i];
		}
	}
	q += n;
	*q++ = '"';
	return q;
}

/* A string after a ',' when comma: written in place when plain, else by
 * svc_rpc_json_put_string (escapes, UTF-8, exact room). */
JSON_HOT bool put_string(base_buf *b, uint8_t **q, uint8_t **lim, const uint8_t *s, size_t n,
		    bool comma)
{
	if ((size_t)(*lim - *q) >= n + 11) {
		uint8_t *d = *q;
		*d = ',';
		d = put_plain(d + comma, s, n);
		if (d) {
			*q = d;
			return true;
		}
	}
	if (comma && !json_room_at(b, q, lim, 1))
		return false;
	if (comma)
		*(*q)++ = ',';
	b->len = (size_t)(*q - b->data);
	if (!svc_rpc_json_put_string(b, s, n))
		return false;
	*q = b->data + b->len;
	*lim = b->data + b->cap;
	return true;
}

/* Whether a value of wire type wt (not LEN) reads at p. */
static bool value_reads(int wt, const uint8_t *p, const uint8_t *end)
{
	uint64_t v;
	return (wt == SVC_WIRE_VARINT && svc_wire_get_varint(&p, end, &v)) ||
	       (wt == SVC_WIRE_I64 && end - p >= 8) || (wt == SVC_WIRE_I32 && end - p >= 4);
}

/* A sub-message (svc_rpc_json_encode_msg, with this path's table taken
 * straight when it applies). */
static svc_errc put_msg(json_enc *e, const json_msg *m, const uint8_t *p, const uint8_t *end)
{
	if (m->n_fields > 64 || e->depth >= SVC_RPC_JSON_MAX_DEPTH)
		return svc_rpc_json_encode_msg(e, m, p, end);
	size_t mark = e->b->len;
	e->depth++;
	svc_errc rc = svc_rpc_json_encode_table(e, m, p, end);
	e->depth--;
	if (rc == JSON_RETRY) {
		e->b->len = mark;
		rc = svc_rpc_json_encode_msg(e, m, p, end);
	}
	return rc;
}

/*
 * A message of singular integers only (m->leaf) at *q, as
 * svc_rpc_json_encode_table writes it (the same room asked at the same
 * places) but without a call: JSON_RETRY when the wire has anything else (a
 * field twice, another wire type, a longer tag, an unknown field, malformed
 * bytes), for the general way to write it again.
 */
JSON_HOT svc_errc put_leaf(base_buf *b, const json_msg *m, const uint8_t *p, const uint8_t *end,
		      uint8_t **q, uint8_t **lim)
{
	if (!json_room_at(b, q, lim, 1))
		return SVC_E_NOMEM;
	size_t open = (size_t)(*q - b->data);  /* an offset: the buffer may move */
	uint64_t seen = 0;
	size_t pend = 1;
	while (p < end) {
		uint8_t tag = *p;
		const json_fast *h = &m->fast[tag & 0x7f];
		uint64_t v, bit = 1ull << h->index;
		if (tag >= 0x80 || h->kind == JSON_FAST_NONE)
			return JSON_RETRY;
		p++;
		if (!json_get_varint(&p, end, &v) || (seen & bit))
			return JSON_RETRY;
		seen |= bit;
		if (!v)
			continue;
		if (!json_room_at(b, q, lim, JSON_KEY_ROOM(h->f) + pend))
			return SVC_E_NOMEM;
		*q = json_put_int(*q, h, v);
		pend = 0;
	}
	if (!json_room_at(b, q, lim, 1 + pend))
		return SVC_E_NOMEM;
	if (pend)
		*(*q)++ = '{';  /* no field */
	else
		b->data[open] = '{';
	*(*q)++ = '}';
	return SVC_OK;
}

/*
 * A field's run (one value when singular) of strings or messages, its ','
 * and key written, its first value at data, *p past it; *p moves past the
 * run. A repeated field's elements are each written after a ',', the first
 * one's made its '['. b->len is the output's end, before and after.
 */
static svc_errc put_run(json_enc *e, const json_msg *m, const json_fast *h, uint8_t tag,
			const uint8_t *data, size_t len, const uint8_t **p, const uint8_t *end)
{
	base_buf *b = e->b;
	size_t open = b->len;
	bool many = h->kind == JSON_FAST_STRINGS || h->kind == JSON_FAST_MSGS;
	uint8_t *q = b->data + b->len, *lim = b->data + b->cap;
	bool malformed = false;  /* at the run's end: after its ']', as the general path */
	for (;;) {
		if (h->kind <= JSON_FAST_STRINGS) {
			if (!svc_rpc_json_put_plain_strings(tag, many, data, len, p, end, &q, lim) &&
			    !put_string(b, &q, &lim, data, len, many))
				return SVC_E_NOMEM;
		} else if (svc_rpc_json_put_plain_run(h->f->msg, tag, many, data, len, p, end, &q,
						      lim, e->depth)) {
			/* this element written, and maybe more of the run: *p past them */
		} else {
			if (!json_room_at(b, &q, &lim, 1))
				return SVC_E_NOMEM;
			*q = ',';
			q += many;
			size_t at = (size_t)(q - b->data);
			svc_errc rc = JSON_RETRY;
			if (h->f->msg->leaf && e->depth < SVC_RPC_JSON_MAX_DEPTH)
				rc = put_leaf(b, h->f->msg, data, data + len, &q, &lim);
			if (rc == JSON_RETRY) {
				b->len = at;
				rc = put_msg(e, h->f->msg, data, data + len);
				q = b->data + b->len, lim = b->data + b->cap;
			}
			if (rc != SVC_OK)
				return rc;
		}
		if (!many || *p >= end)
			break;
		const uint8_t *at = *p;
		uint64_t t;
		if (*at == tag) {
			at++;
		} else if (!svc_wire_get_varint(&at, end, &t) || t >> 3 != h->f->fd->id) {
			break;  /* not this field (or, malformed, met again outside) */
		} else if ((t & 7) != SVC_WIRE_LEN) {  /* this field, another wire type */
			if (value_reads((int)(t & 7), at, end))
				return svc_error_set(e->err, SVC_E_INTERNAL, "response field %s: %s",
						     h->f->fd->name,
						     "wire type does not match the field's type");
			malformed = true;
			break;
		}
		if (!json_get_bytes(&at, end, &data, &len)) {
			malformed = true;
			break;
		}
		*p = at;
	}
	if (many) {
		if (!json_room_at(b, &q, &lim, 1))
			return SVC_E_NOMEM;
		b->data[open] = '[';
		*q++ = ']';
	}
	if (malformed) {
		b->len = (size_t)(q - b->data);
		return svc_error_set(e->err, SVC_E_INTERNAL, "response: malformed %s", m->d->name);
	}
	b->len = (size_t)(q - b->data);
	return SVC_OK;
}

/* Any field svc_rpc_json_encode_field writes, after a ',' (b->len the
 * output's end). */
static __attribute__((noinline)) svc_errc put_other(json_enc *e, const json_msg *m,
						     const uint8_t **p, const uint8_t *end,
						     uint64_t *seen, size_t *pend)
{
	field_set set = {*seen, NULL};
	set.bits = &set.small;
	bool first = *pend;
	size_t open = e->b->len;
	if (first)  /* the '{' written first, as the general path does (room: at the start) */
		e->b->data[e->b->len++] = '{';
	svc_errc rc = svc_rpc_json_encode_field(e, m, p, end, &first, &set);
	*seen = set.small;
	if (rc == SVC_OK && *pend && first)
		e->b->len = open;  /* nothing written: the '{' still to come */
	else if (rc == SVC_OK)
		*pend = 0;
	return rc;
}

/*
 * Each field is written after a ',', the first one's made the '{' at the end
 * (open: where it is). The room asked for is the general path's at the same
 * length of output (pend: the 1 byte of the '{' not yet written), so that a
 * JSON cap is met at the same place.
 */
svc_errc svc_rpc_json_encode_table(json_enc *e, const json_msg *m, const uint8_t *p,
				   const uint8_t *end)
{
	base_buf *b = e->b;
	if (!json_room(b, 1))  /* b->data is not NULL from here on */
		return SVC_E_NOMEM;
	size_t open = b->len, pend = 1;
	uint8_t *q = b->data + b->len, *lim = b->data + b->cap;
	uint64_t seen = 0;
	svc_errc rc;
	while (p < end) {
		uint8_t tag = *p;
		const json_fast *h = &m->fast[tag & 0x7f];
		if (tag >= 0x80 || h->kind == JSON_FAST_NONE) {
			const uint8_t *at = p;
			uint64_t seen2 = seen;  /* not seen itself: it stays in a register */
			size_t pend2 = pend;
			b->len = (size_t)(q - b->data);
			rc = put_other(e, m, &at, end, &seen2, &pend2);
			if (rc != SVC_OK)
				return rc;
			p = at, seen = seen2, pend = pend2;
			q = b->data + b->len, lim = b->data + b->cap;
			continue;
		}
		p++;
		const json_field *f = h->f;
		uint64_t bit = 1ull << h->index, v;
		const uint8_t *data = NULL;
		size_t len = 0;
		bool ok = h->kind <= JSON_FAST_I32 ? json_get_varint(&p, end, &v)
						   : json_get_bytes(&p, end, &data, &len);
		if (!ok)
			return svc_error_set(e->err, SVC_E_INTERNAL, "response: malformed %s",
					     m->d->name);
		if (seen & bit)
			return JSON_RETRY;
		seen |= bit;
		if (h->kind <= JSON_FAST_I32) {
			if (!v)
				continue;  /* proto3's default: omitted */
			if (!json_room_at(b, &q, &lim, JSON_KEY_ROOM(f) + pend))
				return SVC_E_NOMEM;
			q = json_put_int(q, h, v);
			pend = 0;
			continue;
		}
		if (h->kind == JSON_FAST_STRING && !len)
			continue;
		if (!json_room_at(b, &q, &lim, JSON_KEY_ROOM(f) + pend))
			return SVC_E_NOMEM;
		pend = 0;
		memcpy(q, h->key, JSON_KEY_PAD);
		q += h->key_len;
		const uint8_t *at = p;
		b->len = (size_t)(q - b->data);
		rc = put_run(e, m, h, tag, data, len, &at, end);
		if (rc != SVC_OK)
			return rc;
		p = at;
		q = b->data + b->len, lim = b->data + b->cap;
	}
	if (!json_room_at(b, &q, &lim, 1 + pend))
		return SVC_E_NOMEM;
	if (pend)
		*q++ = '{';  /* no field */
	else
		b->data[open] = '{';
	*q++ = '}';
	b->len = (size_t)(q - b->data);
	return SVC_OK;
}
