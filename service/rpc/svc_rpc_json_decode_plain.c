// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_decode_plain: the decoder's plainest path, for the objects
 * that make most of a big request: those of a flat message (json_msg.flat:
 * every field a singular integer or bool, as a Location), read straight from
 * the text when they are in their plainest form: each field once, keyed by
 * its JSON or .proto name without escapes; each value an integer of 1 to 19
 * digits in the field's range (a uint64 one also as a string of digits, as
 * Connect writes an address), or true or false; whitespace where JSON allows
 * it. It writes what the general path writes for such an object (a tag and
 * a varint a key, in the keys' order) without the general path's token
 * calls, key records and per-value dispatch.
 *
 * A list of such objects (a request's Locations) is read element by element
 * here too (dec_plain_element: the element's tag and length around the
 * object, without put_element's and decode_msg's calls), and the field each
 * key named in the last object is tried first for the key at the same place
 * in the next (dec.hint): a list's objects give their keys in one order.
 *
 * Anything else (a sign, a fraction or exponent, a quoted integer of another
 * type, null, an unknown key, a field twice, an escape, bad syntax, the wire's
 * or the containers' cap or the depth met) reads nothing and writes nothing:
 * decode_msg reads the object the general way, and so answers, errors
 * included, as it does without this path (test_svc_rpc_json_plain reads
 * requests both ways; fuzz_json_differential holds the decoder to json-c's).
 */
#include "service/rpc/svc_rpc_json_decode_impl.h"

/* Whether the byte at p may follow a value in an object: whitespace, ',' or '}'. */
static inline bool ends_value(const char *p, const char *end)
{
	return p < end && (*p == ',' || *p == '}' || json_is_ws(*p));
}

/* Whether the text at p (to end) is name (n bytes) in quotes. */
static inline bool quoted_is(const char *p, const char *end, const char *name, size_t n)
{
	if ((size_t)(end - p) < n + 2 || p[n + 1] != '"')
		return false;
	for (size_t i = 0; i < n; i++)   /* (a name is a few bytes: no call) */
		if (p[1 + i] != name[i])
			return false;
	return true;
}

/*
 * Whether the text at p is f's JSON name in quotes: f->key's first
 * json_name_len + 2 bytes ('"', the name, '"'; the key is JSON_KEY_PAD bytes
 * at least), compared 8 at a time when JSON_KEY_PAD bytes of text are there.
 */
static inline bool json_name_is(const char *p, const char *end, const json_field *f)
{
	size_t n = f->json_name_len + 2;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n <= JSON_KEY_PAD && end - p >= JSON_KEY_PAD) {
		uint64_t diff = 0;
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			uint64_t a, b;
			memcpy(&a, p + i, 8);
			memcpy(&b, f->key + i, 8);
			diff |= a ^ b;
		}
		if (i < n) {
			uint64_t a, b;
			memcpy(&a, p + i, 8);
			memcpy(&b, f->key + i, 8);
			diff |= (a ^ b) & ((1ull << 8 * (n - i)) - 1);
		}
		return diff == 0;
	}
#endif
	return quoted_is(p, end, f->json_name, f->json_name_len);
}

/*
 * The index of the field whose JSON or .proto name is the key at p, its
 * opening quote, and *after past its closing one; -1: none. A key that only
 * matches once unescaped is none: the bytes at p are compared as they are.
 * hint: the field the key at this place in the last plain object of m was
 * (the objects of a list give their keys in one order), tried first by its
 * JSON name; -1: none.
 */
static int field_of(const json_msg *m, const char *p, const char *end, int hint,
		    const char **after)
{
	if (hint >= 0 && json_name_is(p, end, &m->fields[hint])) {
		*after = p + m->fields[hint].json_name_len + 2;
		return hint;
	}
	for (unsigned i = 0; i < m->n_fields; i++) {
		const json_field *f = &m->fields[i];
		if (json_name_is(p, end, f)) {
			*after = p + f->json_name_len + 2;
			return (int)i;
		}
		if (quoted_is(p, end, f->fd->name, f->name_len)) {
			*after = p + f->name_len + 2;
			return (int)i;
		}
	}
	return -1;
}

/* An integer written as a JSON number at *p: 1 to 19 digits, no leading zero
 * (JSON's rule), a value's end after them. */
static bool number_at(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t u = 0;
	size_t k = 0;
	unsigned digit;
	while (k < 20 && s + k < end && (digit = (unsigned char)s[k] - '0') <= 9) {
		u = u * 10 + digit;
		k++;
	}
	if (k == 0 || k > 19 || (k > 1 && s[0] == '0') || !ends_value(s + k, end))
		return false;
	*p = s + k;
	*v = u;
	return true;
}

static bool in_range(ProtobufCType t, uint64_t v)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
		return v <= INT32_MAX;
	case PROTOBUF_C_TYPE_UINT32:
		return v <= UINT32_MAX;
	case PROTOBUF_C_TYPE_INT64:
		return v <= INT64_MAX;
	default:   /* uint64: 19 digits fit */
		return true;
	}
}

/* The value of f at *p (past it when read). */
static bool value_at(const json_field *f, const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (s >= end)
		return false;
	if (f->type == PROTOBUF_C_TYPE_BOOL) {
		if (end - s >= 4 && !memcmp(s, "true", 4))
			*v = 1, s += 4;
		else if (end - s >= 5 && !memcmp(s, "false", 5))
			*v = 0, s += 5;
		else
			return false;
		*p = s;
		return ends_value(s, end);
	}
	if (*s == '"')
		return f->type == PROTOBUF_C_TYPE_UINT64 && dec_digits_at(s, end, p, v) &&
		       ends_value(*p, end);
	return number_at(p, end, v) && in_range(f->type, *v);
}

bool dec_plain_object(dec *d, const json_msg *m)
{
	json_scan *sc = &d->sc;
	if (sc->depth >= SVC_RPC_JSON_MAX_DEPTH || sc->containers >= sc->max_containers)
		return false;   /* the general path's error */
	const char *p = json_skip_ws(sc->p + 1, sc->end), *end = sc->end;   /* past the '{' */
	size_t wire_start = d->w->len;
	bool over = d->w->over, nomem = d->w->nomem;
	uint64_t seen = 0;
	/* Room already allocated for every field once (a tag and a value of 10
	 * bytes at most each; a key seen twice is not plain): written without a
	 * check a value. */
	bool roomy = d->w->cap - d->w->len >= (size_t)m->n_fields * 20;
	if (d->hint_msg != m) {
		d->hint_msg = m;
		memset(d->hint, -1, sizeof(d->hint));
	}
	if (p < end && *p == '}') {
		p++;
		goto read;
	}
	for (unsigned k = 0;; k++) {
		if (p >= end || *p != '"')
			goto not_plain;
		int hint = k < DEC_HINTS ? d->hint[k] : -1;
		int fi = field_of(m, p, end, hint, &p);
		if (fi < 0 || (seen >> fi & 1))
			goto not_plain;
		if (k < DEC_HINTS)
			d->hint[k] = (int8_t)fi;
		seen |= 1ull << fi;
		p = json_skip_ws(p, end);
		if (p >= end || *p != ':')
			goto not_plain;
		p = json_skip_ws(p + 1, end);
		const json_field *f = &m->fields[fi];
		uint64_t v, tag = SVC_WIRE_TAG(f->fd->id, SVC_WIRE_VARINT);
		if (!value_at(f, &p, end, &v))
			goto not_plain;
		if (roomy) {
			uint8_t *q = svc_wire_put_varint(d->w->data + d->w->len, tag);
			d->w->len = (size_t)(svc_wire_put_varint(q, v) - d->w->data);
		} else if (!dec_put_varint(d, tag) || !dec_put_varint(d, v)) {
			goto not_plain;
		}
		p = json_skip_ws(p, end);
		if (p < end && *p == ',') {
			p = json_skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		goto not_plain;
	}
read:
	sc->containers++;
	sc->p = p;
	return true;
not_plain:
	d->w->len = wire_start;
	d->w->over = over;
	d->w->nomem = nomem;
	return false;
}

bool dec_plain_element(dec *d, const json_field *f)
{
	base_buf *w = d->w;
	json_scan *sc = &d->sc;
	const char *at = sc->p = json_skip_ws(sc->p, sc->end);
	size_t wire_start = w->len, containers = sc->containers, start;
	bool over = w->over, nomem = w->nomem;
	if (at >= sc->end || *at != '{')
		return false;
	uint64_t tag = SVC_WIRE_TAG(f->fd->id, SVC_WIRE_LEN);
	if (tag < 0x80 && w->cap - w->len >= 2) {
		w->data[w->len] = (uint8_t)tag;   /* the tag, and the length's byte */
		w->len += 2;
		start = w->len;
	} else if (!dec_put_varint(d, tag) || !(start = dec_open_len(d))) {
		start = 0;
	}
	if (start && dec_plain_object(d, f->msg)) {
		size_t n = w->len - start;
		if (n < 0x80) {
			w->data[start - 1] = (uint8_t)n;
			return true;
		}
		if (dec_close_len(d, start))
			return true;
		sc->p = at;   /* the length did not fit: read again the general way */
		sc->containers = containers;
	}
	w->len = wire_start;
	w->over = over;
	w->nomem = nomem;
	return false;
}
