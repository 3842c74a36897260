/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_sha256: SHA-256 (FIPS 180-4), incremental, for the file identities of
 * sym_file_id.c (the OTel file hash, the Go build ID's identity bytes). Pure
 * computation; internal to symbolizer/.
 */
#ifndef SYM_SHA256_IMPL_H
#define SYM_SHA256_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define SYM_SHA256_LEN 32

typedef struct sym_sha256 {
	uint32_t h[8];
	uint64_t total;       /* bytes fed so far */
	uint8_t block[64];
	size_t used;          /* bytes of block filled */
} sym_sha256;

void sym_sha256_init(sym_sha256 *s);
void sym_sha256_update(sym_sha256 *s, const void *data, size_t len);
void sym_sha256_final(sym_sha256 *s, uint8_t out[SYM_SHA256_LEN]);

#endif
