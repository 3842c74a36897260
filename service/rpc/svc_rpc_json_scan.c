// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_scan: the decoder's JSON scanner (svc_rpc_json_scan_impl.h):
 * strings (8 bytes at a time over plain runs, escapes into scratch),
 * numbers (plain integers read on the way), literals, containers, and a
 * checked skip over any value (unknown fields, the rest of a refused one).
 * The syntax errors name json-c's reasons where json-c has one, so the
 * messages read as before the scanner replaced json-c's tree.
 */
#include <string.h>

#include "base/base_utf8.h"
#include "service/rpc/svc_rpc_json.h"
#include "service/rpc/svc_rpc_json_impl.h"
#include "service/rpc/svc_rpc_json_scan_impl.h"

void json_scan_init(json_scan *s, const char *text, size_t len, size_t max_containers)
{
	memset(s, 0, sizeof(*s));
	s->text = s->p = text;
	s->end = text + len;
	s->max_containers = max_containers;
	base_buf_init(&s->scratch, len + 8);
}

void json_scan_deinit(json_scan *s)
{
	base_buf_deinit(&s->scratch);
}

bool json_scan_fail(json_scan *s, const char *what)
{
	if (!s->error) {
		s->error = what;
		s->error_at = (size_t)(s->p - s->text);
		s->error_code = SVC_E_INVALID;
		s->truncated = s->p >= s->end;
	}
	return false;
}

static bool nomem(json_scan *s)
{
	json_scan_fail(s, "out of memory");
	s->error_code = SVC_E_NOMEM;
	return false;
}

/* ---- strings ---- */

/* A byte that a string holds as it is: printable ASCII, not '"' or '\\'. */
static inline bool plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* A multi-byte sequence at p (first byte >= 0x80): its length; 0 when not
 * even well formed (json-c's check: a lead byte of 2 to 4 and continuation
 * bytes); *bad set when well formed but not valid (overlong, surrogate,
 * past U+10FFFF). */
static size_t utf8_seq(const char *p, const char *end, bool *bad)
{
	size_t k = base_utf8_seq_len(p, (size_t)(end - p));
	if (k)
		return k;
	unsigned char c = (unsigned char)*p;
	size_t n = c >= 0xc0 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf8 ? 4 : 0;
	if (!n || (size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (((unsigned char)p[i] & 0xc0) != 0x80)
			return 0;
	*bad = true;
	return n;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Four hex digits at p (p + 4 <= end); -1 when not. */
static long hex4(const char *p)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex_digit(p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A \u escape at s->p ('\\'), written at *o: a surrogate pair as one code
 * point, a lone surrogate as U+FFFD (json-c's way). */
static bool unicode_escape(json_scan *s, char **o, json_str *out)
{
	if (s->end - s->p < 6 || hex4(s->p + 2) < 0) {
		if (s->end - s->p < 6)
			s->p = s->end;
		return json_scan_fail(s, "invalid string sequence");
	}
	unsigned long cp = (unsigned long)hex4(s->p + 2);
	s->p += 6;
	if (cp >= 0xd800 && cp < 0xdc00) {
		long lo = s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' ? hex4(s->p + 2) : -1;
		if (lo >= 0xdc00 && lo < 0xe000) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
			s->p += 6;
		} else {
			cp = 0xfffd;  /* what follows is read on its own */
		}
	} else if (cp >= 0xdc00 && cp < 0xe000) {
		cp = 0xfffd;
	}
	out->nul |= cp == 0;
	*o += put_utf8(*o, cp);
	return true;
}

/* The rest of a string from s->p, which holds its first escape, unescaped
 * into scratch after the plain bytes [start, s->p). */
static bool string_escaped(json_scan *s, const char *start, json_str *out)
{
	size_t plain = (size_t)(s->p - start);
	s->scratch.len = 0;
	/* An escape never takes more bytes than it reads (\ud800 -> 3; a pair 12 -> 4). */
	if (!base_buf_reserve(&s->scratch, (size_t)(s->end - start) + 1))
		return nomem(s);
	char *o = (char *)s->scratch.data;
	memcpy(o, start, plain);
	o += plain;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p;
		if (plain_byte(c)) {
			*o++ = (char)c;
			s->p++;
		} else if (c == '"') {
			s->p++;
			*o = '\0';
			out->s = (const char *)s->scratch.data;
			out->n = (size_t)(o - out->s);
			return true;
		} else if (c >= 0x80) {
			size_t k = utf8_seq(s->p, s->end, &out->bad_utf8);
			if (!k)
				return json_scan_fail(s, "invalid utf-8 string");
			memcpy(o, s->p, k);
			o += k;
			s->p += k;
		} else if (c != '\\') {
			return json_scan_fail(s, "a control character in a string (JSON escapes it)");
		} else if (s->end - s->p < 2) {
			s->p = s->end;
			return json_scan_fail(s, "the JSON text ends early");
		} else {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *e = memchr(from, s->p[1], sizeof(from) - 1);
			if (s->p[1] == 'u') {
				if (!unicode_escape(s, &o, out))
					return false;
			} else if (!e || !s->p[1]) {
				s->p++;
				return json_scan_fail(s, "invalid string sequence");
			} else {
				*o++ = to[e - from];
				s->p += 2;
			}
		}
	}
	return json_scan_fail(s, "the JSON text ends early");
}

bool json_scan_string(json_scan *s, json_str *out)
{
	const char *start = ++s->p, *end = s->end;
	const char *p = start;
	out->nul = out->bad_utf8 = false;
	for (;;) {
		/* 8 bytes at a time to the first that needs care (most strings: the quote). */
		uint64_t w, care = 0;
		while (end - p >= 8 && (memcpy(&w, p, 8), !(care = json_care_mask(w))))
			p += 8;
		if (care)
			p += __builtin_ctzll(care) / 8;
		else
			while (p < end && plain_byte((unsigned char)*p))
				p++;
		if (p == end) {
			s->p = p;
			return json_scan_fail(s, "the JSON text ends early");
		}
		unsigned char c = (unsigned char)*p;
		if (c == '"') {
			out->s = start;
			out->n = (size_t)(p - start);
			s->p = p + 1;
			return true;
		}
		if (c < 0x80) {  /* an escape (or a control character) */
			s->p = p;
			return string_escaped(s, start, out);
		}
		size_t k = utf8_seq(p, end, &out->bad_utf8);
		if (!k) {
			s->p = p;
			return json_scan_fail(s, "invalid utf-8 string");
		}
		p += k;
	}
}

const char *json_scan_cstr(json_scan *s, const json_str *str)
{
	if (str->s == (const char *)s->scratch.data)
		return str->s;  /* unescaped there, NUL-terminated */
	s->scratch.len = 0;
	if (!base_buf_reserve(&s->scratch, str->n + 1))
		return NULL;
	memcpy(s->scratch.data, str->s, str->n);
	s->scratch.data[str->n] = '\0';
	return (const char *)s->scratch.data;
}

/* ---- numbers and literals ---- */

static bool digit(const char *p, const char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

bool json_scan_number(json_scan *s, json_num *out)
{
	const char *p = s->p, *end = s->end;
	out->s = p;
	out->neg = *p == '-';
	p += out->neg;
	if (!digit(p, end)) {
		s->p = p;
		if (p < end && *p == 'I')
			return json_scan_fail(s, "-Infinity is a string in JSON (\"-Infinity\")");
		if (p < end && *p == '.')
			return json_scan_fail(s, "a number without digits before its point");
		return json_scan_fail(s, "number expected");
	}
	const char *d0 = p;
	uint64_t mag = 0;
	if (*p == '0') {
		p++;
		if (digit(p, end)) {
			s->p = p;
			return json_scan_fail(s, "a number with a leading zero");
		}
	} else {
		while (digit(p, end) && p - d0 < 19)
			mag = mag * 10 + (uint64_t)(*p++ - '0');
	}
	bool big = digit(p, end);  /* a 20th digit: checked below */
	while (digit(p, end))
		p++;
	out->integer = !(p < end && (*p == '.' || *p == 'e' || *p == 'E'));
	if (p < end && *p == '.') {
		p++;
		if (!digit(p, end)) {
			s->p = p;
			return json_scan_fail(s, "a number without digits after its point");
		}
		while (digit(p, end))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		p += p < end && (*p == '+' || *p == '-');
		if (!digit(p, end)) {
			s->p = p;
			return json_scan_fail(s, "number expected");
		}
		while (digit(p, end))
			p++;
	}
	out->n = (size_t)(p - out->s);
	if (out->integer && big) {  /* 20 digits or more: within 64 bits? */
		unsigned dgt = (unsigned)(d0[19] - '0');
		if (p - d0 > 20 || mag > (UINT64_MAX - dgt) / 10) {
			s->p = d0;
			return json_scan_fail(s, "an integer past 64 bits (no field holds it)");
		}
		mag = mag * 10 + dgt;
	}
	if (out->integer && out->neg && mag > (uint64_t)INT64_MAX + 1) {
		s->p = d0;
		return json_scan_fail(s, "an integer past 64 bits (no field holds it)");
	}
	out->mag = mag;
	s->p = p;
	return true;
}

bool json_scan_literal(json_scan *s, bool *value)
{
	static const char *const words[] = {"true", "false", "null"};
	static const char *const errs[] = {"boolean expected", "boolean expected", "null expected"};
	int k = *s->p == 't' ? 0 : *s->p == 'f' ? 1 : 2;
	size_t n = strlen(words[k]);
	for (size_t i = 0; i < n; i++, s->p++)
		if (s->p == s->end || *s->p != words[k][i])
			return json_scan_fail(s, s->p == s->end ? "the JSON text ends early" : errs[k]);
	*value = k == 0;
	return true;
}

/* ---- containers ---- */

bool json_scan_open(json_scan *s)
{
	if (s->depth >= SVC_RPC_JSON_MAX_DEPTH)
		return json_scan_fail(s, "nesting too deep");
	if (++s->containers > s->max_containers) {
		json_scan_fail(s, "too many objects and arrays");
		s->error_code = SVC_E_TOO_LARGE;
		return false;
	}
	s->depth++;
	s->p++;
	return true;
}

int json_scan_member(json_scan *s, bool first, json_str *key)
{
	int c = json_scan_peek(s);
	if (c == '}' && first) {
		s->p++;
		s->depth--;
		return 0;
	}
	if (!first) {
		if (c == '}') {
			s->p++;
			s->depth--;
			return 0;
		}
		if (c != ',')
			return c < 0 ? json_scan_fail(s, "the JSON text ends early"), -1
				     : (json_scan_fail(s, "object value separator ',' expected"), -1);
		s->p++;
		c = json_scan_peek(s);
	}
	if (c != '"')
		return json_scan_fail(s, c < 0 ? "the JSON text ends early"
					       : "quoted object property name expected"), -1;
	if (!json_scan_string(s, key))
		return -1;
	c = json_scan_peek(s);
	if (c != ':')
		return json_scan_fail(s, c < 0 ? "the JSON text ends early"
					       : "object property name separator ':' expected"), -1;
	s->p++;
	return 1;
}

int json_scan_element(json_scan *s, bool first)
{
	int c = json_scan_peek(s);
	if (c == ']') {
		if (first) {
			s->p++;
			s->depth--;
			return 0;
		}
	}
	if (first)
		return 1;
	if (c == ']') {
		s->p++;
		s->depth--;
		return 0;
	}
	if (c != ',')
		return json_scan_fail(s, c < 0 ? "the JSON text ends early"
					       : "array value separator ',' expected"), -1;
	s->p++;
	return 1;
}

bool json_scan_skip(json_scan *s)
{
	int c = json_scan_peek(s);
	json_str str;
	json_num num;
	bool b;
	switch (c) {
	case -1:
		return json_scan_fail(s, "the JSON text ends early");
	case '"':
		return json_scan_string(s, &str);
	case 't':
	case 'f':
	case 'n':
		return json_scan_literal(s, &b);
	case '{':
		if (!json_scan_open(s))
			return false;
		for (bool first = true;; first = false) {
			int k = json_scan_member(s, first, &str);
			if (k <= 0)
				return k == 0;
			if (!json_scan_skip(s))
				return false;
		}
	case '[':
		if (!json_scan_open(s))
			return false;
		for (bool first = true;; first = false) {
			int k = json_scan_element(s, first);
			if (k <= 0)
				return k == 0;
			if (!json_scan_skip(s))
				return false;
		}
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return json_scan_number(s, &num);
		if (c == 'N' || c == 'I')
			return json_scan_fail(s, "NaN and Infinity are strings in JSON (\"NaN\")");
		return json_scan_fail(s, "unexpected character");
	}
}
