// SPDX-License-Identifier: Apache-2.0
/*
 * bench_rpc_grpc: bench_rpc's gRPC client (--grpc): one blocking h2c connection
 * to 127.0.0.1 (prior knowledge, as gRPC clients connect without TLS) with
 * nghttp2's client session for framing and HPACK, one stream at a time, as
 * lean as the HTTP/1.1 client beside it (bench_rpc_http.c) so the two
 * protocols compare with equal client costs: the request's frames are
 * gathered and written in one write (two copies of the message, about 9 KB
 * for 1,000 addresses: nghttp2's into its frame, ours into the write buffer;
 * the HTTP/1.1 client writes from the body), the answer's DATA goes into c->buf without its
 * 5-byte gRPC prefix, and the call is done when the stream closes, with
 * grpc-status 0 from the trailers. Windows are opened wide at the start (as
 * h2load's are), so no WINDOW_UPDATE round trip slows an answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "base/base_buf.h"
#include "bench/bench_rpc_impl.h"

#define PATH "/symbolizer.v1.SymbolizerService/Symbolize"
#define WINDOW ((1 << 30) - 1)
#define READ_CHUNK (256u << 10)

struct bench_h2 {
	nghttp2_session *s;
	struct conn *c;
	const struct body *req;
	size_t req_off;          /* of the 5-byte prefix + body */
	uint8_t prefix[5];
	size_t got;              /* DATA bytes of the answer, prefix included */
	uint32_t msg_len;        /* from the answer's prefix */
	int grpc_status;         /* -1 until the trailers say */
	bool done;
	uint8_t *wbuf;           /* what the session sends, written at once */
	size_t wlen, wcap;
	uint8_t rbuf[READ_CHUNK];
};

/* nghttp2 hands over one frame at a time: they are gathered and written by
 * flush, so a request (HEADERS and DATA) leaves in one write, as an HTTP/1.1
 * request does. */
static ssize_t on_send(nghttp2_session *s, const uint8_t *p, size_t n, int flags, void *arg)
{
	(void)s, (void)flags;
	struct bench_h2 *h = arg;
	if (h->wlen + n > h->wcap) {
		size_t cap = (h->wlen + n) * 2;
		uint8_t *w = realloc(h->wbuf, cap);
		if (!w)
			die("out of memory");
		h->wbuf = w;
		h->wcap = cap;
	}
	memcpy(h->wbuf + h->wlen, p, n);
	h->wlen += n;
	return (ssize_t)n;
}

/* What the session has to send, in one write. */
static void flush(struct bench_h2 *h)
{
	if (nghttp2_session_send(h->s) != 0)
		die("nghttp2_session_send failed");
	size_t off = 0;
	while (off < h->wlen) {
		ssize_t w = write(h->c->fd, h->wbuf + off, h->wlen - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("write: %s", strerror(errno));
		off += (size_t)w;
	}
	h->wlen = 0;
}

static ssize_t on_read_body(nghttp2_session *s, int32_t sid, uint8_t *buf, size_t len,
			    uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	(void)s, (void)sid, (void)src;
	struct bench_h2 *h = arg;
	size_t total = 5 + h->req->len, n = 0;
	while (n < len && h->req_off < total) {
		size_t o = h->req_off, k;
		if (o < 5) {
			k = 5 - o < len - n ? 5 - o : len - n;
			memcpy(buf + n, h->prefix + o, k);
		} else {
			k = total - o < len - n ? total - o : len - n;
			memcpy(buf + n, h->req->data + (o - 5), k);
		}
		n += k;
		h->req_off += k;
	}
	if (h->req_off == total)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static void ensure(struct conn *c, size_t need)
{
	if (need <= c->buf_cap)
		return;
	base_buf b = {.data = (void *)c->buf, .cap = c->buf_cap, .max = SIZE_MAX};
	if (!base_buf_reserve(&b, need))
		die("out of memory");
	c->buf = (void *)b.data;
	c->buf_cap = b.cap;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t sid, const uint8_t *p, size_t n,
		   void *arg)
{
	(void)s, (void)flags, (void)sid;
	struct bench_h2 *h = arg;
	while (n && h->got < 5) {  /* the prefix: compressed flag, length */
		if (h->got == 0 && *p != 0)
			die("gRPC answer compressed (flag %u) though none was asked for", *p);
		if (h->got > 0)
			h->msg_len = h->msg_len << 8 | *p;
		h->got++, p++, n--;
	}
	if (!n)
		return 0;
	if (h->got - 5 + n > h->msg_len || h->msg_len > MAX_BODY)
		die("gRPC answer longer than its prefix says (%u bytes)", h->msg_len);
	ensure(h->c, h->msg_len);
	memcpy(h->c->buf + (h->got - 5), p, n);
	h->got += n;
	return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *arg)
{
	(void)s, (void)f, (void)flags;
	struct bench_h2 *h = arg;
	if (namelen == 11 && !memcmp(name, "grpc-status", 11))
		h->grpc_status = atoi((const char *)value);
	else if (namelen == 7 && !memcmp(name, ":status", 7) &&
		 (valuelen != 3 || memcmp(value, "200", 3) != 0))
		die("HTTP/2 :status %.*s", (int)valuelen, value);
	return 0;
}

static int on_close(nghttp2_session *s, int32_t sid, uint32_t err, void *arg)
{
	(void)s, (void)sid;
	struct bench_h2 *h = arg;
	if (err)
		die("stream reset by the server (error %u)", err);
	h->done = true;
	return 0;
}

void grpc_open(struct conn *c)
{
	conn_open(c);
	struct bench_h2 *h = calloc(1, sizeof(*h));
	nghttp2_session_callbacks *cb;
	if (!h || nghttp2_session_callbacks_new(&cb) != 0)
		die("out of memory");
	h->c = c;
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	if (nghttp2_session_client_new(&h->s, cb, h) != 0)
		die("nghttp2_session_client_new failed");
	nghttp2_session_callbacks_del(cb);
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
				       {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, WINDOW}};
	if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, iv, 2) != 0 ||
	    nghttp2_session_set_local_window_size(h->s, NGHTTP2_FLAG_NONE, 0, WINDOW) != 0)
		die("nghttp2: cannot open the windows");
	c->h2 = h;
}

void grpc_close(struct conn *c)
{
	if (!c->h2)
		return;
	nghttp2_session_del(c->h2->s);
	free(c->h2->wbuf);
	free(c->h2);
	c->h2 = NULL;
}

#define NV(n, v)                                                                              \
	{(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE}

int grpc_call(struct conn *c, const struct body *b, size_t *len)
{
	struct bench_h2 *h = c->h2;
	nghttp2_nv nv[] = {NV(":method", "POST"), NV(":scheme", "http"), NV(":path", PATH),
			   NV(":authority", "127.0.0.1"), NV("content-type", "application/grpc"),
			   NV("te", "trailers")};
	nghttp2_data_provider dp = {.read_callback = on_read_body};
	h->req = b;
	h->req_off = h->got = 0;
	h->msg_len = 0;
	h->grpc_status = -1;
	h->done = false;
	h->prefix[0] = 0;
	h->prefix[1] = (uint8_t)(b->len >> 24), h->prefix[2] = (uint8_t)(b->len >> 16);
	h->prefix[3] = (uint8_t)(b->len >> 8), h->prefix[4] = (uint8_t)b->len;
	if (nghttp2_submit_request(h->s, NULL, nv, sizeof(nv) / sizeof(nv[0]), &dp, NULL) < 0)
		die("nghttp2_submit_request failed");
	while (!h->done) {
		flush(h);
		if (h->done)
			break;
		ssize_t r = read(c->fd, h->rbuf, sizeof(h->rbuf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0)
			die("server closed the HTTP/2 connection in a call");
		ssize_t used = nghttp2_session_mem_recv(h->s, h->rbuf, (size_t)r);
		if (used != r)
			die("nghttp2_session_mem_recv: %s", nghttp2_strerror((int)used));
	}
	flush(h);  /* WINDOW_UPDATEs, SETTINGS ACK */
	if (h->grpc_status != 0)
		die("grpc-status %d", h->grpc_status);
	if (h->got < 5 || h->got - 5 != h->msg_len)
		die("gRPC answer truncated (%zu of %u bytes)", h->got < 5 ? 0 : h->got - 5, h->msg_len);
	*len = h->msg_len;
	c->wire_bytes += *len;
	c->plain_bytes += *len;
	return 200;
}
