// SPDX-License-Identifier: Apache-2.0
/*
 * svc_h2_conn: one HTTP/2 connection (svc_h2_impl.h): the socket as a
 * bufferevent, the nghttp2 server session fed from it and written to it, a
 * tick that resets streams past --request-timeout (a request that never ends,
 * an answer whose window never opens) and closes idle connections, and GOAWAY
 * on shutdown. The attacks nghttp2 answers itself are configured here: rapid
 * reset (a reset rate limit), CONTINUATION floods (frames per header block),
 * SETTINGS and PING floods (entries per SETTINGS, queued acks); the header
 * list cap is svc_h2_stream.c's.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
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
	if (c->bev)
		bufferevent_free(c->bev);
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
	       evbuffer_get_length(bufferevent_get_output(c->bev)) == 0;
}

/* Sends what the session has, up to OUT_HIGH buffered. True: the connection
 * still stands. */
static bool send_some(h2_conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	while (evbuffer_get_length(out) < OUT_HIGH) {
		const uint8_t *data;
		ssize_t n = nghttp2_session_mem_send(c->session, &data);
		if (n < 0) {
			c->h->protocol_errors++;
			conn_free(c);
			return false;
		}
		if (n == 0)
			break;
		evbuffer_add(out, data, (size_t)n);
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
	return h2_stream_send_data(source->ptr, bufferevent_get_output(c->bev), framehd, length,
				   frame->data.padlen);
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

/* Feeds the session the bytes of in (drained), then sends. */
static void feed(h2_conn *c, struct evbuffer *in)
{
	struct bufferevent *bev = c->bev;
	size_t n = evbuffer_get_length(in);
	const uint8_t *p = n ? evbuffer_pullup(in, -1) : NULL;
	if (!p)
		return;
	c->last_activity_ms = base_mono_ms();
	c->in_recv = true;
	ssize_t rv = nghttp2_session_mem_recv(c->session, p, n);
	c->in_recv = false;
	evbuffer_drain(in, n);
	if (rv < 0) {
		/* A connection error (flood, bad preface, ...): nghttp2 queued a
		 * GOAWAY where it could; it goes out, then the connection. */
		c->h->protocol_errors++;
		base_logf(BASE_LOG_DEBUG, "http2 connection error", "error=\"%s\"",
			  nghttp2_strerror((int)rv));
		bufferevent_disable(bev, EV_READ);
		nghttp2_session_terminate_session(c->session, NGHTTP2_PROTOCOL_ERROR);
	}
	send_some(c);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	feed(arg, bufferevent_get_input(bev));
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	h2_conn *c = arg;
	c->last_activity_ms = base_mono_ms();
	if (send_some(c) && c->h->stopping && c->h->o.ended)
		c->h->o.ended(c->h->o.arg);  /* written out: the shutdown check */
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		conn_free(arg);
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
	c->bev = bufferevent_socket_new(h->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		evutil_closesocket(fd);
	} else {  /* an answer in one write, not libevent's 16 KB ones */
		bufferevent_set_max_single_write(c->bev, OUT_HIGH);
		bufferevent_set_max_single_read(c->bev, READ_MAX);
	}
	int64_t period = h->o.stream_timeout_ms / 2 < 1000 ? h->o.stream_timeout_ms / 2 : 1000;
	struct timeval tv = {period / 1000, (period % 1000) * 1000};
	c->tick = c->bev ? event_new(h->base, -1, EV_PERSIST, tick_cb, c) : NULL;
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	h->n_conns++;
	h->conns_total++;
	c->last_activity_ms = base_mono_ms();
	if (!c->tick || !session_new(c) || event_add(c->tick, &tv) != 0) {
		base_logf(BASE_LOG_WARN, "http2 connection dropped", "error=\"out of memory\"");
		conn_free(c);
		return;
	}
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (h->stopping) {
		c->goaway = true;
		nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE, 0, NGHTTP2_NO_ERROR, NULL, 0);
	}
	feed(c, first);  /* the input buffer takes bytes from the socket alone */
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
		if (!c->streams && c->bev && /* an answer's tail still to write: not idle */
		    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0 &&
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
		n += evbuffer_get_length(bufferevent_get_output(c->bev)) > 0;
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
	free(h);
}
