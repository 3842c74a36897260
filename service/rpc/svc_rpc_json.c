// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json: the codec's tables (svc_rpc_json.h): every message type the
 * root reaches, each field with its JSON name (lowerCamelCase, as protoc
 * derives it: underscores dropped, the letter after one upper-cased) and the
 * key written before its value.
 */
#include "service/rpc/svc_rpc_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_wire.h"
#include "base/base_vec.h"

/* protoc's ToJsonName. */
static char *json_name(const char *name)
{
	size_t n = strlen(name);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	bool upper = false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c == '_') {
			upper = true;
			continue;
		}
		out[o++] = upper && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
		upper = false;
	}
	out[o] = '\0';
	return out;
}

static bool packable(ProtobufCType t)
{
	return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES &&
	       t != PROTOBUF_C_TYPE_MESSAGE;
}

BASE_VEC_DEFINE(msg_vec, json_msg)

/* The index of d in msgs, added (fields not yet filled) when new; -1: no memory. */
static long find_or_add(msg_vec *msgs, const ProtobufCMessageDescriptor *d)
{
	for (size_t i = 0; i < msg_vec_len(msgs); i++)
		if (msg_vec_data(msgs)[i].d == d)
			return (long)i;
	json_msg *m = msg_vec_push(msgs);
	if (!m)
		return -1;
	memset(m, 0, sizeof(*m));
	m->d = d;
	return (long)(msg_vec_len(msgs) - 1);
}

/* The index of d in j->msgs (every reachable type is there once discovered). */
static size_t find(const svc_rpc_json *j, const ProtobufCMessageDescriptor *d)
{
	size_t i = 0;
	while (j->msgs[i].d != d)
		i++;
	return i;
}

/* The wire type a value of type t is written with. */
static uint8_t wire_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return SVC_WIRE_I32;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return SVC_WIRE_I64;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
	case PROTOBUF_C_TYPE_MESSAGE:
		return SVC_WIRE_LEN;
	default:
		return SVC_WIRE_VARINT;
	}
}

/* OTLP/JSON's hex IDs (SVC_RPC_JSON_OTLP). */
static bool otlp_hex_id(const ProtobufCFieldDescriptor *fd)
{
	return fd->type == PROTOBUF_C_TYPE_BYTES &&
	       (!strcmp(fd->name, "trace_id") || !strcmp(fd->name, "span_id") ||
		!strcmp(fd->name, "profile_id"));
}

static bool fill_field(json_field *f, const ProtobufCFieldDescriptor *fd, unsigned flags)
{
	f->hex = (flags & SVC_RPC_JSON_OTLP) && otlp_hex_id(fd);
	f->enum_number = (flags & SVC_RPC_JSON_OTLP) && fd->type == PROTOBUF_C_TYPE_ENUM;
	f->fd = fd;
	f->type = fd->type;
	f->wire_type = wire_type(fd->type);
	f->repeated = fd->label == PROTOBUF_C_LABEL_REPEATED;
	f->packable = f->repeated && packable(fd->type);
	f->packed = f->packable && (fd->flags & PROTOBUF_C_FIELD_FLAG_PACKED);
	f->json_name = json_name(fd->name);
	if (!f->json_name)
		return false;
	f->json_name_len = strlen(f->json_name);
	f->name_len = strlen(fd->name);
	f->key_len = f->json_name_len + 3;
	f->key = calloc(1, f->key_len + 1 > JSON_KEY_PAD ? f->key_len + 1 : JSON_KEY_PAD);
	if (!f->key)
		return false;
	snprintf(f->key, f->key_len + 1, "\"%s\":", f->json_name);
	return true;
}

/* The encoder's fast path for f (JSON_FAST_*), given its one-byte tag's wire type. */
static uint8_t fast_kind(const json_field *f)
{
	if (f->key_len + 2 > JSON_KEY_PAD)  /* the fast path copies ',', the key and */
		return JSON_FAST_NONE;      /* a '"': JSON_KEY_PAD bytes */
	switch (f->type) {
	case PROTOBUF_C_TYPE_UINT64:
		return f->repeated ? JSON_FAST_NONE : JSON_FAST_U64;
	case PROTOBUF_C_TYPE_INT64:
		return f->repeated ? JSON_FAST_NONE : JSON_FAST_I64;
	case PROTOBUF_C_TYPE_UINT32:
		return f->repeated ? JSON_FAST_NONE : JSON_FAST_U32;
	case PROTOBUF_C_TYPE_INT32:
		return f->repeated ? JSON_FAST_NONE : JSON_FAST_I32;
	case PROTOBUF_C_TYPE_STRING:
		return f->repeated ? JSON_FAST_STRINGS : JSON_FAST_STRING;
	case PROTOBUF_C_TYPE_MESSAGE:
		return f->repeated ? JSON_FAST_MSGS : JSON_FAST_MSG;
	default:
		return JSON_FAST_NONE;
	}
}

/* The fast path's entry for f (the k-th field), by its one-byte tag. */
static void fill_fast(json_fast *h, json_field *f, unsigned k)
{
	h->kind = fast_kind(f);
	h->index = (uint8_t)k;
	h->f = f;
	if (h->kind == JSON_FAST_NONE)
		return;
	h->room = (uint16_t)(JSON_KEY_ROOM(f) + 1);
	h->key_len = (uint8_t)(f->key_len + 1);
	h->key[0] = ',';
	memcpy(h->key + 1, f->key, f->key_len);
	if (h->kind == JSON_FAST_U64 || h->kind == JSON_FAST_I64)  /* quoted */
		h->key[h->key_len++] = '"';
}

/* Whether m is flat (json_msg.flat). */
static bool is_flat(const json_msg *m)
{
	if (m->n_fields > 64)
		return false;
	for (unsigned k = 0; k < m->n_fields; k++) {
		const json_field *f = &m->fields[k];
		switch (f->repeated ? PROTOBUF_C_TYPE_MESSAGE : f->type) {
		case PROTOBUF_C_TYPE_INT32:
		case PROTOBUF_C_TYPE_UINT32:
		case PROTOBUF_C_TYPE_INT64:
		case PROTOBUF_C_TYPE_UINT64:
		case PROTOBUF_C_TYPE_BOOL:
			break;
		default:
			return false;
		}
	}
	return true;
}

/* The fields of every type (all discovered). */
static bool fill(svc_rpc_json *j, unsigned flags)
{
	for (size_t i = 0; i < j->n_msgs; i++) {
		const ProtobufCMessageDescriptor *d = j->msgs[i].d;
		json_field *fields = calloc(d->n_fields ? d->n_fields : 1, sizeof(*fields));
		if (!fields)
			return false;
		j->msgs[i].fields = fields;
		j->msgs[i].n_fields = d->n_fields;
		for (unsigned k = 0; k < JSON_MSG_DIRECT; k++)
			j->msgs[i].by_id[k] = -1;
		for (unsigned k = 0; k < d->n_fields; k++) {
			if (!fill_field(&fields[k], &d->fields[k], flags))
				return false;
			if (d->fields[k].id < JSON_MSG_DIRECT && k <= INT16_MAX)
				j->msgs[i].by_id[d->fields[k].id] = (int16_t)k;
			if (d->fields[k].id < 16 && d->n_fields <= 64)  /* one-byte tags */
				fill_fast(&j->msgs[i].fast[d->fields[k].id << 3 | fields[k].wire_type],
					  &fields[k], k);
		}
		j->msgs[i].leaf = d->n_fields <= 64;
		size_t keys = 0;
		for (unsigned k = 0; k < d->n_fields; k++) {
			uint8_t kind = fast_kind(&fields[k]);
			if (d->fields[k].id >= 16 || kind == JSON_FAST_NONE || kind > JSON_FAST_I32)
				j->msgs[i].leaf = false;
			keys += fields[k].key_len;
		}
		if (j->msgs[i].leaf)
			j->msgs[i].leaf_room = JSON_LEAF_ROOM(keys, d->n_fields);
		j->msgs[i].flat = !(flags & SVC_RPC_JSON_NO_PLAIN_DECODE) && is_flat(&j->msgs[i]);
	}
	return true;
}

/* Whether m is shallow (json_msg.shallow); the leaves known. */
static bool is_shallow(const json_msg *m)
{
	if (m->leaf || m->n_fields > 64)
		return false;
	for (unsigned k = 0; k < m->n_fields; k++) {
		const json_field *f = &m->fields[k];
		uint8_t kind = fast_kind(f);
		if (f->fd->id >= 16 || kind == JSON_FAST_NONE ||
		    (kind > JSON_FAST_I32 && !(f->msg && f->msg->leaf)))
			return false;
	}
	return true;
}

svc_rpc_json *svc_rpc_json_create(const ProtobufCMessageDescriptor *d)
{
	return svc_rpc_json_create_opts(d, 0);
}

svc_rpc_json *svc_rpc_json_create_opts(const ProtobufCMessageDescriptor *d, unsigned flags)
{
	svc_rpc_json *j = calloc(1, sizeof(*j));
	msg_vec msgs;
	msg_vec_init(&msgs, SIZE_MAX / sizeof(json_msg));
	if (!j || find_or_add(&msgs, d) < 0)
		goto fail_msgs;
	/* Discover every reachable type first (the array may move while it grows). */
	for (size_t i = 0; i < msg_vec_len(&msgs); i++) {
		const ProtobufCMessageDescriptor *m = msg_vec_at(&msgs, i).d;
		for (unsigned k = 0; k < m->n_fields; k++)
			if (m->fields[k].type == PROTOBUF_C_TYPE_MESSAGE &&
			    find_or_add(&msgs, m->fields[k].descriptor) < 0)
				goto fail_msgs;
	}
	j->msgs = msg_vec_take(&msgs, &j->n_msgs);
	if (!fill(j, flags))
		goto fail;
	for (size_t i = 0; i < j->n_msgs; i++)
		for (unsigned k = 0; k < j->msgs[i].n_fields; k++) {
			json_field *f = &j->msgs[i].fields[k];
			if (f->fd->type == PROTOBUF_C_TYPE_MESSAGE)
				f->msg = &j->msgs[find(j, f->fd->descriptor)];
		}
	for (size_t i = 0; i < j->n_msgs; i++)
		j->msgs[i].shallow = is_shallow(&j->msgs[i]);
	return j;
fail_msgs:
	msg_vec_deinit(&msgs);
fail:
	svc_rpc_json_destroy(j);
	return NULL;
}

void svc_rpc_json_destroy(svc_rpc_json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n_msgs; i++) {
		for (unsigned k = 0; k < j->msgs[i].n_fields; k++) {
			free(j->msgs[i].fields[k].json_name);
			free(j->msgs[i].fields[k].key);
		}
		free(j->msgs[i].fields);
	}
	free(j->msgs);
	free(j);
}
