/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_build_id: the service's check of a build ID written at its edges (URLs,
 * requests): hex, even length, 2..128 digits, lowercase inside (DESIGN.md;
 * an uppercase URL path is lowercased here, at the edge; a request's field
 * stays lowercase only, svc_build_id_check).
 */
#ifndef SVC_BUILD_ID_H
#define SVC_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"

/* Parses hex[0..len) into *out; false unless it is hex, even, 2..128. Uppercase
 * digits are taken (an edge lowercases them): a caller that keeps the text
 * writes it again from *out (sym_build_id_to_hex), never copies it. */
bool svc_build_id_parse(const char *hex, size_t len, sym_build_id *out);

/* The same for a request's build_id field, lowercase only (the RPC contract:
 * clients lowercase, symbolctl does): NULL when *out is set, else what is
 * wrong with it, for the caller's error (an INVALID mapping, a 400). */
const char *svc_build_id_check(const char *hex, sym_build_id *out);

/* The same for an identity of any kind written as its kind's edge form
 * (sym_build_id_from_text): GNU and HTLHASH lowercase hex, GO the Go build ID
 * string. kind_name is the request's kind field ("" or NULL: "gnu"). NULL
 * when *out is set, else what is wrong. */
const char *svc_build_id_check_kind(const char *kind_name, const char *text, sym_build_id *out);

/*
 * An identity's key in the store (sym_build_id_key), as a value. Every stor_
 * call of the service names an identity's entry through SVC_STORE_KEY(id),
 * which gives the two arguments (key bytes, length) those calls take: the
 * key is derived from the identity value in this one place, never from its
 * bytes directly. (C11: the array of a returned struct lives until the end of
 * the full expression, here the stor_ call.)
 */
typedef struct svc_store_key {
	uint8_t bytes[SYM_BUILD_ID_KEY_MAX];
	size_t len;
} svc_store_key;

static inline svc_store_key svc_store_key_of(const sym_build_id *id)
{
	svc_store_key k;
	k.len = sym_build_id_key(id, k.bytes);
	return k;
}

#define SVC_STORE_KEY(id) svc_store_key_of(id).bytes, svc_store_key_of(id).len

#endif
