/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_sha256: SHA-256, the one implementation of the tree: OpenSSL's
 * libcrypto (its SHA extensions and vector code; libcurl loads it already).
 * Used by the file identities (symbolizer/sym_file_id.c: the OTel file hash,
 * a Go build ID's identity bytes) and the S3 tier's object checksums.
 */
#ifndef BASE_SHA256_H
#define BASE_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BASE_SHA256_LEN 32

/* Incremental: init, updates, final (which frees the context). */
typedef struct base_sha256 {
	void *ctx;               /* EVP_MD_CTX; NULL after a failed init */
} base_sha256;

bool base_sha256_init(base_sha256 *s);  /* false: out of memory */
void base_sha256_update(base_sha256 *s, const void *data, size_t len);
/* The digest; false (out zeroed) when init or an update failed. */
bool base_sha256_final(base_sha256 *s, uint8_t out[BASE_SHA256_LEN]);

/* One call: the digest of data, as bytes or as 64 lowercase hex digits. */
void base_sha256_of(const void *data, size_t len, uint8_t out[BASE_SHA256_LEN]);
void base_sha256_hex(const void *data, size_t len, char out[2 * BASE_SHA256_LEN + 1]);

#endif
