// SPDX-License-Identifier: Apache-2.0
/*
 * bench_rpc_http: bench_rpc's HTTP/1.1 client: one blocking keep-alive
 * connection to 127.0.0.1, a Connect unary request written and its response
 * (Content-Length, optionally gzipped) read whole, with a reconnect when the
 * server closes the connection. A gzipped body is inflated with libdeflate
 * (its CRC-32 and length checked, trailing bytes refused): the client's CPU is
 * taken from the daemon's on the same cores, and zlib's inflate costs about
 * twice libdeflate's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libdeflate.h>

#include "base/base_buf.h"
#include "bench/bench_rpc_impl.h"

#define PATH "/symbolizer.v1.SymbolizerService/Symbolize"

void conn_open(struct conn *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect 127.0.0.1:%d: %s", c->port, strerror(errno));
	c->carry = 0;
}

void conn_close(struct conn *c)
{
	close(c->fd);
	c->fd = -1;
	free(c->buf);
	free(c->plain);
	libdeflate_free_decompressor(c->inflater);
	c->buf = c->plain = NULL;
	c->buf_cap = c->plain_cap = 0;
	c->inflater = NULL;
}

static void write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write: %s", strerror(errno));
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

static void ensure(struct conn *c, size_t need)
{
	if (need <= c->buf_cap)
		return;
	/* The connection's (buf, buf_cap) as a base_buf: room for need bytes, doubling. */
	base_buf b = {.data = (void *)c->buf, .cap = c->buf_cap, .max = SIZE_MAX};
	if (!base_buf_reserve(&b, need))
		die("out of memory");
	c->buf = (void *)b.data;
	c->buf_cap = b.cap;
}

static ssize_t rd(int fd, void *p, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/*
 * The response header read into c->hdr (*have bytes, the carry of the last
 * response first): returns its end (the \r\n\r\n), or NULL when the server
 * closed the connection before answering.
 */
static char *read_header(struct conn *c, size_t *have_out)
{
	size_t have = 0;
	char *end = NULL;
	ensure(c, MAX_HEADER);
	if (c->carry) {
		memcpy(c->hdr, c->buf, c->carry);
		have = c->carry;
		c->carry = 0;
		c->hdr[have] = 0;
		end = strstr(c->hdr, "\r\n\r\n");
	}
	while (!end) {
		if (have >= MAX_HEADER)
			die("response header over %d bytes", MAX_HEADER);
		ssize_t r = rd(c->fd, c->hdr + have, MAX_HEADER - have);
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0) {
			if (have == 0)
				return NULL;
			die("connection closed in a response header");
		}
		have += (size_t)r;
		c->hdr[have] = 0;
		end = strstr(c->hdr, "\r\n\r\n");
	}
	*have_out = have;
	return end;
}

/*
 * One exchange on the connection: sends BODY, reads the response into c->buf.
 * Returns the HTTP status and sets *body_len; 0 when the server closed the
 * connection before answering (the caller reconnects and retries).
 */
static int exchange(struct conn *c, const struct body *body, size_t *body_len, bool *closes)
{
	char head[256];
	int hl = snprintf(head, sizeof(head),
			  "POST " PATH " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
			  "Content-Type: application/%s\r\nConnect-Protocol-Version: 1\r\n"
			  "%sContent-Length: %zu\r\n\r\n",
			  c->port, c->json ? "json" : "proto", c->accept_gzip ? "Accept-Encoding: gzip\r\n" : "", body->len);
	struct iovec iov[2] = {{head, (size_t)hl}, {body->data, body->len}};
	write_all(c->fd, iov, 2);

	/* Header: bytes up to \r\n\r\n; anything after belongs to the body. */
	size_t have;
	char *end = read_header(c, &have);
	if (!end)
		return 0;
	size_t head_len = (size_t)(end - c->hdr) + 4;
	int status = 0;
	if (sscanf(c->hdr, "HTTP/1.%*d %d", &status) != 1)
		die("not an HTTP/1.x response: %.40s", c->hdr);
	size_t clen = SIZE_MAX;
	*closes = false;
	c->gzipped = false;
	for (char *p = strstr(c->hdr, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
		char *l = p + 2;
		if (!strncasecmp(l, "content-length:", 15))
			clen = strtoull(l + 15, NULL, 10);
		else if (!strncasecmp(l, "content-encoding:", 17))
			c->gzipped = strncasecmp(l + 17 + strspn(l + 17, " "), "gzip", 4) == 0;
		else if (!strncasecmp(l, "transfer-encoding:", 18))
			die("chunked responses are not supported by this client");
		else if (!strncasecmp(l, "connection:", 11) && strcasestr(l, "close") &&
			 strcasestr(l, "close") < strstr(l, "\r\n"))
			*closes = true;
	}
	if (clen == SIZE_MAX)
		die("response without Content-Length (status %d)", status);
	if (clen > MAX_BODY)
		die("response body of %zu bytes", clen);
	size_t extra = have - head_len;
	ensure(c, clen > extra ? clen : extra);
	memcpy(c->buf, c->hdr + head_len, extra);
	size_t got = extra;
	while (got < clen) {
		ensure(c, clen);
		ssize_t r = rd(c->fd, c->buf + got, c->buf_cap - got);
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0)
			die("connection closed in a response body (%zu of %zu bytes)", got, clen);
		got += (size_t)r;
	}
	*body_len = clen;
	/* Pipelining is not used, so nothing should follow; keep it if it does. */
	if (got > clen) {
		c->carry = got - clen;
		memmove(c->buf, c->buf + clen, c->carry);
		if (c->carry > MAX_HEADER)
			die("unexpected %zu bytes after a response", c->carry);
	}
	return status;
}

/* Inflates a gzipped body in c->buf (len bytes) into c->plain, then swaps
 * the two buffers. The whole member is checked (CRC-32, ISIZE); bytes after
 * it are refused, as the daemon refuses them in requests. */
static void gunzip_body(struct conn *c, size_t *len)
{
	if (!c->inflater && !(c->inflater = libdeflate_alloc_decompressor()))
		die("out of memory");
	if (*len < 18)
		die("response is not valid gzip (%zu bytes)", *len);
	/* ISIZE, the trailer's length mod 2^32, sizes the output (a wrong one fails). */
	const uint8_t *t = c->buf + *len - 4;
	size_t want = (size_t)t[0] | (size_t)t[1] << 8 | (size_t)t[2] << 16 | (size_t)t[3] << 24;
	if (want > MAX_BODY)
		die("response inflates past %u bytes", MAX_BODY);
	if (c->plain_cap < want + 1) {
		free(c->plain);
		c->plain_cap = want + 1 > 1 << 16 ? want + 1 : 1 << 16;
		if (!(c->plain = malloc(c->plain_cap)))
			die("out of memory");
	}
	size_t in_used = 0, n = 0;
	enum libdeflate_result r = libdeflate_gzip_decompress_ex(
		c->inflater, c->buf, *len, c->plain, c->plain_cap, &in_used, &n);
	if (r != LIBDEFLATE_SUCCESS || in_used != *len || n != want)
		die("response is not valid gzip (libdeflate: %d, %zu of %zu bytes read)", (int)r,
		    in_used, *len);
	uint8_t *b = c->buf;
	size_t cap = c->buf_cap;
	c->buf = c->plain;
	c->buf_cap = c->plain_cap;
	c->plain = b;
	c->plain_cap = cap;
	*len = n;
}

int call(struct conn *c, const struct body *b, size_t *len)
{
	for (int attempt = 0;; attempt++) {
		bool closes = false;
		int st = exchange(c, b, len, &closes);
		if (st != 0)
			c->wire_bytes += *len;
		if (st != 0 && c->gzipped)
			gunzip_body(c, len);
		if (st != 0)
			c->plain_bytes += *len;
		if (st != 0) {
			if (closes) {
				close(c->fd);
				conn_open(c);
				c->reconnects++;
			}
			return st;
		}
		if (attempt == 3)
			die("server keeps closing the connection");
		close(c->fd);
		conn_open(c);
		c->reconnects++;
	}
}
