/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ref_encode: the encoder svc_rpc_json_encode was before its
 * table-driven fast path, as fuzz_json_encode_differential's reference
 * (json_ref_encode.c). Same contract as svc_rpc_json_encode
 * (service/rpc/svc_rpc_json.h).
 */
#ifndef JSON_REF_ENCODE_H
#define JSON_REF_ENCODE_H

#include "service/rpc/svc_rpc_json.h"

svc_errc json_ref_encode(const svc_rpc_json *j, const uint8_t *wire, size_t len, base_buf *out,
			 svc_error *err);

#endif
