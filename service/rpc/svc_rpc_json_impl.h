/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_impl: the codec's tables, shared by its files (svc_rpc_json.c:
 * the tables built from the descriptors; svc_rpc_json_decode.c: JSON in;
 * svc_rpc_json_encode.c: JSON out, written with svc_rpc_json_text.c's
 * numbers, strings and base64; svc_rpc_json_text.h has those the Symbolize
 * response's own JSON writer shares). Not for use outside service/rpc/.
 */
#ifndef SVC_RPC_JSON_IMPL_H
#define SVC_RPC_JSON_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "service/rpc/svc_rpc_json.h"
#include "service/rpc/svc_rpc_json_text.h"

typedef struct json_msg json_msg;

/* A field of a message, as JSON names it. */
typedef struct json_field {
	const ProtobufCFieldDescriptor *fd;
	ProtobufCType type;     /* fd->type, at hand */
	char *json_name;        /* lowerCamelCase */
	size_t json_name_len;   /* strlen(json_name) */
	size_t name_len;        /* strlen(fd->name), the .proto name */
	char *key;              /* "\"jsonName\":", written before the value; */
	size_t key_len;         /* allocated with zeros to JSON_KEY_PAD bytes at least */
	const json_msg *msg;    /* the type of a message field */
	bool repeated;
	uint8_t wire_type;      /* SVC_WIRE_* of one value */
	bool packable;          /* a repeated scalar that may come packed */
	bool packed;            /* written packed (the descriptor's flag) */
	bool hex;               /* bytes as hex (SVC_RPC_JSON_OTLP's IDs) */
	bool enum_number;       /* an enum written as its number (SVC_RPC_JSON_OTLP) */
} json_field;

/* A key of up to this many bytes is copied with one fixed-size copy. */
#define JSON_KEY_PAD 32

#define JSON_MSG_DIRECT 64  /* field numbers below this are found by a table */

/* How the encoder's fast path writes a field whose tag is one byte (fields 1
 * to 15) and of the wire type the field is written with; NONE: the general
 * path (any other type, a repeated scalar, a wire type that does not match). */
enum {
	JSON_FAST_NONE,
	JSON_FAST_U64,      /* uint64: a quoted unsigned */
	JSON_FAST_I64,      /* int64: a quoted signed */
	JSON_FAST_U32,      /* uint32 */
	JSON_FAST_I32,      /* int32 */
	JSON_FAST_STRING,   /* a singular string */
	JSON_FAST_STRINGS,  /* a repeated string */
	JSON_FAST_MSG,      /* a singular message */
	JSON_FAST_MSGS,     /* a repeated message */
};

/* The encoder's fast path for a one-byte tag. */
typedef struct json_fast {
	uint8_t kind;           /* JSON_FAST_* */
	uint8_t index;          /* the field's index in fields (below 64) */
	uint8_t key_len;        /* of key */
	uint16_t room;          /* asked before the field by the general path, with
				 * a '{' to come: JSON_KEY_ROOM(f) + 1 */
	const json_field *f;
	char key[JSON_KEY_PAD]; /* ',', f's key and, for a 64-bit integer, the '"'
				 * its value opens with; zeros after: copied whole
				 * (kind NONE when they do not fit) */
} json_fast;

/* A message type. */
struct json_msg {
	const ProtobufCMessageDescriptor *d;
	json_field *fields;     /* d->fields' order */
	unsigned n_fields;
	int16_t by_id[JSON_MSG_DIRECT];  /* field number -> index in fields, -1: none */
	json_fast fast[128];    /* by a one-byte tag: how the encoder writes it */
	bool leaf;              /* every field a singular integer in fast (a Line) */
	bool shallow;           /* not a leaf, every field in fast an integer or a
				 * leaf message, singular or repeated (a LocationResult) */
	size_t leaf_room;       /* a leaf: the most its JSON takes, with the slack
				 * of the fixed-size copies (JSON_LEAF_ROOM) */
	bool flat;              /* every field a singular varint integer or bool,
				 * at most 64: the decoder's plain path reads its
				 * objects (a Location) */
};

/* A leaf's room: '{', '}', each field once (',', key, number) and the slack
 * of a key's and a number's fixed-size writes. */
#define JSON_LEAF_ROOM(sum_key_len, n_fields) \
	(2 + (sum_key_len) + (n_fields) * (1 + JSON_NUMBER_MAX) + JSON_KEY_PAD + 8)

struct svc_rpc_json {
	json_msg *msgs;         /* every type the root reaches, root first */
	size_t n_msgs;
};

/* The field of number id (NULL: unknown). */
static inline const json_field *json_msg_field(const json_msg *m, uint32_t id)
{
	if (id < JSON_MSG_DIRECT)
		return m->by_id[id] < 0 ? NULL : &m->fields[m->by_id[id]];
	const ProtobufCFieldDescriptor *fd =
		protobuf_c_message_descriptor_get_field(m->d, (unsigned)id);
	return fd ? &m->fields[fd - m->d->fields] : NULL;
}

/* ---- JSON text (the inline helpers here, the rest in svc_rpc_json_text.c) ---- */

/* Room for n bytes at the end of b; NULL when refused. */
static inline uint8_t *json_room(base_buf *b, size_t n)
{
	if (b->cap - b->len < n && !base_buf_reserve(b, n))
		return NULL;
	return b->data + b->len;
}

static inline bool json_put(base_buf *b, const void *s, size_t n)
{
	uint8_t *p = json_room(b, n);
	if (!p)
		return false;
	memcpy(p, s, n);
	b->len += n;
	return true;
}

static inline bool json_put_char(base_buf *b, char c)
{
	uint8_t *p = json_room(b, 1);
	if (!p)
		return false;
	*p = (uint8_t)c;
	b->len++;
	return true;
}

/* Writes f's key at q, which has room for JSON_KEY_PAD bytes or the key's
 * length, whichever is more; returns the byte after the key. */
static inline uint8_t *json_write_key(uint8_t *q, const json_field *f)
{
	if (f->key_len <= JSON_KEY_PAD)
		memcpy(q, f->key, JSON_KEY_PAD);  /* one fixed-size copy; the rest is overwritten */
	else
		memcpy(q, f->key, f->key_len);
	return q + f->key_len;
}

/* Room for a key, a ',' or '[' around it and a number after it. */
#define JSON_KEY_ROOM(f) ((f)->key_len + JSON_KEY_PAD + 2 + JSON_NUMBER_MAX)

/* ---- the encoder (svc_rpc_json_encode.c; its fast path: svc_rpc_json_encode_fast.c) ---- */

typedef struct json_enc {
	base_buf *b;
	svc_error *err;
	int depth;
} json_enc;

/* Fields already written: a bit per field (a small message's on the stack). */
typedef struct field_set {
	uint64_t small, *bits;
} field_set;

/* Whether k was in the set (and puts it in). */
static inline bool set_test_add(field_set *s, size_t k)
{
	bool was = s->bits[k / 64] >> (k % 64) & 1;
	s->bits[k / 64] |= 1ull << (k % 64);
	return was;
}

/* What a fast path returns when it met a field twice: take the slow path. */
#define JSON_RETRY SVC_E_N_CODES

/* A message (its wire bytes p to end) as JSON: the fast path, then the slow
 * one when the wire is not as encoders write it. */
svc_errc svc_rpc_json_encode_msg(json_enc *e, const json_msg *m, const uint8_t *p,
				 const uint8_t *end);
/* The fast path's step for any field at *p (moved past it and, for a
 * repeated field, its run), after a ',' unless *first; JSON_RETRY when the
 * field is in seen. */
svc_errc svc_rpc_json_encode_field(json_enc *e, const json_msg *m, const uint8_t **p,
				   const uint8_t *end, bool *first, field_set *seen);
/* The fast path for a message of 64 fields or fewer, by m->fast. */
svc_errc svc_rpc_json_encode_table(json_enc *e, const json_msg *m, const uint8_t *p,
				   const uint8_t *end);

/* v in decimal ('-' when neg, quoted when asked); false when out of room. */
bool svc_rpc_json_put_number(base_buf *b, uint64_t v, bool neg, bool quoted);
bool svc_rpc_json_put_i64(base_buf *b, int64_t v, bool quoted);
/* A double (%.17g) or float (%.9g); NaN and the infinities as their strings. */
bool svc_rpc_json_put_double(base_buf *b, double d, bool is_float);
/* bytes as a quoted standard base64 string, padded. */
bool svc_rpc_json_put_base64(base_buf *b, const uint8_t *s, size_t n);
/* bytes as a quoted lowercase hex string (OTLP/JSON's IDs). */
bool svc_rpc_json_put_hex(base_buf *b, const uint8_t *s, size_t n);
/* A scalar of f's type (not a string, bytes or message) from its wire bits. */
bool svc_rpc_json_put_scalar(base_buf *b, const json_field *f, uint64_t v);

/* svc_rpc_json_number.c: an integral value, read exactly from a number's text
 * (0: integral, in *v; 1: not an integer; 2: an integer past 64 bits). */
typedef struct svc_rpc_json_integral {
	uint64_t mag;
	bool neg;
} svc_rpc_json_integral;
int svc_rpc_json_integral_number(const char *s, svc_rpc_json_integral *v);
/* "123", "-5" or a number in string form ("1e3"). */
int svc_rpc_json_integral_text(const char *s, svc_rpc_json_integral *v);
/* The containers (objects, arrays) outside strings; *single_quote and
 * *huge_int set when the text holds a single-quoted string or an integer
 * literal past what any field holds. */
size_t svc_rpc_json_prescan(const char *s, size_t n, bool *single_quote, bool *huge_int);

#endif
