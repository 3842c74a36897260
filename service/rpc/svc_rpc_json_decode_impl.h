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

typedef struct dec {
	json_scan sc;
	base_buf *w;
	svc_error *err;
	svc_errc wire_err;      /* a stop for the wire: SVC_E_TOO_LARGE, SVC_E_NOMEM */
	const char *what;       /* a refusal's reason (set by dec_bad) */
	char path[160];         /* its field's path, written from the end as */
	size_t pstart;          /* the error unwinds: path + pstart, cut when long */
	dec_key_vec keys;       /* of the objects open, innermost last */
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

/* svc_rpc_json_value.c: one value of f (not a list, not a message) with its
 * tag; a scalar's bits and wire type alone (a packed list's element). */
dec_rc dec_put_value(dec *d, const json_field *f);
dec_rc dec_scalar_bits(dec *d, const json_field *f, uint64_t *bits, int *wt);
bool dec_put_bits(dec *d, int wt, uint64_t bits);

#endif
