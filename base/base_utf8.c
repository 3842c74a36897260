// SPDX-License-Identifier: Apache-2.0
/*
 * base_utf8: UTF-8 validation and repair (see base_utf8.h).
 */
#include "base/base_utf8.h"

#include <stdint.h>
#include <string.h>

/* The length of the well-formed sequence at s[0..n), or 0 when it is not one
 * (*bad: how many bytes the maximal ill-formed prefix covers, at least 1). */
static size_t seq_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned c = s[0];
	size_t need;
	unsigned lo = 0x80, hi = 0xBF;
	*bad = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (size_t i = 1; i <= need; i++) {
		if (i >= n)
			return 0;
		unsigned b = s[i];
		if (b < lo || b > hi)
			return 0;
		lo = 0x80;
		hi = 0xBF;
		*bad = i + 1;
	}
	return need + 1;
}

size_t base_utf8_seq_len(const char *s, size_t n)
{
	size_t bad;
	return seq_len((const unsigned char *)s, n, &bad);
}

bool base_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, bad;
	while (i < len) {
		/* ASCII eight bytes at a time: no byte with its top bit set */
		uint64_t w;
		if (len - i >= 8 && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ull) == 0)) {
			i += 8;
			continue;
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = seq_len(p + i, len - i, &bad);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

size_t base_utf8_repair(const char *s, size_t len, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, bad;
	while (i < len) {
		size_t k = seq_len(p + i, len - i, &bad);
		if (k) {
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		/* bad counts the lead byte and the continuation bytes that were
		 * still acceptable: the maximal ill-formed subsequence. */
		memcpy(out + o, "\xEF\xBF\xBD", 3);
		o += 3;
		i += bad;
	}
	return o;
}
