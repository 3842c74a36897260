// SPDX-License-Identifier: Apache-2.0
/*
 * svc_request_head: a request's head (request line and header lines) read as
 * its bytes arrive, before evhttp reads the body (svc_server_impl.h), so that
 * the connection's cap on the body is decided from the route, the peer and
 * the token first: only an authorized PUT under /buildid/ may send an upload's
 * bytes; any other request, a wrong token's included, gets the small cap and
 * a 413 past it (issue 25, item 5). Only what that decision needs is kept:
 * the method, the start of the path, the Authorization value (a line buffer
 * lives while the head is read) and Content-Length.
 */
#include "service/http/svc_server_impl.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/util.h>

void svc_head_reset(svc_head_scan *h)
{
	free(h->line);
	free(h->authorization);
	memset(h, 0, sizeof(*h));
}

static void request_line(svc_head_scan *h, const char *p, size_t n)
{
	const char *sp = memchr(p, ' ', n);
	size_t m = sp ? (size_t)(sp - p) : n;
	if (m < sizeof(h->method)) {
		memcpy(h->method, p, m);
		h->method[m] = '\0';
	}
	if (!sp)
		return;
	const char *path = sp + 1;
	size_t rest = n - (size_t)(path - p);
	const char *end = memchr(path, ' ', rest);
	size_t k = end ? (size_t)(end - path) : rest;
	if (k >= sizeof(h->path))
		k = sizeof(h->path) - 1;
	memcpy(h->path, path, k);
	h->path[k] = '\0';
}

static void header_line(svc_head_scan *h, const char *p, size_t n)
{
	static const char auth[] = "authorization:", length[] = "content-length:";
	if (n > sizeof(auth) - 1 && !strncasecmp(p, auth, sizeof(auth) - 1) && !h->authorization) {
		size_t k = sizeof(auth) - 1;
		while (k < n && (p[k] == ' ' || p[k] == '\t'))
			k++;
		if ((h->authorization = malloc(n - k + 1))) {
			memcpy(h->authorization, p + k, n - k);
			h->authorization[n - k] = '\0';
		}
	} else if (n > sizeof(length) - 1 && !strncasecmp(p, length, sizeof(length) - 1)) {
		uint64_t v = 0;
		for (size_t k = sizeof(length) - 1; k < n; k++)
			if (p[k] >= '0' && p[k] <= '9')
				v = v > UINT64_MAX / 10 - 1 ? UINT64_MAX : v * 10 + (uint64_t)(p[k] - '0');
		h->content_length = v;
		h->has_length = true;
	}
}

/* One whole line (without its end), or its first SVC_HEAD_LINE_MAX bytes. */
static void end_line(svc_head_scan *h)
{
	size_t n = h->len;
	if (n && h->line[n - 1] == '\r')
		n--;
	if (!h->first_done) {
		if (n == 0)  /* blank lines before a request line are skipped */
			return;
		h->first_done = true;
		request_line(h, h->line, n);
	} else if (n == 0) {
		h->done = true;
	} else {
		header_line(h, h->line, n);
	}
	h->len = 0;
}

size_t svc_head_feed(svc_head_scan *h, const char *p, size_t n)
{
	size_t i = 0;
	if (!h->line && !(h->line = malloc(SVC_HEAD_LINE_MAX)))
		return n;  /* no memory: the small cap holds */
	while (i < n && !h->done) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t k = nl ? (size_t)(nl - (p + i)) : n - i;
		size_t room = SVC_HEAD_LINE_MAX - h->len;
		memcpy(h->line + h->len, p + i, k < room ? k : room);
		h->len += k < room ? k : room;
		i += k;
		if (!nl)
			break;
		i++;  /* the newline */
		end_line(h);
	}
	if (h->done) {
		free(h->line);
		h->line = NULL;
	}
	return i;
}

void svc_peer_text(int fd, char *out, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	out[0] = '\0';
	if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
		return;
	if (ss.ss_family == AF_INET)
		evutil_inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, size);
	else if (ss.ss_family == AF_INET6)
		evutil_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, size);
}

bool svc_head_feed_buffer(svc_head_scan *h, struct evbuffer *buf, size_t n, uint64_t *head_bytes)
{
	char chunk[4096];
	size_t len = evbuffer_get_length(buf);
	struct evbuffer_ptr pos;
	if (n > len || evbuffer_ptr_set(buf, &pos, len - n, EVBUFFER_PTR_SET) != 0)
		return false;
	while (n && !h->done) {
		size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
		if (evbuffer_copyout_from(buf, &pos, chunk, k) != (ev_ssize_t)k)
			return false;
		*head_bytes += svc_head_feed(h, chunk, k);
		if (evbuffer_ptr_set(buf, &pos, k, EVBUFFER_PTR_ADD) != 0)
			break;
		n -= k;
	}
	return h->done;
}
