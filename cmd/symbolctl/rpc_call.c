// SPDX-License-Identifier: Apache-2.0
/*
 * rpc_call: one Connect unary call to symbolizerd (rpc_call.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/symbolctl/rpc_call.h"
#include "service/rpc/svc_client.h"

static svc_client_protocol protocol = SVC_CLIENT_CONNECT;

bool ctl_rpc_parse_protocol(void *settings, const char *value, char *err, size_t err_size)
{
	(void)settings;
	if (svc_client_protocol_parse(value, &protocol))
		return true;
	snprintf(err, err_size, "'%.40s' is not connect, grpc or grpc-web", value);
	return false;
}

bool ctl_rpc_call(const char *server, const char *method, const ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, int64_t timeout_ms,
		  ProtobufCMessage **resp, char why[CTL_RPC_WHY_MAX])
{
	*resp = NULL;
	size_t size = protobuf_c_message_get_packed_size(req);
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf) {
		snprintf(why, CTL_RPC_WHY_MAX, "out of memory");
		return false;
	}
	protobuf_c_message_pack(req, buf);
	svc_client_call call = {
		.server = server,
		.method = method,
		.request = buf,
		.request_size = size,
		.timeout_ms = timeout_ms,
		.protocol = protocol,
	};
	svc_client_result res;
	svc_errc e = svc_client_unary(&call, &res);
	free(buf);
	if (e != SVC_OK) {
		snprintf(why, CTL_RPC_WHY_MAX, "%.200s: %s: %s", server, res.code, res.message);
		svc_client_result_deinit(&res);
		return false;
	}
	*resp = protobuf_c_message_unpack(resp_desc, NULL, res.body_size, res.body);
	svc_client_result_deinit(&res);
	if (!*resp)
		snprintf(why, CTL_RPC_WHY_MAX, "%.200s: the answer is not a %s", server,
			 resp_desc->name);
	return *resp != NULL;
}
