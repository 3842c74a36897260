// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_number: a number read exactly from its text
 * (svc_rpc_json_impl.h: an integer in number or string form, "1.5e1" is 15),
 * and the prescan that counts the containers and spots integer literals past
 * 64 bits and single-quoted strings: the decoder (svc_rpc_json_decode.c)
 * runs it over a refused text only, so its answers come first, as they did
 * when the prescan ran before json-c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_impl.h"

/*
 * A JSON number's text, exactly ("4430.0000000000001" is not an integer, as
 * a double would have it; "1.5e1" is 15): -?digits(.digits)?([eE][+-]?digits)?
 * as decimal digits D and an exponent E; integral when the digits past the
 * point are zeros. 0: integral, in *v; 1: not an integer; 2: an integer past
 * 64 bits.
 */
int svc_rpc_json_integral_number(const char *s, svc_rpc_json_integral *v)
{
	const char *p = s;
	bool neg = *p == '-';
	p += neg;
	char digits[64];
	size_t nd = 0, lead = 0;
	long exp10 = 0;
	bool any = false, dot = false;
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
		if (*p == '.') {
			dot = true;
			continue;
		}
		any = true;
		if (dot)
			exp10--;
		if (*p == '0' && nd == 0) {
			lead++;
			continue;
		}
		if (nd == sizeof(digits)) {  /* past 64 significant digits */
			if (!dot)
				return 2;
			if (*p != '0')
				return 1;
			exp10++;  /* a zero past the point adds nothing */
			continue;
		}
		digits[nd++] = *p;
	}
	if (!any)
		return 1;
	if (*p == 'e' || *p == 'E') {
		p++;
		bool eneg = *p == '-';
		p += *p == '-' || *p == '+';
		if (*p < '0' || *p > '9')
			return 1;
		long e = 0;
		for (; *p >= '0' && *p <= '9'; p++)
			e = e < 100000 ? e * 10 + (*p - '0') : e;
		exp10 += eneg ? -e : e;
	}
	if (*p)
		return 1;
	while (exp10 < 0 && nd > 0 && digits[nd - 1] == '0') {  /* trailing zeros past the point */
		nd--;
		exp10++;
	}
	if (nd == 0) {  /* zero */
		v->neg = false;
		v->mag = 0;
		return 0;
	}
	if (exp10 < 0)
		return 1;  /* a fraction that is not zero */
	if ((size_t)exp10 + nd > 20)
		return 2;
	uint64_t m = 0;
	for (size_t i = 0; i < nd + (size_t)exp10; i++) {
		unsigned dgt = i < nd ? (unsigned)(digits[i] - '0') : 0;
		if (m > (UINT64_MAX - dgt) / 10)
			return 2;
		m = m * 10 + dgt;
	}
	v->neg = neg;
	v->mag = m;
	return 0;
}

/* "123", "-5", or a number in string form ("1e3"): as svc_rpc_json_integral_number. */
int svc_rpc_json_integral_text(const char *s, svc_rpc_json_integral *v)
{
	const char *p = s + (*s == '-');
	/* The common case, up to 19 digits (no overflow): read here. */
	uint64_t u19 = 0;
	size_t k = 0;
	while (k < 19 && p[k] >= '0' && p[k] <= '9')
		u19 = u19 * 10 + (uint64_t)(p[k++] - '0');
	if (k && !p[k]) {
		v->neg = *s == '-' && u19 != 0;
		v->mag = u19;
		return 0;
	}
	if (*p >= '0' && *p <= '9') {
		char *end;
		errno = 0;
		unsigned long long u = strtoull(p, &end, 10);
		if (!*end && !errno) {
			v->neg = *s == '-' && u != 0;
			v->mag = u;
			return 0;
		}
	}
	return svc_rpc_json_integral_number(s, v);
}

/* JSON objects and arrays in text (outside strings): the size of json-c's
 * tree. A string's bytes are skipped to its closing quote with memchr (a
 * quote after an odd run of backslashes is escaped). */
/* An integer literal at s[i..n) (-?digits, not followed by . e E) past what
 * any field holds (over UINT64_MAX, or under INT64_MIN): json-c would clamp
 * it. *i: the token's last byte. */
static bool int_literal_too_large(const char *s, size_t n, size_t *i)
{
	size_t k = *i;
	bool neg = s[k] == '-';
	k += neg;
	size_t start = k;
	while (k < n && s[k] >= '0' && s[k] <= '9')
		k++;
	if (k < n && (s[k] == '.' || s[k] == 'e' || s[k] == 'E')) {
		while (k < n && ((s[k] >= '0' && s[k] <= '9') || s[k] == '.' || s[k] == 'e' ||
				 s[k] == 'E' || s[k] == '+' || s[k] == '-'))
			k++;  /* the rest of the token */
		*i = k - 1;
		return false;  /* a double: json-c keeps its text (svc_rpc_json_integral_number) */
	}
	*i = k ? k - 1 : 0;
	size_t nd = k - start;
	const char *limit = neg ? "9223372036854775808" : "18446744073709551615";
	size_t ln = strlen(limit);
	return nd > ln || (nd == ln && memcmp(s + start, limit, ln) > 0);
}

size_t svc_rpc_json_prescan(const char *s, size_t n, bool *single_quote, bool *huge_int)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\'') {
			*single_quote = true;  /* outside a string: json-c 0.16 takes 'key' */
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			*huge_int |= int_literal_too_large(s, n, &i);
		} else if (c == '{' || c == '[') {
			count++;
		} else if (c == '"') {
			for (;;) {
				const char *q = memchr(s + i + 1, '"', n - i - 1);
				if (!q)
					return count;
				i = (size_t)(q - s);
				size_t bs = 0;
				while (q - bs > s && q[-1 - (ptrdiff_t)bs] == '\\')
					bs++;
				if (bs % 2 == 0)
					break;  /* i: the closing quote */
			}
		}
	}
	return count;
}
