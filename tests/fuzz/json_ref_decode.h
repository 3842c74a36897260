/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ref_decode: the json-c based decoder svc_rpc_json_decode replaced,
 * as the differential fuzzer's reference (json_ref_decode.c). Same contract
 * as svc_rpc_json_decode (service/rpc/svc_rpc_json.h).
 */
#ifndef JSON_REF_DECODE_H
#define JSON_REF_DECODE_H

#include "service/rpc/svc_rpc_json.h"

svc_errc json_ref_decode(const svc_rpc_json *j, const char *text, size_t len,
			 size_t max_containers, base_buf *wire, svc_error *err);

#endif
