// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_encode_plain: the encoder's plainest path, for the runs that
 * make most of a big response: repeated messages of a leaf type (every field
 * a singular integer: a Line, a Function) or of a shallow one (integers and
 * leaf messages: a LocationResult), and strings (the string table). A leaf's
 * room is asked once (its JSON has a bound: each field at most once), a
 * field's ',' and key are one fixed-size copy from the tag's entry
 * (json_fast.key), a run's elements follow one another in one loop without a
 * call or a check per field, and a string's bytes are checked for those that
 * need care 16 at a time (SSE2; 8 by a word's arithmetic elsewhere). Anything
 * not so (fields out of order or twice, another wire type, a longer tag, an
 * unknown field, malformed bytes, a byte that needs care, too little room,
 * too deep) stops it before the element, which svc_rpc_json_encode_fast.c
 * then writes the general way: the bytes, and the room asked of the buffer
 * (so where a cap on the JSON is met), are the general path's.
 */
#include "service/rpc/svc_rpc_json_encode_impl.h"

#if defined(__SSE2__) && !defined(SVC_RPC_JSON_NO_SSE2)  /* the latter: to test the other way */
#define JSON_SSE2 1
#include <emmintrin.h>
#endif

/* A varint at *p, 3 bytes there readable even past end (the bytes of the
 * message around); one that runs past end is caught by the caller. */
JSON_HOT bool get_varint_roomy(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *s = *p;
	uint64_t b0 = s[0], b1, b2;
	if (b0 < 0x80) {
		*v = b0;
		*p = s + 1;
		return true;
	}
	b1 = s[1];
	if (b1 < 0x80) {
		*v = (b0 & 0x7f) | b1 << 7;
		*p = s + 2;
		return true;
	}
	b2 = s[2];
	if (b2 < 0x80) {
		*v = (b0 & 0x7f) | (b1 & 0x7f) << 7 | b2 << 14;
		*p = s + 3;
		return true;
	}
	return svc_wire_get_varint(p, end, v);
}

/*
 * A leaf message (p to end) at q, which has sm->leaf_room bytes of room;
 * NULL when the wire is not plain: fields in the order of their numbers,
 * each once. Each field is written after a ',', the first one's made the
 * '{'. roomy: 3 bytes past end are readable.
 */
JSON_HOT uint8_t *put_leaf(const json_msg *sm, const uint8_t *p, const uint8_t *end, uint8_t *q,
			   bool roomy)
{
	uint8_t *open = q;
	unsigned last = 0;
	while (p < end) {
		unsigned tag = *p++;
		const json_fast *h = &sm->fast[tag & 0x7f];
		uint64_t v;
		if (tag <= last || tag >= 0x80 || h->kind == JSON_FAST_NONE)
			return NULL;
		last = tag;
		if (!(roomy ? get_varint_roomy(&p, end, &v) : json_get_varint(&p, end, &v)))
			return NULL;
		if (v)
			q = json_put_int(q, h, v);
	}
	if (p != end)  /* a varint past the end (roomy) */
		return NULL;
	if (q == open)
		*q++ = '{';  /* no field */
	else
		*open = '{';
	*q++ = '}';
	return q;
}

/*
 * The elements of a run of leaves at w, each after a ',' (many: repeated;
 * else one, its ',' overwritten), the first at data/len, *at past it, the
 * next ones while the tag at *at is tag (end: the message's). Returns w past
 * the last one written, *at past its wire; *whole: whether the run's end
 * was met (the next field is another, or the message ends) rather than an
 * element not written (not plain, malformed, no room).
 */
JSON_HOT uint8_t *leaf_run(const json_msg *sm, uint8_t tag, bool many, const uint8_t *data,
			   size_t len, const uint8_t **at, const uint8_t *end, uint8_t *w,
			   const uint8_t *lim, bool *whole)
{
	const uint8_t *a = *at;
	size_t need = sm->leaf_room + 2;  /* with the ',' and a ']' after */
	*whole = false;
	for (;;) {
		if ((size_t)(lim - w) < need)
			break;
		*w = ',';
		uint8_t *e = end - (data + len) >= 3 ? put_leaf(sm, data, data + len, w + many, true)
						     : put_leaf(sm, data, data + len, w + many, false);
		if (!e)
			break;
		w = e, *at = a;
		if (!many || a >= end || *a != tag) {
			*whole = true;
			break;
		}
		a++;
		if (!json_get_bytes(&a, end, &data, &len))
			break;
	}
	return w;
}

/* A shallow message (p to end) at q (lim: the allocation's end); NULL when
 * the wire is not plain (fields in the order of their numbers, each once; a
 * repeated one's elements in one run) or the room runs out. The room asked
 * before each field is the general path's (json_fast.room). */
JSON_HOT uint8_t *put_shallow(const json_msg *m, const uint8_t *p, const uint8_t *end, uint8_t *q,
			      const uint8_t *lim)
{
	uint8_t *open = q;
	unsigned last = 0;
	while (p < end) {
		unsigned tag = *p++;
		const json_fast *h = &m->fast[tag & 0x7f];
		unsigned kind = h->kind;
		if (tag <= last || tag >= 0x80 || kind == JSON_FAST_NONE || (size_t)(lim - q) < h->room)
			return NULL;
		last = tag;
		if (kind <= JSON_FAST_I32) {
			uint64_t v;
			if (!json_get_varint(&p, end, &v))
				return NULL;
			if (v)
				q = json_put_int(q, h, v);
			continue;
		}
		const uint8_t *data;
		size_t len;
		bool whole;
		if (!json_get_bytes(&p, end, &data, &len))
			return NULL;
		const json_msg *sm = h->f->msg;
		unsigned key_len = h->key_len;
		memcpy(q, h->key, JSON_KEY_PAD);
		uint8_t *items = q + key_len;
		q = leaf_run(sm, (uint8_t)tag, kind == JSON_FAST_MSGS, data, len, &p, end, items, lim,
			     &whole);
		if (!whole || q == items)
			return NULL;
		if (kind == JSON_FAST_MSGS) {  /* room: the leaf's */
			*items = '[';
			*q++ = ']';
		}
	}
	if ((size_t)(lim - q) < 2)
		return NULL;
	if (q == open)
		*q++ = '{';  /* no field */
	else
		*open = '{';
	*q++ = '}';
	return q;
}

bool svc_rpc_json_put_plain_run(const json_msg *sm, uint8_t tag, bool many, const uint8_t *data,
				size_t len, const uint8_t **p, const uint8_t *end, uint8_t **q,
				uint8_t *lim, int depth)
{
	uint8_t *w = *q;
	const uint8_t *at = *p;
	bool whole;
	if (sm->leaf && depth < SVC_RPC_JSON_MAX_DEPTH) {
		w = leaf_run(sm, tag, many, data, len, &at, end, w, lim, &whole);
	} else if (sm->shallow && depth + 1 < SVC_RPC_JSON_MAX_DEPTH) {
		const uint8_t *done = at;  /* past the last one written */
		for (;;) {
			if (w == lim)
				break;
			*w = ',';
			uint8_t *e = put_shallow(sm, data, data + len, w + many, lim);
			if (!e)
				break;
			w = e, done = at;
			if (!many || at >= end || *at != tag)
				break;
			at++;
			if (!json_get_bytes(&at, end, &data, &len))
				break;
		}
		at = done;
	}
	bool wrote = w != *q;
	*p = at, *q = w;
	return wrote;
}

/* ---- strings ---- */

#ifdef JSON_SSE2
#define CHUNK 16
typedef __m128i chunk;

JSON_HOT chunk chunk_load(const uint8_t *s)
{
	return _mm_loadu_si128((const __m128i *)(const void *)s);
}

JSON_HOT void chunk_store(uint8_t *q, chunk c)
{
	_mm_storeu_si128((__m128i *)(void *)q, c);
}

/* A bit per byte that needs care (json_care_mask's bytes: below 0x20 or
 * above 0x7f, as signed bytes all below 0x20; '"'; '\\'), byte i: bit i. */
JSON_HOT unsigned chunk_care(chunk c)
{
	__m128i low = _mm_cmplt_epi8(c, _mm_set1_epi8(0x20));
	__m128i quote = _mm_cmpeq_epi8(c, _mm_set1_epi8('"'));
	__m128i bslash = _mm_cmpeq_epi8(c, _mm_set1_epi8('\\'));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, bslash)));
}

/* The bits of chunk_care of the first n bytes (n below CHUNK). */
#define CHUNK_FIRST(n) ((1u << (n)) - 1)
#else
#define CHUNK 8
typedef uint64_t chunk;

JSON_HOT chunk chunk_load(const uint8_t *s)
{
	uint64_t w;
	memcpy(&w, s, 8);
	return w;
}

JSON_HOT void chunk_store(uint8_t *q, chunk c)
{
	memcpy(q, &c, 8);
}

/* json_care_mask's bits, byte i's at bit 8i + 7 (the first byte lowest). */
JSON_HOT uint64_t chunk_care(chunk c)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	c = __builtin_bswap64(c);
#endif
	return json_care_mask(c);
}

#define CHUNK_FIRST(n) ((1ull << 8 * (n)) - 1)
#endif

/*
 * s (n bytes, readable up to s_end) as a quoted JSON string at q, which has
 * room for n + CHUNK + 2 bytes; NULL when a byte needs care.
 */
JSON_HOT uint8_t *put_plain(uint8_t *q, const uint8_t *s, size_t n, const uint8_t *s_end)
{
	*q++ = '"';
	size_t i = 0;
	for (; i + CHUNK <= n; i += CHUNK) {
		chunk c = chunk_load(s + i);
		if (chunk_care(c))
			return NULL;
		chunk_store(q + i, c);
	}
	if (i < n) {
		if ((size_t)(s_end - (s + i)) >= CHUNK) {  /* the rest and bytes after it */
			chunk c = chunk_load(s + i);
			if (chunk_care(c) & CHUNK_FIRST(n - i))
				return NULL;
			chunk_store(q + i, c);
		} else if (n >= CHUNK) {  /* the last CHUNK, over what was checked */
			chunk c = chunk_load(s + n - CHUNK);
			if (chunk_care(c))
				return NULL;
			chunk_store(q + n - CHUNK, c);
		} else {
			for (; i < n; i++) {
				uint8_t b = s[i];
				if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\')
					return NULL;
				q[i] = b;
			}
		}
	}
	q += n;
	*q++ = '"';
	return q;
}

bool svc_rpc_json_put_plain_strings(uint8_t tag, bool many, const uint8_t *data, size_t len,
				    const uint8_t **p, const uint8_t *end, uint8_t **q,
				    uint8_t *lim)
{
	uint8_t *w = *q;
	const uint8_t *at = *p;
	bool wrote = false;
	for (;;) {
		if ((size_t)(lim - w) < len + CHUNK + 3)
			break;
		*w = ',';
		uint8_t *e = put_plain(w + many, data, len, end);
		if (!e)
			break;
		w = e, *p = at, wrote = true;
		if (!many || at >= end || *at != tag)
			break;
		at++;
		if (!json_get_bytes(&at, end, &data, &len))
			break;
	}
	*q = w;
	return wrote;
}
