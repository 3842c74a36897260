// SPDX-License-Identifier: Apache-2.0
/*
 * svc_response_json: the cold parts of a response written as JSON
 * (svc_response_json.h): a string that needs escapes or a UTF-8 check, and
 * the message's end: each section's ']', the MappingResults as the codec
 * writes them, the '}'.
 */
#include "service/symbolize/svc_response_json.h"

#include "base/base_buf.h"

/* n bytes at the end of sec; false when out of budget or memory (r->oom). */
static bool append(svc_response *r, base_vec *sec, const void *s, size_t n)
{
	if (!section_reserve(r, sec, n))
		return false;
	memcpy(section_end(sec), s, n);
	sec->len += n;
	return true;
}

bool svc_response_json_string(svc_response *r, const char *s, size_t len)
{
	base_buf b;
	base_buf_init(&b, SIZE_MAX);
	bool ok = svc_rpc_json_put_string(&b, (const uint8_t *)s, len) &&
		  append(r, &r->t->string_table, ",", 1) &&
		  append(r, &r->t->string_table, b.data, b.len);
	base_buf_deinit(&b);
	if (!ok)
		r->oom = true;
	return ok;
}

bool svc_response_json_end(svc_response *r, const uint8_t *wire, size_t n)
{
	svc_response_tables *t = r->t;
	if (!append(r, &t->string_table, "]", 1) ||
	    (t->functions.len && !append(r, &t->functions, "]", 1)) ||
	    (t->locations.len && !append(r, &t->locations, "]", 1)))
		return false;
	bool ok = true;
	if (n) {
		/* {"mappings":[...]}: its member, after a ',' */
		base_buf b;
		base_buf_init(&b, SIZE_MAX);
		svc_error err = {0};
		ok = svc_rpc_json_encode(r->json, wire, n, &b, &err) == SVC_OK && b.len >= 2;
		if (ok) {
			b.data[0] = ',';
			ok = append(r, &t->locations, b.data, b.len - 1);
		}
		base_buf_deinit(&b);
	}
	if (!ok)
		r->oom = true;
	return ok && append(r, &t->locations, "}", 1);
}
