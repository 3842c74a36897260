/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_impl: the codec's tables, shared by its files (svc_rpc_json.c:
 * the tables built from the descriptors; svc_rpc_json_decode.c: JSON in;
 * svc_rpc_json_encode.c: JSON out). Not for use outside service/rpc/.
 */
#ifndef SVC_RPC_JSON_IMPL_H
#define SVC_RPC_JSON_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/rpc/svc_rpc_json.h"

typedef struct json_msg json_msg;

/* A field of a message, as JSON names it. */
typedef struct json_field {
	const ProtobufCFieldDescriptor *fd;
	ProtobufCType type;     /* fd->type, at hand */
	char *json_name;        /* lowerCamelCase */
	char *key;              /* "\"jsonName\":", written before the value; */
	size_t key_len;         /* allocated with zeros to JSON_KEY_PAD bytes at least */
	const json_msg *msg;    /* the type of a message field */
	bool repeated;
	uint8_t wire_type;      /* SVC_WIRE_* of one value */
	bool packable;          /* a repeated scalar that may come packed */
	bool packed;            /* written packed (the descriptor's flag) */
} json_field;

/* A key of up to this many bytes is copied with one fixed-size copy. */
#define JSON_KEY_PAD 32

#define JSON_MSG_DIRECT 64  /* field numbers below this are found by a table */

/* A message type. */
struct json_msg {
	const ProtobufCMessageDescriptor *d;
	json_field *fields;     /* d->fields' order */
	unsigned n_fields;
	int16_t by_id[JSON_MSG_DIRECT];  /* field number -> index in fields, -1: none */
};

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

/* Appends a string as JSON ("..." with escapes; invalid UTF-8 as U+FFFD). */
bool svc_rpc_json_put_string(base_buf *b, const uint8_t *s, size_t n);

#endif
