// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload_proxy: the client address of an upload behind a proxy (issue 30,
 * item 3). Through the nginx front every peer is the front's address, which
 * made the loopback rule of uploads meaningless. With --trusted-proxies
 * (addresses or CIDR blocks), a request whose peer is one of them is judged by
 * its X-Forwarded-For instead, read from the right: the first address that is
 * not a trusted proxy is the client (what a client writes itself further left
 * is ignored). A peer that is not trusted is the client, whatever it sends.
 * Outside bytes (the header) are capped and parsed strictly: a malformed entry
 * makes the address unknown, and the upload is refused.
 */
#include "service/upload/svc_upload.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An address as 16 bytes (IPv4 as ::ffff:a.b.c.d). */
static bool parse_ip(const char *s, size_t len, uint8_t out[16])
{
	char buf[INET6_ADDRSTRLEN + 1];
	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	struct in_addr a4;
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &a4, 4);
		return true;
	}
	return inet_pton(AF_INET6, buf, out) == 1;
}

static bool is_v4(const uint8_t a[16])
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(a, prefix, 12) == 0;
}

bool svc_proxies_parse(svc_proxies *p, const char *list, svc_error *err)
{
	memset(p, 0, sizeof(*p));
	for (const char *s = list ? list : ""; *s;) {
		size_t n = strcspn(s, ", ");
		if (n) {
			const char *slash = memchr(s, '/', n);
			size_t alen = slash ? (size_t)(slash - s) : n;
			svc_proxy_net *net = &p->nets[p->n];
			if (p->n == SVC_PROXIES_MAX)
				return svc_error_set(err, SVC_E_INVALID,
						     "--trusted-proxies: more than %d entries",
						     SVC_PROXIES_MAX), false;
			if (!parse_ip(s, alen, net->addr))
				return svc_error_set(err, SVC_E_INVALID,
						     "--trusted-proxies: '%.*s' is not an address or "
						     "CIDR block", (int)(n < 64 ? n : 64), s), false;
			int max = is_v4(net->addr) ? 32 : 128, bits = max;
			if (slash) {
				char *end;
				char tmp[8] = "";
				memcpy(tmp, slash + 1, n - alen - 1 < 7 ? n - alen - 1 : 7);
				long v = strtol(tmp, &end, 10);
				if (!tmp[0] || *end || v < 0 || v > max)
					return svc_error_set(err, SVC_E_INVALID,
							     "--trusted-proxies: bad prefix in '%.*s'",
							     (int)(n < 64 ? n : 64), s), false;
				bits = (int)v;
			}
			net->bits = bits + (max == 32 ? 96 : 0);
			p->n++;
		}
		s += n;
		s += strspn(s, ", ");
	}
	return true;
}

static bool trusted(const svc_proxies *p, const uint8_t a[16])
{
	for (size_t i = 0; i < p->n; i++) {
		const svc_proxy_net *net = &p->nets[i];
		int full = net->bits / 8, rest = net->bits % 8;
		if (memcmp(a, net->addr, (size_t)full))
			continue;
		if (rest && ((a[full] ^ net->addr[full]) & (0xff << (8 - rest)) & 0xff))
			continue;
		return true;
	}
	return false;
}

/* Copies [s, s+len) trimmed into out. */
static void copy_trim(const char *s, size_t len, char *out, size_t cap)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	len = len < cap - 1 ? len : cap - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

bool svc_proxies_client(const svc_proxies *p, const char *peer, const char *forwarded,
			char *out, size_t cap)
{
	uint8_t a[16];
	if (!peer || !parse_ip(peer, strlen(peer), a))
		return false;
	copy_trim(peer, strlen(peer), out, cap);
	if (!trusted(p, a) || !forwarded)
		return true;
	size_t len = strnlen(forwarded, SVC_FORWARDED_MAX + 1);
	if (len > SVC_FORWARDED_MAX)
		return false;
	/* From the right: past the trusted proxies, the first other address. */
	for (size_t end = len; end > 0;) {
		size_t start = end;
		while (start > 0 && forwarded[start - 1] != ',')
			start--;
		char item[INET6_ADDRSTRLEN + 1];
		if (end - start > 64)
			return false;
		copy_trim(forwarded + start, end - start, item, sizeof(item));
		if (!parse_ip(item, strlen(item), a))
			return false;
		snprintf(out, cap, "%s", item);
		if (!trusted(p, a))
			return true;
		end = start ? start - 1 : 0;
	}
	return true;  /* every hop a trusted proxy: the leftmost one */
}
