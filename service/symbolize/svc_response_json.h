/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_response_json.h: the response's elements written as JSON, for a call
 * that asked for it (svc_response.json): the protobuf JSON mapping of each
 * Function, LocationResult and Line exactly as the codec (svc_rpc_json, with
 * no flags: Symbolize's row sets none) writes their wire bytes
 * (lowerCamelCase keys, 64-bit integers quoted, zeros left out, an object of
 * no field "{}"), straight from the numbers, so that a JSON call is not
 * encoded twice (reading the wire back cost as much as building it). A
 * section's first element follows its key, the others a ','.
 * svc_response_json.c writes the strings that need escapes, closes the
 * sections and has the codec itself write the MappingResults.
 * test_svc_response_json and fuzz_response_json hold the bytes to the
 * codec's. Internal to service/symbolize.
 */
#ifndef SVC_RESPONSE_JSON_H
#define SVC_RESPONSE_JSON_H

#include "service/rpc/svc_rpc_json_text.h"
#include "service/symbolize/svc_response_impl.h"

#define RJ_HOT static inline __attribute__((always_inline))

/* The keys, each with the ',' before it and the '"' of its quoted value. */
#define RJ_NAME ",\"name\":\""
#define RJ_SYSTEM_NAME ",\"systemName\":\""
#define RJ_FILENAME ",\"filename\":\""
#define RJ_START_LINE ",\"startLine\":\""
#define RJ_FUNCTION_INDEX ",\"functionIndex\":\""
#define RJ_LINE ",\"line\":\""
#define RJ_COLUMN ",\"column\":\""
#define RJ_NORMALIZED_ADDRESS ",\"normalizedAddress\":\""
#define RJ_LINES ",\"lines\":["

/* The sections' first bytes: the string table's with its "" entry. */
#define RJ_STRING_TABLE "{\"stringTable\":[\"\""
#define RJ_FUNCTIONS ",\"functions\":["
#define RJ_LOCATIONS ",\"locations\":["

/* Room a field of a number takes: its key, 20 digits, a quote, and the
 * bytes json_write_small may write past the number. */
#define RJ_FIELD_MAX (sizeof(RJ_NORMALIZED_ADDRESS) + JSON_NUMBER_MAX)
#define RJ_FUNCTION_MAX (2 + 4 * RJ_FIELD_MAX)
#define RJ_LINE_MAX (3 + 3 * RJ_FIELD_MAX)
#define RJ_LOCATION_MAX (sizeof(RJ_LOCATIONS) + sizeof(RJ_LINES) + 3 + RJ_FIELD_MAX)

/* key (a literal above, n bytes) and v, quoted, at q; nothing for 0. */
RJ_HOT uint8_t *rj_put(uint8_t *q, const char *key, size_t n, uint64_t v)
{
	if (!v)
		return q;
	memcpy(q, key, n);
	q += n;
	q = json_write_number(q, v, false, false);
	*q++ = '"';
	return q;
}

#define RJ_PUT(q, key, v) rj_put((q), key, sizeof(key) - 1, (v))

/* Ends the object whose fields were written from open to q, each after a
 * ',': the first ',' becomes its '{' ("{}" with none). */
RJ_HOT uint8_t *rj_close(uint8_t *open, uint8_t *q)
{
	if (q == open)
		*q++ = '{';
	else
		*open = '{';
	*q++ = '}';
	return q;
}

/* Where the next element of sec goes: after header (its key, for the first
 * one) or after a ','. */
RJ_HOT uint8_t *rj_element(base_vec *sec, const char *header, size_t n)
{
	uint8_t *w = section_end(sec);
	if (sec->len) {
		*w = ',';
		return w + 1;
	}
	memcpy(w, header, n);
	return w + n;
}

/* A Function at q (RJ_FUNCTION_MAX bytes of room). */
RJ_HOT uint8_t *rj_function(uint8_t *q, uint32_t name, uint32_t system, uint32_t file,
			    uint32_t start_line)
{
	uint8_t *open = q;
	q = RJ_PUT(q, RJ_NAME, name);
	q = RJ_PUT(q, RJ_SYSTEM_NAME, system);
	q = RJ_PUT(q, RJ_FILENAME, file);
	q = RJ_PUT(q, RJ_START_LINE, start_line);
	return rj_close(open, q);
}

/* A Line at q (RJ_LINE_MAX bytes of room), after a ',' unless first. */
RJ_HOT uint8_t *rj_line(uint8_t *q, bool first, uint32_t function_index, uint32_t line,
			uint32_t column)
{
	*q = ',';
	q += !first;
	uint8_t *open = q;
	q = RJ_PUT(q, RJ_FUNCTION_INDEX, function_index);
	q = RJ_PUT(q, RJ_LINE, line);
	q = RJ_PUT(q, RJ_COLUMN, column);
	return rj_close(open, q);
}

/* Whether none of s's n bytes needs an escape or a UTF-8 check (over: the
 * bytes up to n rounded up to 16 are readable). */
RJ_HOT bool rj_plain(const char *s, size_t n, bool over)
{
	if (over)
		return json_plain_padded(s, n);
	bool care = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)s[i];
		care |= c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
	}
	return !care;
}

/* s (len bytes), which needs escapes or a UTF-8 check, as the string
 * table's next entry (after a ','), as the codec writes it; false when out
 * of budget (r->oom) or memory. */
bool svc_response_json_string(svc_response *r, const char *s, size_t len);

/* Closes the sections and appends the MappingResults (written by r->json
 * from their wire bytes, wire/n) and the message's '}'; false as above. */
bool svc_response_json_end(svc_response *r, const uint8_t *wire, size_t n);

#endif
