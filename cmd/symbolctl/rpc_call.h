/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_call: one unary call (Connect, or gRPC / gRPC-Web with --protocol) of symbolctl to symbolizerd, for any method:
 * the request message packed with protobuf-c, sent with svc_client, and the
 * answer unpacked as the method's response type. The commands that talk to
 * the daemon (symbolize, fetch --server) build their request and read their
 * response; this does the rest and says what went wrong.
 */
#ifndef CTL_RPC_CALL_H
#define CTL_RPC_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define CTL_RPC_WHY_MAX 768

/* --protocol connect|grpc|grpc-web of the commands that call the daemon: a
 * base_flag parse function (the setting is the process's, settings unused). */
bool ctl_rpc_parse_protocol(void *settings, const char *value, char *err, size_t err_size);
#define CTL_RPC_PROTOCOL_FLAG                                                                   \
	{"--protocol", "NAME", BASE_FLAG_CUSTOM, 0, 0, ctl_rpc_parse_protocol,                  \
	 "connect (the default), grpc (HTTP/2) or grpc-web"}

/*
 * Calls server's method ("symbolizer.v1.SymbolizerService/Symbolize") with req;
 * the response, of type resp_desc, in *resp (free it with
 * protobuf_c_message_free_unpacked). False with why filled ("URL: code:
 * message") when the call failed or its answer is not a message of that type
 * (*resp NULL).
 */
bool ctl_rpc_call(const char *server, const char *method, const ProtobufCMessage *req,
		  const ProtobufCMessageDescriptor *resp_desc, int64_t timeout_ms,
		  ProtobufCMessage **resp, char why[CTL_RPC_WHY_MAX]);

#endif
