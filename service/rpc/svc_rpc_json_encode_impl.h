/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_encode_impl: the inline steps the encoder's fast paths share
 * (svc_rpc_json_encode_fast.c: a message by its table; svc_rpc_json_encode_plain.c:
 * runs of small messages written without a check per field): room at the
 * output's end held in registers, varints and lengths read inline, an
 * integer field written after its ',' and key. Not for use outside
 * service/rpc/.
 */
#ifndef SVC_RPC_JSON_ENCODE_IMPL_H
#define SVC_RPC_JSON_ENCODE_IMPL_H

#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_wire.h"

#define JSON_HOT static inline __attribute__((always_inline))

/* The output: b's bytes end at *q, its allocation at *lim (b->len is set
 * only when other code writes). Room for n bytes at *q; false when refused. */
JSON_HOT bool json_room_at(base_buf *b, uint8_t **q, uint8_t **lim, size_t n)
{
	if ((size_t)(*lim - *q) >= n)
		return true;
	b->len = (size_t)(*q - b->data);
	if (!base_buf_reserve(b, n))
		return false;
	*q = b->data + b->len;
	*lim = b->data + b->cap;
	return true;
}

/* A varint, those of up to 3 bytes (most values, lengths and addresses of a
 * response) inline when 3 bytes remain. */
JSON_HOT bool json_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	if (end - s >= 3) {
		uint64_t b0 = s[0], b1 = s[1], b2 = s[2];
		if (b0 < 0x80) {
			*v = b0;
			*p = s + 1;
			return true;
		}
		if (b1 < 0x80) {
			*v = (b0 & 0x7f) | b1 << 7;
			*p = s + 2;
			return true;
		}
		if (b2 < 0x80) {
			*v = (b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14;
			*p = s + 3;
			return true;
		}
	} else if (s < end && s[0] < 0x80) {
		*v = s[0];
		*p = s + 1;
		return true;
	}
	return svc_wire_get_varint(p, end, v);
}

/* A length-delimited value's bytes at *p; false when malformed. */
JSON_HOT bool json_get_bytes(const uint8_t **p, const uint8_t *end, const uint8_t **data,
			     size_t *len)
{
	uint64_t n;
	if (!json_get_varint(p, end, &n) || n > (uint64_t)(end - *p))
		return false;
	*data = *p;
	*len = (size_t)n;
	*p += n;
	return true;
}

/* ',', the key and a singular integer (h->kind: JSON_FAST_U64 to I32) of
 * the field of h at q (JSON_KEY_PAD + JSON_NUMBER_MAX bytes of room, the
 * key's length at least); returns the byte after it. A 64-bit one is quoted:
 * its key has the opening '"'. */
JSON_HOT uint8_t *json_put_int(uint8_t *q, const json_fast *h, uint64_t v)
{
	unsigned kind = h->kind, key_len = h->key_len;  /* read before the bytes are */
	memcpy(q, h->key, JSON_KEY_PAD);                 /* written (they may alias) */
	q += key_len;
	if (kind <= JSON_FAST_I64 && v < 1000000000) {  /* the common case */
		q = json_write_small(q, (uint32_t)v);
		*q = '"';
		return q + 1;
	}
	uint64_t mag = v;
	bool neg = false;
	switch (kind) {
	case JSON_FAST_I64:
		neg = (int64_t)v < 0;
		mag = neg ? 0 - v : v;
		break;
	case JSON_FAST_U32:
		mag = (uint32_t)v;
		break;
	case JSON_FAST_I32: {
		int32_t s = (int32_t)(uint32_t)v;
		neg = s < 0;
		mag = neg ? 0 - (uint64_t)(int64_t)s : (uint64_t)s;
		break;
	}
	default:
		break;
	}
	q = json_write_number(q, mag, neg, false);
	*q = '"';  /* kept when quoted */
	return q + (kind <= JSON_FAST_I64);
}

/*
 * A run of messages of a leaf or shallow type sm (a field's, of one-byte tag
 * tag; many: repeated, each element after a ','), its first element at
 * data/len, *p past it: written at *q (lim: the allocation's end) as
 * svc_rpc_json_encode_table writes them, for as many elements as can be
 * without a check on the way (the room there, the wire as encoders write
 * it), while the next field is this one again; *p and *q moved past them.
 * depth: the nesting of the run's field's message. False when the first
 * element cannot be so written (nothing written, *p and *q as they were):
 * the caller writes it the general way, and the rest of the run.
 */
bool svc_rpc_json_put_plain_run(const json_msg *sm, uint8_t tag, bool many, const uint8_t *data,
				size_t len, const uint8_t **p, const uint8_t *end, uint8_t **q,
				uint8_t *lim, int depth);

/* svc_rpc_json_put_plain_run for a run of strings (a field's of one-byte
 * tag tag; many: repeated): each written in place when no byte of it needs
 * care and the room is there, as svc_rpc_json_encode_table's way does. */
bool svc_rpc_json_put_plain_strings(uint8_t tag, bool many, const uint8_t *data, size_t len,
				    const uint8_t **p, const uint8_t *end, uint8_t **q,
				    uint8_t *lim);

#endif
