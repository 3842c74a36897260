// SPDX-License-Identifier: Apache-2.0
/*
 * base_sha256: SHA-256 over libcrypto's EVP interface (base_sha256.h).
 */
#include "base/base_sha256.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

bool base_sha256_init(base_sha256 *s)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (ctx && !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	s->ctx = ctx;
	return ctx != NULL;
}

void base_sha256_update(base_sha256 *s, const void *data, size_t len)
{
	if (s->ctx && len && !EVP_DigestUpdate(s->ctx, data, len)) {
		EVP_MD_CTX_free(s->ctx);
		s->ctx = NULL;
	}
}

bool base_sha256_final(base_sha256 *s, uint8_t out[BASE_SHA256_LEN])
{
	unsigned n = 0;
	bool ok = s->ctx && EVP_DigestFinal_ex(s->ctx, out, &n) && n == BASE_SHA256_LEN;
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
	if (!ok)
		memset(out, 0, BASE_SHA256_LEN);
	return ok;
}

void base_sha256_of(const void *data, size_t len, uint8_t out[BASE_SHA256_LEN])
{
	SHA256(data, len, out);
}

void base_sha256_hex(const void *data, size_t len, char out[2 * BASE_SHA256_LEN + 1])
{
	uint8_t md[BASE_SHA256_LEN];
	base_sha256_of(data, len, md);
	for (int i = 0; i < BASE_SHA256_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}
