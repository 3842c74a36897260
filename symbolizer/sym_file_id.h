/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_file_id: every identity a file has, computed from its bytes: the GNU
 * build ID (the NT_GNU_BUILD_ID note), the Go build ID (.note.go.buildid) and
 * the OTel file hash ("htlhash": the first 16 bytes of SHA-256(file[:4096] ||
 * file[-4096:] || big-endian uint64 length), as the OpenTelemetry eBPF
 * profiler computes it, libpf/fileid.go; a file under 4096 bytes is hashed
 * whole twice). Pure computation; the service stores alias -> canonical
 * entries from these (docs/internals/identities.md).
 */
#ifndef SYM_FILE_ID_H
#define SYM_FILE_ID_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"

/* The Go build ID string's longest accepted length (Go writes 41 or 83). */
#define SYM_GO_BUILD_ID_TEXT_MAX 256

/* The OTel file hash of data[0..size) (any bytes, ELF or not), kind HTLHASH. */
void sym_htlhash(const void *data, size_t size, sym_build_id *out);
/* The same from a file's first and last min(size, SYM_HTLHASH_PART) bytes and
 * its length, for a file not held whole (a package member read as a stream). */
#define SYM_HTLHASH_PART 4096
void sym_htlhash_parts(const void *head, const void *tail, uint64_t size, sym_build_id *out);

/* The Go build-ID identity of a Go build ID string: kind GO, the first 32
 * bytes of SHA-256(text) (the string is up to 256 bytes, an identity holds
 * 64). False for an empty, too long or non-printable string. */
bool sym_go_build_id_of_text(const char *text, size_t len, sym_build_id *out);

/* The Go build-ID string in the ELF image's .note.go.buildid (name "Go",
 * NUL-padded to 4 bytes by Go's linker, type 4) into text (SYM_GO_BUILD_ID_TEXT_MAX + 1 bytes, NUL-terminated);
 * false when the image has none or is not ELF. */
bool sym_go_build_id_text(const void *data, size_t size, char *text);

/* All identities of a file, at most one of each kind: ids[SYM_ID_KINDS];
 * returns how many were found (the htlhash is always there for size > 0). */
size_t sym_file_ids(const void *data, size_t size, sym_build_id *ids);

/* The identity a file is stored under among its ids[0..n) (sym_file_ids):
 * its GNU build ID when it has one, else its file hash; NULL when n is 0. */
const sym_build_id *sym_file_ids_canonical(const sym_build_id *ids, size_t n);

#endif
