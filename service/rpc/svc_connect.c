// SPDX-License-Identifier: Apache-2.0
/*
 * svc_connect: Connect protocol helpers (svc_connect.h).
 */
#include "service/rpc/svc_connect.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/util.h>
#include <zlib.h>

#include "base/base_buf.h"
#include "service/rpc/svc_grpc.h"

static void json_string(struct evbuffer *buf, const char *s)
{
	evbuffer_add(buf, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			evbuffer_add_printf(buf, "\\%c", *p);
		else if (*p < 0x20)
			evbuffer_add_printf(buf, "\\u%04x", *p);
		else
			evbuffer_add(buf, p, 1);
	}
	evbuffer_add(buf, "\"", 1);
}

void svc_connect_error_body(struct evbuffer *buf, const svc_error *err)
{
	evbuffer_add_printf(buf, "{\"code\":\"%s\"", svc_connect_code_name(svc_errc_connect(err->code)));
	if (err->msg[0]) {
		evbuffer_add_printf(buf, ",\"message\":");
		json_string(buf, err->msg);
	}
	/* The detail gRPC's grpc-status-details-bin carries (svc_grpc_details.c):
	 * the protobuf in "value" (base64, unpadded), its JSON form in "debug". */
	char info[SVC_GRPC_ERROR_INFO_MAX], reason[SVC_GRPC_REASON_MAX];
	if (svc_grpc_error_info(err, info, sizeof(info))) {
		svc_grpc_error_reason(err->code, reason);
		evbuffer_add_printf(buf, ",\"details\":[{\"type\":\"google.rpc.ErrorInfo\","
				    "\"value\":\"%s\",\"debug\":{\"reason\":\"%s\","
				    "\"domain\":\"" SVC_GRPC_ERROR_DOMAIN "\"}}]", info, reason);
	}
	evbuffer_add(buf, "}", 1);
}

bool svc_connect_parse_timeout(const char *value, int64_t *ms)
{
	size_t n = strlen(value);
	if (n < 1 || n > 10)
		return false;
	int64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (value[i] < '0' || value[i] > '9')
			return false;
		v = v * 10 + (value[i] - '0');
	}
	*ms = v;
	return true;
}

bool svc_connect_lists_gzip(const char *value)
{
	/* A comma-separated list of codings, each maybe with parameters (";q=0.5"). */
	char item[128];
	const char *p = value;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t n = len < sizeof(item) - 1 ? len : sizeof(item) - 1;
		memcpy(item, p, n);
		item[n] = '\0';
		p += len;
		if (*p == ',')
			p++;
		char *params = strchr(item, ';');
		if (params)
			*params++ = '\0';
		char *tok = item + strspn(item, " \t");
		size_t tlen = strcspn(tok, " \t");
		if (tlen != 4 || strncasecmp(tok, "gzip", 4) != 0)
			continue;
		const char *q = params ? strstr(params, "q=") : NULL;
		if (q && strtod(q + 2, NULL) <= 0.0)
			continue;
		return true;
	}
	return false;
}

svc_errc svc_gunzip(const void *in, size_t in_size, size_t cap, void **out, size_t *out_size)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return SVC_E_NOMEM;
	size_t alloc = in_size * 4 < 4096 ? 4096 : in_size * 4;
	if (alloc > cap + 1)
		alloc = cap + 1;
	base_buf buf;  /* one byte past the cap tells a body over it */
	base_buf_init(&buf, cap + 1);
	svc_errc rc = SVC_E_NOMEM;
	if (!base_buf_reserve(&buf, alloc))
		goto out;
	rc = SVC_E_INVALID;
	zs.next_in = (unsigned char *)in;
	for (;;) {
		size_t in_left = in_size - (size_t)((const unsigned char *)zs.next_in -
						     (const unsigned char *)in);
		zs.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
		if (buf.len == buf.cap) {
			if (buf.len > cap) {
				rc = SVC_E_TOO_LARGE;
				goto out;
			}
			if (!base_buf_reserve(&buf, 1)) {  /* doubles, up to cap + 1 */
				rc = SVC_E_NOMEM;
				goto out;
			}
		}
		size_t room = buf.cap - buf.len;
		zs.next_out = buf.data + buf.len;
		zs.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
		uInt before = zs.avail_out;
		int z = inflate(&zs, Z_NO_FLUSH);
		buf.len += before - zs.avail_out;
		if (buf.len > cap) {
			rc = SVC_E_TOO_LARGE;
			goto out;
		}
		if (z == Z_STREAM_END) {
			if (zs.avail_in != 0 || (size_t)((const unsigned char *)zs.next_in -
							 (const unsigned char *)in) != in_size)
				goto out; /* trailing bytes (or a second member): refuse */
			rc = SVC_OK;
			break;
		}
		if (z == Z_BUF_ERROR && zs.avail_in == 0 && zs.avail_out != 0)
			goto out; /* truncated */
		if (z != Z_OK && z != Z_BUF_ERROR)
			goto out;
	}
	*out = base_buf_take(&buf, out_size);
out:
	inflateEnd(&zs);
	base_buf_deinit(&buf);
	return rc;
}
