/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_build_id: a file identity as a value: its kind and its raw bytes, and
 * its lowercase-hex form.
 *
 * Identities are hex strings at the edges (APIs, URLs) and values inside, from
 * the RPC edge to the store key (sym_build_id_key). The kind says which
 * identity it is: the GNU build ID (the ELF note, 1..64 bytes, 2..128 hex
 * digits), the Go build ID and the OTel file hash (sym_file_id.h); a
 * zero-initialized value is a GNU build ID, so
 * `{.len = 20}` is a GNU build ID. A new kind is one enumerator, one row of
 * the names table in sym_build_id.c, and its key encoding in
 * sym_build_id_key (docs/internals/identities.md).
 */
#ifndef SYM_BUILD_ID_H
#define SYM_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_BUILD_ID_MAX 64
#define SYM_BUILD_ID_HEX_MAX (2 * SYM_BUILD_ID_MAX + 1)

/* The kinds of file identity (0 is the default: a GNU build ID). */
typedef enum sym_id_kind {
	SYM_ID_GNU = 0,   /* the NT_GNU_BUILD_ID note ("gnu") */
	SYM_ID_GO,        /* .note.go.buildid: SHA-256 of its string, 32 bytes ("go") */
	SYM_ID_HTLHASH,   /* the OTel file hash, 16 bytes ("htlhash"; sym_file_id.h) */
	SYM_ID_KINDS,     /* the count; not a kind */
} sym_id_kind;

typedef struct sym_build_id {
	uint8_t len;  /* 0: no identity */
	uint8_t kind; /* sym_id_kind */
	uint8_t bytes[SYM_BUILD_ID_MAX];
} sym_build_id;

/* "gnu", "go", "htlhash"; NULL for a value that is not a kind. */
const char *sym_id_kind_name(unsigned kind);

/* The kind named name[0..len) ("gnu", "go", "htlhash"); false for any other
 * name. */
bool sym_id_kind_parse(const char *name, size_t len, sym_id_kind *out);

/* The longest store key of an identity (sym_build_id_key). */
#define SYM_BUILD_ID_KEY_MAX (SYM_BUILD_ID_MAX + 2)

/*
 * The identity's key in the store into out (SYM_BUILD_ID_KEY_MAX bytes);
 * returns its length (0 for an empty or unknown identity). A GNU build ID's
 * key is its raw bytes, as every store written so far has it; any other kind's
 * key is 66 bytes, which no GNU key is: the bytes zero-padded to 64, the
 * kind, the length.
 */
size_t sym_build_id_key(const sym_build_id *id, uint8_t *out);

/* The identity whose key (sym_build_id_key) is key[0..len); false for bytes
 * no identity has as its key. */
bool sym_build_id_from_key(const uint8_t *key, size_t len, sym_build_id *out);

/* Writes lowercase hex and a NUL into out (at least SYM_BUILD_ID_HEX_MAX bytes). */
void sym_build_id_to_hex(const sym_build_id *id, char *out);

/* Parses hex of even length 2..128 (either case) into a GNU build ID. False on
 * anything else. */
bool sym_build_id_from_hex(const char *hex, size_t len, sym_build_id *out);

/* The same for an identity of the given kind (GO: 64 digits, the digest;
 * HTLHASH: 32 digits). */
bool sym_build_id_from_hex_kind(sym_id_kind kind, const char *hex, size_t len,
				sym_build_id *out);

/* An identity as written at the edges for its kind: hex for GNU and HTLHASH,
 * the Go build ID string itself for GO (as `go tool buildid` prints it and
 * the OTel attribute carries it; sym_go_build_id_of_text). */
bool sym_build_id_from_text(sym_id_kind kind, const char *text, size_t len,
			    sym_build_id *out);

/* Equal kinds and bytes. */
bool sym_build_id_equal(const sym_build_id *a, const sym_build_id *b);

/* A hash of the kind and bytes, for hash tables keyed by identity. */
uint64_t sym_build_id_hash(const sym_build_id *id);

/* The value of one hex digit (either case), -1 for any other character. */
int sym_hex_digit(char c);

#endif
