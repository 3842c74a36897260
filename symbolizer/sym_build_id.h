/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_build_id: a GNU build ID as raw bytes, and its lowercase-hex form.
 *
 * Build IDs are hex strings at the edges (APIs, keys, URLs) and raw bytes inside.
 * A valid build ID has 1..64 bytes (2..128 hex digits).
 */
#ifndef SYM_BUILD_ID_H
#define SYM_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_BUILD_ID_MAX 64
#define SYM_BUILD_ID_HEX_MAX (2 * SYM_BUILD_ID_MAX + 1)

typedef struct sym_build_id {
	uint8_t len; /* 0: no build ID */
	uint8_t bytes[SYM_BUILD_ID_MAX];
} sym_build_id;

/* Writes lowercase hex and a NUL into out (at least SYM_BUILD_ID_HEX_MAX bytes). */
void sym_build_id_to_hex(const sym_build_id *id, char *out);

/* Parses hex of even length 2..128 (either case). False on anything else. */
bool sym_build_id_from_hex(const char *hex, size_t len, sym_build_id *out);

bool sym_build_id_equal(const sym_build_id *a, const sym_build_id *b);

/* A hash of the bytes (FNV-1a, mixed), for hash tables keyed by build ID. */
uint64_t sym_build_id_hash(const sym_build_id *id);

/* The value of one hex digit (either case), -1 for any other character. */
int sym_hex_digit(char c);

#endif
