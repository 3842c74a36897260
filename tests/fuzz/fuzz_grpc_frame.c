// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_grpc_frame: the parsers of gRPC's outside bytes (service/rpc/svc_grpc.c):
 * any bytes as a unary request (prefix and message, under a cap), as
 * grpc-timeout, as gRPC-Web text (base64) and as a HealthCheckRequest. What
 * they accept must be consistent: the message lies inside the input and
 * within the cap, a timeout is never negative, decoded base64 fits its bound
 * and (unpadded) encodes back to the same text, a service name is NUL-terminated in its
 * buffer; grpc-message's encoding of the bytes is printable ASCII; a
 * ServerReflectionRequest always gets an answer (service/http/svc_grpc_reflection.c);
 * grpc-status-details-bin of a message of the bytes always fits.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/http/svc_grpc_impl.h"
#include "service/rpc/svc_grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *msg;
	size_t n;
	bool z;
	svc_error err;
	if (svc_grpc_parse_unary(data, size, 4096, &msg, &n, &z, &err) == SVC_OK)
		assert(msg == data + 5 && n == size - 5 && n <= 4096);
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	int64_t ms = -1;
	if (svc_grpc_parse_timeout(text, &ms))
		assert(ms >= 0);
	uint8_t *out = malloc(size / 4 * 3 + 1);
	if (out && svc_grpc_base64_decode(text, size, out, &n) == SVC_OK) {
		assert(n <= size / 4 * 3);
		struct evbuffer *b = evbuffer_new();
		if (b && svc_grpc_base64_encode(out, n, b)) {
			/* without padding every bit is used: the same text back */
			size_t m = evbuffer_get_length(b);
			assert(m <= size);
			if (!memchr(text, '=', size))
				assert(m == size &&  /* an empty buffer's pullup is NULL */
				       (m == 0 || memcmp(evbuffer_pullup(b, -1), text, m) == 0));
		}
		if (b)
			evbuffer_free(b);
	}
	free(out);
	struct evbuffer *refl = evbuffer_new();
	if (refl) {
		/* a ServerReflectionResponse, echoing the request (field 2) */
		assert(svc_grpc_reflection_answer(data, size, refl));
		assert(evbuffer_get_length(refl) >= size + 2);
		evbuffer_free(refl);
	}
	char service[64];
	if (svc_grpc_health_request(data, size, service, sizeof(service)))
		assert(strlen(service) < sizeof(service));
	char enc[128];
	size_t e = svc_grpc_percent_encode(text, enc, sizeof(enc));
	assert(e < sizeof(enc) && enc[e] == '\0');
	for (size_t i = 0; i < e; i++)
		assert(enc[i] >= 0x20 && enc[i] <= 0x7e);
	/* grpc-status-details-bin of an error whose message holds the bytes
	 * (a method name, a header): it always fits, unpadded base64 */
	svc_error se = {.code = size ? (svc_errc)(data[0] % SVC_E_N_CODES) : SVC_E_INTERNAL};
	snprintf(se.msg, sizeof(se.msg), "%s", text);
	char details[SVC_GRPC_DETAILS_MAX];
	size_t dn = svc_grpc_status_details(&se, details, sizeof(details));
	assert(dn > 0 && dn == strlen(details) && !memchr(details, '=', dn));
	free(text);
	return 0;
}
