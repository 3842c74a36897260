// SPDX-License-Identifier: Apache-2.0
/*
 * svc_h2_conn: one HTTP/2 connection (svc_h2_impl.h): the socket (a read
 * event feeding the nghttp2 server session each turn's bytes straight from
 * one buffer, and the session's frames written as soon as they are made,
 * EV_WRITE waited for only while the socket is full), a
 * tick that resets streams past --request-timeout (a request that never ends,
 * an answer whose window never opens) and closes idle connections, and GOAWAY
 * on shutdown. The attacks nghttp2 answers itself are configured here: rapid
 * reset (a reset rate limit), CONTINUATION floods (frames per header block),
 * SETTINGS and PING floods (entries per SETTINGS, queued acks); the header
 * list cap is svc_h2_stream.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "base/base_clock.h"
#include "base/base_expo.h"
#include "base/base_log.h"
#include "service/http/svc_h2_impl.h"

#define OUT_HIGH (1u << 20)       /* session output buffered before we wait */
#define READ_MAX (256u << 10)     /* bytes read from the socket at once */
#define STREAM_WINDOW (1u << 20)  /* each stream's receive window */
#define CONN_WINDOW (16u << 20)   /* the connection's */

static void conn_free(h2_conn *c)
{
	svc_h2 *h = c->h;
	while (c->streams)
		h2_stream_conn_gone(c->streams);  /* unlinks it */
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	h->n_conns--;
	nghttp2_session_del(c->session);
	if (c->tick)
		event_free(c->tick);
	if (c->rev)
		event_free(c->rev);
	if (c->wev)
		event_free(c->wev);
	if (c->out)
		evbuffer_free(c->out);  /* a pinned answer's last references */
	if (c->fd >= 0)
		evutil_closesocket(c->fd);
	free(c);
	if (h->o.conn_closed)
		h->o.conn_closed(h->o.arg);
	if (h->o.ended)
		h->o.ended(h->o.arg);
}

void h2_conn_unlink_stream(h2_conn *c, h2_stream *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else if (c->streams == s)
		c->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

/* Whether the session is over and written out: the connection then goes. */
static bool done(h2_conn *c)
{
	return !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session) &&
	       evbuffer_get_length(c->out) == 0;
}

/* Writes what out holds, in one writev, unless the socket is known to be
 * full (wev then waits for it). False: the connection failed. */
static bool write_out(h2_conn *c)
{
	if (c->waiting_write || evbuffer_get_length(c->out) == 0)
		return true;
	int n = evbuffer_write(c->out, c->fd);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return false;
	if (evbuffer_get_length(c->out) > 0) {
		if (event_add(c->wev, NULL) != 0)
			return false;
		c->waiting_write = true;
	}
	return true;
}

/* Sends what the session has, up to OUT_HIGH buffered at a time, written
 * as it comes. True: the connection still stands. */
static bool send_some(h2_conn *c)
{
	for (;;) {
		bool full = false;
		while (!(full = evbuffer_get_length(c->out) >= OUT_HIGH)) {
			const uint8_t *data;
			ssize_t n = nghttp2_session_mem_send(c->session, &data);
			if (n < 0) {
				c->h->protocol_errors++;
				conn_free(c);
				return false;
			}
			if (n == 0)
				break;
			evbuffer_add(c->out, data, (size_t)n);
		}
		if (!write_out(c)) {
			conn_free(c);
			return false;
		}
		/* More frames wait only if out was full and is written now. */
		if (!full || evbuffer_get_length(c->out) > 0)
			break;
	}
	if (done(c)) {
		conn_free(c);
		return false;
	}
	return true;
}

void h2_conn_flush(h2_conn *c)
{
	if (c && !c->in_recv)
		send_some(c);
}

/* ---- nghttp2's callbacks ---- */

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *arg)
{
	h2_conn *c = arg;
	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	h2_stream *s = h2_stream_new(c, frame->hd.stream_id);
	if (!s)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, s);
	return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *arg)
{
	(void)flags;
	(void)arg;
	h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;  /* trailers of a request: not read */
	if (!h2_stream_header(s, name, namelen, value, valuelen))
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  /* RST_STREAM */
	return 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id,
		   const uint8_t *data, size_t len, void *arg)
{
	(void)flags;
	(void)arg;
	h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
	if (s)
		h2_stream_data(s, data, len);
	return 0;
}

static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *arg)
{
	(void)arg;
	if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
	    !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	if (s && !s->request_done)
		h2_stream_request_done(s);
	return 0;
}

static int on_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *arg)
{
	(void)error_code;
	h2_conn *c = arg;
	h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
	if (s) {
		nghttp2_session_set_stream_user_data(session, stream_id, NULL);
		h2_stream_closed(s);
		if (c->h->o.ended)
			c->h->o.ended(c->h->o.arg);
	}
	return 0;
}

/* A refused stream's trailers-only answer is out: the rest of its request
 * is not wanted. */
static int on_sent(nghttp2_session *session, const nghttp2_frame *frame, void *arg)
{
	(void)arg;
	if (frame->hd.type != NGHTTP2_HEADERS || !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
	if (s && s->reset_after_answer && !s->request_done)
		nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_NO_ERROR);
	return 0;
}

static int on_send_data(nghttp2_session *session, nghttp2_frame *frame, const uint8_t *framehd,
			size_t length, nghttp2_data_source *source, void *arg)
{
	(void)session;
	h2_conn *c = arg;
	return h2_stream_send_data(source->ptr, c->out, framehd, length, frame->data.padlen);
}

static int on_invalid_frame(nghttp2_session *session, const nghttp2_frame *frame, int lib_error,
			    void *arg)
{
	(void)session, (void)frame, (void)lib_error;
	h2_conn *c = arg;
	c->h->protocol_errors++;
	return 0;
}

/* ---- the socket ---- */

/* Feeds the session n bytes, then sends. False: the connection is gone. */
static bool feed(h2_conn *c, const uint8_t *p, size_t n)
{
	c->last_activity_ms = base_mono_ms();
	c->in_recv = true;
	ssize_t rv = nghttp2_session_mem_recv(c->session, p, n);
	c->in_recv = false;
	if (rv < 0) {
		/* A connection error (flood, bad preface, ...): nghttp2 queued a
		 * GOAWAY where it could; it goes out, then the connection. */
		c->h->protocol_errors++;
		base_logf(BASE_LOG_DEBUG, "http2 connection error", "error=\"%s\"",
			  nghttp2_strerror((int)rv));
		event_del(c->rev);
		nghttp2_session_terminate_session(c->session, NGHTTP2_PROTOCOL_ERROR);
	}
	return send_some(c);
}

/* The socket is readable: one read (a whole request, most often), fed to
 * the session from h->rbuf (nghttp2 keeps none of it). End of file or an
 * error closes the connection. */
static void read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	h2_conn *c = arg;
	ssize_t n = read(fd, c->h->rbuf, READ_MAX);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		conn_free(c);
		return;
	}
	feed(c, c->h->rbuf, (size_t)n);
}

/* The socket takes bytes again: the rest of out, then more of the session's. */
static void write_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	h2_conn *c = arg;
	c->waiting_write = false;
	if (!write_out(c)) {
		conn_free(c);
		return;
	}
	if (c->waiting_write)
		return;  /* still full */
	event_del(c->wev);
	c->last_activity_ms = base_mono_ms();
	if (send_some(c) && c->h->stopping && c->h->o.ended)
		c->h->o.ended(c->h->o.arg);  /* written out: the shutdown check */
}

/* Streams past the timeout reset; an idle connection past it closed. */
static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	h2_conn *c = arg;
	svc_h2 *h = c->h;
	int64_t now = base_mono_ms(), limit = h->o.stream_timeout_ms;
	bool reset = false;
	for (h2_stream *s = c->streams; s; s = s->next) {
		/* A call in flight ends by its own deadline; a request that never
		 * ends or an answer never read does not. */
		if (s->calling || s->watching || s->closed_early || now - s->opened_ms < limit)
			continue;
		s->closed_early = true;
		h->streams_timed_out++;
		nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
		reset = true;
	}
	if (!c->streams && now - c->last_activity_ms >= limit && !c->goaway) {
		h->conns_timed_out++;
		c->goaway = true;
		nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
		reset = true;
	}
	if (reset)
		send_some(c);
}

static nghttp2_session_callbacks *callbacks(void)
{
	nghttp2_session_callbacks *cb;
	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_sent);
	nghttp2_session_callbacks_set_send_data_callback(cb, on_send_data);
	return cb;
}

/* The session, its limits and our SETTINGS. False: out of memory. */
static bool session_new(h2_conn *c)
{
	const svc_h2_options *o = &c->h->o;
	nghttp2_session_callbacks *cb = callbacks();
	nghttp2_option *opt = NULL;
	if (!cb || nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cb);
		return false;
	}
	/* Rapid reset (CVE-2023-44487): 1000 resets at once, then 33 a second. */
	nghttp2_option_set_stream_reset_rate_limit(opt, 1000, 33);
	/* CONTINUATION flood (CVE-2024-28182): frames of one header block. */
	nghttp2_option_set_max_continuations(opt, 8);
	/* SETTINGS and PING floods: entries of one SETTINGS, acks queued. */
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	int rv = nghttp2_session_server_new2(&c->session, cb, c, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	if (rv != 0)
		return false;
	nghttp2_settings_entry iv[] = {
		{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, o->max_concurrent_streams},
		{NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, o->max_header_list_bytes},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
	};
	return nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 3) == 0 &&
	       nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0,
						     CONN_WINDOW) == 0;
}

void svc_h2_accept(svc_h2 *h, evutil_socket_t fd, struct evbuffer *first)
{
	h2_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		evutil_closesocket(fd);
		if (h->o.conn_closed)
			h->o.conn_closed(h->o.arg);
		return;
	}
	c->h = h;
	c->fd = fd;
	evutil_make_socket_nonblocking(fd);
	c->rev = event_new(h->base, fd, EV_READ | EV_PERSIST, read_cb, c);
	c->wev = event_new(h->base, fd, EV_WRITE, write_cb, c);  /* added when out waits */
	c->out = evbuffer_new();
	int64_t period = h->o.stream_timeout_ms / 2 < 1000 ? h->o.stream_timeout_ms / 2 : 1000;
	struct timeval tv = {period / 1000, (period % 1000) * 1000};
	c->tick = event_new(h->base, -1, EV_PERSIST, tick_cb, c);
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	h->n_conns++;
	h->conns_total++;
	c->last_activity_ms = base_mono_ms();
	if (!h->rbuf)
		h->rbuf = malloc(READ_MAX);
	if (!h->rbuf || !c->rev || !c->wev || !c->out || !c->tick || !session_new(c) ||
	    event_add(c->tick, &tv) != 0 || event_add(c->rev, NULL) != 0) {
		base_logf(BASE_LOG_WARN, "http2 connection dropped", "error=\"out of memory\"");
		conn_free(c);
		return;
	}
	if (h->stopping) {
		c->goaway = true;
		nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0);
	}
	/* The bytes evhttp read before the preface was seen. */
	size_t n = evbuffer_get_length(first);
	const uint8_t *p = n ? evbuffer_pullup(first, -1) : NULL;
	if (p)
		feed(c, p, n);
	else
		send_some(c);
	evbuffer_drain(first, n);
}

/* ---- the server's side ---- */

svc_h2 *svc_h2_create(struct event_base *base, const svc_h2_options *o)
{
	svc_h2 *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->base = base;
	h->o = *o;
	if (h->o.stream_timeout_ms <= 0)
		h->o.stream_timeout_ms = 120000;
	return h;
}

bool svc_h2_evict_idle(svc_h2 *h)
{
	h2_conn *idle = NULL;
	int n = 0;
	for (h2_conn *c = h->conns; c && n < 64; c = c->next, n++)
		if (!c->streams && /* an answer's tail still to write: not idle */
		    evbuffer_get_length(c->out) == 0 &&
		    (!idle || c->last_activity_ms < idle->last_activity_ms))
			idle = c;
	if (!idle)
		return false;
	h->conns_evicted++;
	conn_free(idle);  /* as evhttp's idle ones: closed, no GOAWAY waited for */
	return true;
}

void svc_h2_shutdown(svc_h2 *h)
{
	if (!h)
		return;
	h->stopping = true;
	for (h2_conn *c = h->conns, *next; c; c = next) {
		next = c->next;
		/* Watch streams end first (their last status out before GOAWAY). */
		for (h2_stream *st = c->streams; st; st = st->next)
			h2_stream_stopping(st);
		if (!send_some(c) || c->goaway)
			continue;
		c->goaway = true;
		/* The streams opened already are served; new ones are refused. */
		nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE,
				      nghttp2_session_get_last_proc_stream_id(c->session),
				      NGHTTP2_NO_ERROR, NULL, 0);
		send_some(c);  /* may free c */
	}
}

uint64_t svc_h2_streams(const svc_h2 *h)
{
	if (!h)
		return 0;
	/* A stream closes when its last frame is handed to the socket's
	 * buffer: a connection with bytes still to write counts too. */
	uint64_t n = h->n_streams;
	for (const h2_conn *c = h->conns; c; c = c->next)
		n += evbuffer_get_length(c->out) > 0;
	return n;
}

void svc_h2_render_metrics(const svc_h2 *h, base_buf *b)
{
	base_expo_family(b, "symbolizer_h2_connections", "gauge", "Open HTTP/2 (gRPC) connections.");
	base_expo_u64(b, "symbolizer_h2_connections", "", h->n_conns);
	base_expo_family(b, "symbolizer_h2_connections_total", "counter",
			 "HTTP/2 connections accepted (the preface seen on the port).");
	base_expo_u64(b, "symbolizer_h2_connections_total", "", h->conns_total);
	base_expo_family(b, "symbolizer_h2_streams", "gauge", "HTTP/2 streams open.");
	base_expo_u64(b, "symbolizer_h2_streams", "", h->n_streams);
	base_expo_family(b, "symbolizer_h2_streams_total", "counter", "HTTP/2 streams opened.");
	base_expo_u64(b, "symbolizer_h2_streams_total", "", h->streams_total);
	base_expo_family(b, "symbolizer_h2_refused_total", "counter",
			 "HTTP/2 streams and connections the server cut: header list over the cap "
			 "(header_list), request or answer past --request-timeout (stream_timeout), "
			 "idle connection (idle), connection errors and floods (protocol), "
			 "closed with no stream at --max-connections (evicted).");
	base_expo_u64(b, "symbolizer_h2_refused_total", "reason=\"header_list\"",
		      h->header_list_too_large);
	base_expo_u64(b, "symbolizer_h2_refused_total", "reason=\"stream_timeout\"",
		      h->streams_timed_out);
	base_expo_u64(b, "symbolizer_h2_refused_total", "reason=\"idle\"", h->conns_timed_out);
	base_expo_u64(b, "symbolizer_h2_refused_total", "reason=\"protocol\"", h->protocol_errors);
	base_expo_u64(b, "symbolizer_h2_refused_total", "reason=\"evicted\"", h->conns_evicted);
}

void svc_h2_destroy(svc_h2 *h)
{
	if (!h)
		return;
	h->o.ended = NULL;
	h->o.conn_closed = NULL;
	while (h->conns)
		conn_free(h->conns);
	free(h->rbuf);
	free(h);
}
