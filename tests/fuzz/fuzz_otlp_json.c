// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_otlp_json: the outside bytes the OTLP receiver and forwarder read
 * besides the binary request (fuzz_otlp_decode): first byte even, an
 * OTLP/JSON ExportProfilesServiceRequest through the JSON codec with
 * SVC_RPC_JSON_OTLP (hex trace, span and profile IDs, enums as numbers):
 * what it accepts must unpack with protobuf-c and read back from its own
 * JSON to the same message; first byte odd, a downstream's answer headers:
 * a Retry-After value and a grpc-status-details-bin (base64
 * google.rpc.Status with a RetryInfo), whose delays must stay in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "service/otlp/svc_otlp_impl.h"
#include "service/rpc/svc_rpc_json.h"

#define WIRE_CAP (1u << 20)
#define REQ &opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor

static uint8_t *canonical(const base_buf *w, size_t *n)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(REQ, NULL, w->len, w->data);
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

static void json_case(const svc_rpc_json *codec, const uint8_t *data, size_t size)
{
	base_buf w1, j, w2;
	base_buf_init(&w1, WIRE_CAP);
	base_buf_init(&j, SIZE_MAX);
	base_buf_init(&w2, SIZE_MAX);
	svc_error err;
	svc_errc rc = svc_rpc_json_decode(codec, (const char *)data, size, 4096, &w1, &err);
	if (w1.len > WIRE_CAP)
		abort();
	if (rc == SVC_OK) {
		size_t n1, n2;
		uint8_t *c1 = canonical(&w1, &n1);
		if (!c1)
			abort();
		if (svc_rpc_json_encode(codec, w1.data, w1.len, &j, &err) != SVC_OK ||
		    svc_rpc_json_decode(codec, (const char *)j.data, j.len, SIZE_MAX, &w2, &err) !=
			    SVC_OK)
			abort();
		uint8_t *c2 = canonical(&w2, &n2);
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static svc_rpc_json *codec;
	if (!codec && !(codec = svc_rpc_json_create_opts(REQ, SVC_RPC_JSON_OTLP)))
		abort();
	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		json_case(codec, data + 1, size - 1);
		return 0;
	}
	const char *s = (const char *)data + 1;
	int64_t a = svc_otlp_retry_after_ms(s, size - 1);
	int64_t r = svc_otlp_grpc_retry_info_ms(s, size - 1);
	if (a < -1 || a > 3600000 || r < -1)
		abort();
	return 0;
}
