// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_json_encode_differential: the JSON encoder (svc_rpc_json_encode, its
 * table-driven fast path and its slow one) against the encoder it replaced
 * (json_ref_encode.c), on any bytes as a message's wire. First byte: bits
 * 0-1 the message (SymbolizeResponse, SymbolizeRequest,
 * GetTypeLayoutsResponse, OTLP's ExportProfilesServiceRequest with
 * SVC_RPC_JSON_OTLP), bits 2-7 a cap on the JSON (none, or 64 bytes to 4 KB),
 * so that running out of room is met at every place. Both must give the same
 * code, and the same JSON bytes when they succeed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_ref_encode.h"
#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static svc_rpc_json *codecs[4];
	if (!codecs[0]) {
		codecs[0] = svc_rpc_json_create(&symbolizer__v1__symbolize_response__descriptor);
		codecs[1] = svc_rpc_json_create(&symbolizer__v1__symbolize_request__descriptor);
		codecs[2] = svc_rpc_json_create(&symbolizer__v1__get_type_layouts_response__descriptor);
		codecs[3] = svc_rpc_json_create_opts(
			&opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor,
			SVC_RPC_JSON_OTLP);
		for (int i = 0; i < 4; i++)
			if (!codecs[i])
				abort();
	}
	if (size < 1)
		return 0;
	const svc_rpc_json *j = codecs[data[0] & 3];
	size_t cap = data[0] >> 2 ? (size_t)(data[0] >> 2) * 64 : SIZE_MAX;
	base_buf j_new, j_old;
	base_buf_init(&j_new, cap);
	base_buf_init(&j_old, cap);
	svc_error e_new = {0}, e_old = {0};
	svc_errc r_new = svc_rpc_json_encode(j, data + 1, size - 1, &j_new, &e_new);
	svc_errc r_old = json_ref_encode(j, data + 1, size - 1, &j_old, &e_old);
	bool same = r_new == r_old;
	if (same && r_new == SVC_OK)
		same = j_new.len == j_old.len &&
		       (!j_new.len || !memcmp(j_new.data, j_old.data, j_new.len));
	else if (same)
		same = !strcmp(e_new.msg, e_old.msg);
	if (!same) {
		fprintf(stderr, "new: %d %s (%zu bytes)\nold: %d %s (%zu bytes)\n", (int)r_new,
			e_new.msg, j_new.len, (int)r_old, e_old.msg, j_old.len);
		abort();
	}
	base_buf_deinit(&j_new);
	base_buf_deinit(&j_old);
	return 0;
}
