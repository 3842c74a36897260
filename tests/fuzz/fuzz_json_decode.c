// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_json_decode: the Connect JSON decoder (svc_rpc_json_decode, one pass,
 * no tree) on any bytes, as SymbolizeRequest (first byte even) or
 * GetTypeLayoutsRequest (odd). What it accepts must be a message protobuf-c
 * unpacks, whose JSON (svc_rpc_json_encode) decodes again to the same
 * message (compared packed by protobuf-c); the wire cap must hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"

#define WIRE_CAP (1u << 20)

/* protobuf-c's canonical bytes of wire (malloc'ed), NULL when it does not unpack. */
static uint8_t *canonical(const ProtobufCMessageDescriptor *d, const base_buf *w, size_t *n)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, w->len, w->data);
	if (!m)
		return NULL;
	*n = protobuf_c_message_get_packed_size(m);
	uint8_t *out = malloc(*n ? *n : 1);
	if (!out)
		abort();
	protobuf_c_message_pack(m, out);
	protobuf_c_message_free_unpacked(m, NULL);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static svc_rpc_json *codecs[2];
	static const ProtobufCMessageDescriptor *descs[2] = {
		&symbolizer__v1__symbolize_request__descriptor,
		&symbolizer__v1__get_type_layouts_request__descriptor,
	};
	if (!codecs[0] && !(codecs[0] = svc_rpc_json_create(descs[0])))
		abort();
	if (!codecs[1] && !(codecs[1] = svc_rpc_json_create(descs[1])))
		abort();
	if (size < 1)
		return 0;
	int k = data[0] & 1;
	base_buf w1, j, w2;
	base_buf_init(&w1, WIRE_CAP);
	base_buf_init(&j, SIZE_MAX);
	base_buf_init(&w2, SIZE_MAX);
	svc_error err;
	svc_errc rc = svc_rpc_json_decode(codecs[k], (const char *)data + 1, size - 1, 4096, &w1,
					  &err);
	if (w1.len > WIRE_CAP)
		abort();
	if (rc == SVC_OK) {
		size_t n1, n2;
		uint8_t *c1 = canonical(descs[k], &w1, &n1);
		if (!c1)
			abort();  /* accepted JSON made bytes protobuf-c refuses */
		if (svc_rpc_json_encode(codecs[k], w1.data, w1.len, &j, &err) != SVC_OK)
			abort();
		if (svc_rpc_json_decode(codecs[k], (const char *)j.data, j.len, SIZE_MAX, &w2,
					&err) != SVC_OK)
			abort();  /* our own JSON must read back */
		uint8_t *c2 = canonical(descs[k], &w2, &n2);
		if (!c2 || n1 != n2 || memcmp(c1, c2, n1) != 0)
			abort();
		free(c1);
		free(c2);
	} else if (rc != SVC_E_INVALID && rc != SVC_E_TOO_LARGE) {
		abort();
	}
	base_buf_deinit(&w1);
	base_buf_deinit(&j);
	base_buf_deinit(&w2);
	return 0;
}
