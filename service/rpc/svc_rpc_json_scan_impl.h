/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rpc_json_scan_impl: the JSON scanner under the decoder
 * (svc_rpc_json_scan.c): one pass over a request's text, a token at a time,
 * no tree. Strings come back as slices of the text when they hold no
 * escape (copied once, by the writer, into the wire), else unescaped into a
 * scratch buffer; plain integers come back read. Syntax is strict JSON
 * (RFC 8259) with json-c's structural UTF-8 check (a string whose UTF-8 is
 * well formed but not valid, as an overlong form, is flagged for the writer
 * to refuse where a string field takes it) and json-c's lone surrogates
 * (\ud800 alone reads as U+FFFD). Containers are counted (a cap) and nested
 * at most SVC_RPC_JSON_MAX_DEPTH deep. svc_rpc_json_decode.c drives it with
 * the descriptors. Not for use outside service/rpc/.
 */
#ifndef SVC_RPC_JSON_SCAN_IMPL_H
#define SVC_RPC_JSON_SCAN_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"

typedef struct json_scan {
	const char *text, *p, *end;
	unsigned depth;            /* containers open */
	size_t containers, max_containers;
	const char *error;         /* a stop's reason (NULL: none), at byte error_at */
	size_t error_at;
	svc_errc error_code;       /* SVC_E_INVALID, SVC_E_TOO_LARGE (containers), SVC_E_NOMEM */
	bool truncated;            /* the text ended inside a value */
	base_buf scratch;          /* unescaped strings, NUL-terminated */
} json_scan;

/* A string's bytes (not NUL-terminated unless in scratch). */
typedef struct json_str {
	const char *s;
	size_t n;
	bool nul;                  /* holds a \u0000 */
	bool bad_utf8;             /* well formed but not valid UTF-8 (overlong, surrogate, ...) */
} json_str;

/* A number's text; integer: no fraction or exponent, its value in mag/neg. */
typedef struct json_num {
	const char *s;
	size_t n;
	bool integer, neg;
	uint64_t mag;
} json_num;

void json_scan_init(json_scan *s, const char *text, size_t len, size_t max_containers);
void json_scan_deinit(json_scan *s);
/* Stops the scan with a syntax error at the cursor; returns false. */
bool json_scan_fail(json_scan *s, const char *what);

/* JSON's whitespace (RFC 8259): space, tab, line feed, carriage return. */
static inline bool json_is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* p past any whitespace (not past end). Whitespace is at or below ' ': one
 * compare for any other byte. */
static inline const char *json_skip_ws(const char *p, const char *end)
{
	while (p < end && (unsigned char)*p <= ' ' && json_is_ws(*p))
		p++;
	return p;
}

/* The next byte past whitespace (the cursor left on it), -1 at the end. */
static inline int json_scan_peek(json_scan *s)
{
	s->p = json_skip_ws(s->p, s->end);
	return s->p < s->end ? (unsigned char)*s->p : -1;
}

/* At '"': the string, unescaped. false: a syntax error (s->error). */
bool json_scan_string(json_scan *s, json_str *out);
/* At '-' or a digit: the number. */
bool json_scan_number(json_scan *s, json_num *out);
/* At 't', 'f' or 'n': true, false or null (*value: true's). */
bool json_scan_literal(json_scan *s, bool *value);
/* Any value, checked and passed over. */
bool json_scan_skip(json_scan *s);
/* At '{' or '[': enters the container (counted, depth bounded). */
bool json_scan_open(json_scan *s);
/*
 * The next member of the object open (first: just after '{'): 1 with its
 * key (*key) and the cursor past ':'; 0 at the closing '}' (consumed, the
 * object left); -1 on an error.
 */
int json_scan_member(json_scan *s, bool first, json_str *key);
/* The next element of the array open: 1 (cursor at the value), 0 at ']'
 * (consumed, the array left), -1 on an error. */
int json_scan_element(json_scan *s, bool first);
/* str as a C string (in scratch; the text's NULs cut it as they would a C string). */
const char *json_scan_cstr(json_scan *s, const json_str *str);

#endif
