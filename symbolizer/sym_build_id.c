// SPDX-License-Identifier: Apache-2.0
/*
 * sym_build_id: the kinds of file identity, hex conversion, comparison and
 * store keys (see sym_build_id.h).
 */
#include "symbolizer/sym_build_id.h"

#include <string.h>

#include "base/base_hash.h"
#include "symbolizer/sym_file_id.h"

/* The kinds by value: one row each. */
static const char *const kind_names[SYM_ID_KINDS] = {
	[SYM_ID_GNU] = "gnu",
	[SYM_ID_GO] = "go",
	[SYM_ID_HTLHASH] = "htlhash",
};

const char *sym_id_kind_name(unsigned kind)
{
	return kind < SYM_ID_KINDS ? kind_names[kind] : NULL;
}

bool sym_id_kind_parse(const char *name, size_t len, sym_id_kind *out)
{
	for (unsigned k = 0; k < SYM_ID_KINDS; k++)
		if (strlen(kind_names[k]) == len && memcmp(kind_names[k], name, len) == 0) {
			*out = (sym_id_kind)k;
			return true;
		}
	return false;
}

size_t sym_build_id_key(const sym_build_id *id, uint8_t *out)
{
	if (id->len == 0 || id->len > SYM_BUILD_ID_MAX || id->kind >= SYM_ID_KINDS)
		return 0;
	memcpy(out, id->bytes, id->len);
	if (id->kind == SYM_ID_GNU)
		return id->len;
	memset(out + id->len, 0, SYM_BUILD_ID_MAX - id->len);
	out[SYM_BUILD_ID_MAX] = id->kind;
	out[SYM_BUILD_ID_MAX + 1] = id->len;
	return SYM_BUILD_ID_KEY_MAX;
}

bool sym_build_id_from_key(const uint8_t *key, size_t len, sym_build_id *out)
{
	memset(out, 0, sizeof(*out));
	if (len >= 1 && len <= SYM_BUILD_ID_MAX) {
		memcpy(out->bytes, key, len);
		out->len = (uint8_t)len;
		return true;
	}
	if (len != SYM_BUILD_ID_KEY_MAX || key[SYM_BUILD_ID_MAX] == SYM_ID_GNU ||
	    key[SYM_BUILD_ID_MAX] >= SYM_ID_KINDS || key[SYM_BUILD_ID_MAX + 1] == 0 ||
	    key[SYM_BUILD_ID_MAX + 1] > SYM_BUILD_ID_MAX)
		return false;
	out->kind = key[SYM_BUILD_ID_MAX];
	out->len = key[SYM_BUILD_ID_MAX + 1];
	memcpy(out->bytes, key, out->len);
	return true;
}

void sym_build_id_to_hex(const sym_build_id *id, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = id->len <= SYM_BUILD_ID_MAX ? id->len : SYM_BUILD_ID_MAX;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[id->bytes[i] >> 4];
		out[2 * i + 1] = digits[id->bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

int sym_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool sym_build_id_from_hex(const char *hex, size_t len, sym_build_id *out)
{
	return sym_build_id_from_hex_kind(SYM_ID_GNU, hex, len, out);
}

bool sym_build_id_from_hex_kind(sym_id_kind kind, const char *hex, size_t len,
				sym_build_id *out)
{
	if ((unsigned)kind >= SYM_ID_KINDS || len < 2 || len > 2 * SYM_BUILD_ID_MAX || len % 2 != 0)
		return false;
	if ((kind == SYM_ID_GO && len != 64) || (kind == SYM_ID_HTLHASH && len != 32))
		return false;
	for (size_t i = 0; i < len / 2; i++) {
		int hi = sym_hex_digit(hex[2 * i]), lo = sym_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out->bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	out->len = (uint8_t)(len / 2);
	out->kind = (uint8_t)kind;
	return true;
}

bool sym_build_id_equal(const sym_build_id *a, const sym_build_id *b)
{
	return a->len == b->len && a->kind == b->kind && memcmp(a->bytes, b->bytes, a->len) == 0;
}

uint64_t sym_build_id_hash(const sym_build_id *id)
{
	return base_hash_bytes(id->bytes, id->len) ^ ((uint64_t)id->kind * 0x9e3779b97f4a7c15ull);
}

bool sym_build_id_from_text(sym_id_kind kind, const char *text, size_t len,
			    sym_build_id *out)
{
	if (kind == SYM_ID_GO)
		return sym_go_build_id_of_text(text, len, out);
	return sym_build_id_from_hex_kind(kind, text, len, out);
}
