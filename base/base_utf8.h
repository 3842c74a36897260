/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_utf8: UTF-8 validation and repair. Strings that reach a response
 * (proto3 `string` fields, JSON) must be valid UTF-8, or standard clients
 * reject the whole message; names from a file's DWARF or symbol table are
 * whatever bytes the file holds. The index builders repair them once, where
 * they are interned (symbolizer/sym_strtab.c).
 */
#ifndef BASE_UTF8_H
#define BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). */
bool base_utf8_valid(const char *s, size_t len);

/* The length of the well-formed sequence at s[0..n) (1 for ASCII), or 0
 * when it is not one (n > 0). */
size_t base_utf8_seq_len(const char *s, size_t n);

/* Writes s[0..len) to out with each maximal ill-formed subsequence replaced
 * by U+FFFD (EF BF BD), as the Unicode standard recommends (what Python's
 * decode(errors="replace") does); returns the bytes written. out holds at
 * least BASE_UTF8_REPAIR_MAX(len) bytes; it is not NUL-terminated. */
#define BASE_UTF8_REPAIR_MAX(len) ((len) * 3)
size_t base_utf8_repair(const char *s, size_t len, char *out);

#endif
