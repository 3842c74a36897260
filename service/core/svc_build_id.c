// SPDX-License-Identifier: Apache-2.0
/*
 * svc_build_id: the edge check of a build ID (svc_build_id.h).
 */
#include "service/core/svc_build_id.h"

#include <string.h>

bool svc_build_id_parse(const char *hex, size_t len, sym_build_id *out)
{
	if (len < 2 || len > 2 * SYM_BUILD_ID_MAX || len % 2)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f') ||
		      (hex[i] >= 'A' && hex[i] <= 'F')))   /* uppercase: lowercased at the edge */
			return false;
	return sym_build_id_from_hex(hex, len, out);
}

const char *svc_build_id_check(const char *hex, sym_build_id *out)
{
	size_t n = strlen(hex);
	if (n == 0)
		return "build_id is empty";
	/* A request's field is the wire contract (DESIGN.md, api.md): lowercase,
	 * INVALID otherwise; only URL paths take uppercase (svc_build_id_parse). */
	for (size_t i = 0; i < n; i++)
		if (hex[i] >= 'A' && hex[i] <= 'F')
			return "build_id must be lowercase hex of even length, 2 to 128 digits";
	if (!svc_build_id_parse(hex, n, out))
		return "build_id must be lowercase hex of even length, 2 to 128 digits";
	return NULL;
}

const char *svc_build_id_check_kind(const char *kind_name, const char *text, sym_build_id *out)
{
	sym_id_kind kind = SYM_ID_GNU;
	if (kind_name && *kind_name && !sym_id_kind_parse(kind_name, strlen(kind_name), &kind))
		return "build_id_kind must be gnu, go or htlhash";
	if (kind == SYM_ID_GNU)
		return svc_build_id_check(text, out);
	size_t n = strlen(text);
	if (n == 0)
		return "build_id is empty";
	if (kind == SYM_ID_HTLHASH) {
		sym_build_id tmp;
		if (!svc_build_id_parse(text, n, &tmp) || n != 32 ||
		    !sym_build_id_from_hex_kind(SYM_ID_HTLHASH, text, n, out))
			return "an htlhash build_id must be 32 lowercase hex digits";
		return NULL;
	}
	if (!sym_build_id_from_text(kind, text, n, out))
		return "a go build_id must be the Go build ID string: 1 to 256 printable characters";
	return NULL;
}
