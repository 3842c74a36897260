/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_decode_impl: the decoder's state, shared by its two files
 * (svc_rpc_json_decode.c: messages, lists, keys and the errors;
 * svc_rpc_json_value.c: one scalar, string or bytes value into the wire).
 * Not for use outside service/rpc/.
 */
#ifndef SVC_RPC_JSON_DECODE_IMPL_H
#define SVC_RPC_JSON_DECODE_IMPL_H

#include "base/base_vec.h"
#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_rpc_json_scan_impl.h"
#include "service/rpc/svc_wire.h"

/* How a value went: written; refused (a wrong type or range: the value was
 * read past, d->what and d->path say why; the object decides, as a later
 * duplicate key replaces it); or stopped (bad syntax, the wire full). */
typedef enum { DEC_OK, DEC_BAD, DEC_STOP } dec_rc;

/* A key seen in an object being read: its bytes in the wire, and its
 * refusal while no later duplicate has replaced it. */
typedef struct dec_key {
	unsigned key;           /* field index * 2, + 1 for the .proto name */
	size_t start, end;
	const char *what;       /* NULL: fine */
	char *path;             /* the refusal's path (malloc'ed) */
} dec_key;

BASE_VEC_DEFINE(dec_key_vec, dec_key)

/* Keys of a plain object whose field is remembered for the next (dec.hint). */
#define DEC_HINTS 8

typedef struct dec {
	json_scan sc;
	base_buf *w;
	svc_error *err;
	svc_errc wire_err;      /* a stop for the wire: SVC_E_TOO_LARGE, SVC_E_NOMEM */
	const char *what;       /* a refusal's reason (set by dec_bad) */
	char path[160];         /* its field's path, written from the end as */
	size_t pstart;          /* the error unwinds: path + pstart, cut when long */
	dec_key_vec keys;       /* of the objects open, innermost last */
	const json_msg *hint_msg;   /* the flat message of the last plain object */
	int8_t hint[DEC_HINTS];     /* the field of its k-th key (-1: none) */
} dec;

/* A refusal of the value at the cursor: passed over, then DEC_BAD. */
dec_rc dec_bad(dec *d, const char *what);
/* The wire could not grow: DEC_STOP. */
dec_rc dec_wire_full(dec *d);

static inline bool dec_put_varint(dec *d, uint64_t v)
{
	/* room for the longest varint, or else for this one (the wire cap is
	 * met by the bytes written, never by a reservation) */
	if (d->w->cap - d->w->len < 10 && !base_buf_reserve(d->w, svc_wire_varint_size(v)))
		return false;
	d->w->len = (size_t)(svc_wire_put_varint(d->w->data + d->w->len, v) - d->w->data);
	return true;
}

/* Starts a length-delimited value: a one-byte length, set by dec_close_len.
 * Returns where its bytes start (0: no room). */
static inline size_t dec_open_len(dec *d)
{
	if (d->w->cap == d->w->len && !base_buf_reserve(d->w, 1))
		return 0;
	d->w->data[d->w->len++] = 0;
	return d->w->len;
}
bool dec_close_len(dec *d, size_t start);

/* How many of w's bytes, from its low end (the text's first), are digits. */
static inline unsigned swar_digit_run(uint64_t w)
{
	/* a byte's high nibble not 3, or its low one past 9 (+6 carries into the
	 * high one; a carry out of a byte only follows a byte already not a digit) */
	uint64_t bad = ((w & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
		       (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull);
	return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* The value of the 8 ASCII digits of w, the first in its low byte (bytes 0x00
 * count as 0: fewer digits shifted up read as leading zeros). */
static inline uint64_t swar_eight_digits(uint64_t w)
{
	w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
	w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
	return (w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

/*
 * The common case, read in place: a string of 1 to 19 digits, what an address
 * is in a Connect request ("140737351", 64-bit integers being strings in the
 * JSON mapping), 8 digits at a time. Anything else (a sign, an escape, more
 * digits, not a quote after them) is left to json_scan_string and
 * integral_of_string, whose answer for these strings this is. At p, the
 * opening quote; true: read, *after past the closing one.
 */
static inline bool dec_digits_at(const char *p, const char *end, const char **after,
				 uint64_t *mag)
{
	static const uint64_t pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
					  100000000};
	size_t k = 0;
	uint64_t u = 0;
	bool more = true;  /* the digits may go on past k */
	p++;
	while (more && k < 16 && end - (p + k) >= 8) {
		uint64_t w;
		memcpy(&w, p + k, 8);
		unsigned n = swar_digit_run(w);
		if (n)
			u = u * pow10[n] + swar_eight_digits(w << (8 * (8 - n)));
		k += n;
		more = n == 8;
	}
	unsigned digit;
	while (more && k < 19 && p + k < end && (digit = (unsigned char)p[k] - '0') <= 9) {
		u = u * 10 + digit;
		k++;
	}
	if (k == 0 || p + k >= end || p[k] != '"')
		return false;
	*after = p + k + 1;
	*mag = u;
	return true;
}

/* dec_digits_at at the scanner's cursor, moved past the string when read. */
static inline bool dec_digits_string(json_scan *sc, svc_rpc_json_integral *v)
{
	if (!dec_digits_at(sc->p, sc->end, &sc->p, &v->mag))
		return false;
	v->neg = false;
	return true;
}

/* svc_rpc_json_value.c: one value of f (not a list, not a message) with its
 * tag; a scalar's bits and wire type alone (a packed list's element). */
dec_rc dec_put_value(dec *d, const json_field *f);
/* svc_rpc_json_decode_plain.c: an object of m (json_msg.flat) in its plainest
 * form, read and written at once; false: none such (nothing read or written:
 * decode_msg reads it). */
bool dec_plain_object(dec *d, const json_msg *m);
/* An element of a list of f (messages of a flat type) at the cursor, in its
 * plainest form: its tag, length and dec_plain_object's bytes; false: none
 * such, nothing read or written (put_element reads it). */
bool dec_plain_element(dec *d, const json_field *f);
dec_rc dec_scalar_bits(dec *d, const json_field *f, uint64_t *bits, int *wt);
bool dec_put_bits(dec *d, int wt, uint64_t bits);

#endif
