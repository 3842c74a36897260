// SPDX-License-Identifier: Apache-2.0
/*
 * svc_conns: the HTTP server's connections (svc_server_impl.h). evhttp (libevent
 * 2.1) keeps them private; we see each one through the bufferevent it asks us
 * for (evhttp_set_bevcb) and its close callback, and so:
 *
 * - count them against --max-connections: at the cap the connection idle the
 *   longest (no request under way) is closed to make room, and when none is
 *   idle the listener pauses until one closes;
 * - pause the listener for a moment when accept() fails (EMFILE, ENFILE, ...)
 *   instead of retrying at once (libevent retries in a loop at 100% CPU), and
 *   log that once per interval;
 * - give a client --request-timeout from the first byte of a request to its
 *   last (header and body): a client that trickles is cut off;
 * - cap the bytes of one request ourselves, its body's cap decided from its
 *   head (svc_request_head.c: only an authorized upload may send many, within
 *   the budget of uploads in flight, its body spooled to DATA/tmp:
 *   svc_body_spool.c), so evhttp's own cap never answers 413 (its 413 means
 *   a body it could not parse, rewritten to 400);
 * - hand a connection opening with HTTP/2's preface (gRPC's prior knowledge)
 *   to the HTTP/2 server (svc_conns_h2.c, svc_h2_impl.h) instead of evhttp,
 *   counted till it closes there; at the cap one with no stream is evictable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "base/base_clock.h"
#include "base/base_log.h"
#include "base/base_vec.h"
#include "service/http/svc_conns_impl.h"

#define PAUSE_MS 250          /* listener pause after a failed accept */
#define LOG_INTERVAL_MS 10000 /* one log line per condition per interval */
#define EVICT_SCAN 64         /* idle candidates looked at when full */


static void unlink_conn(conn *c)
{
	svc_conns *cs = c->cs;
	if (c->prev)
		c->prev->next = c->next;
	else if (cs->head == c)
		cs->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else if (cs->tail == c)
		cs->tail = c->prev;
	c->prev = c->next = NULL;
}

static void touch(conn *c)
{
	svc_conns *cs = c->cs;
	unlink_conn(c);
	c->prev = cs->tail;
	if (cs->tail)
		cs->tail->next = c;
	else
		cs->head = c;
	cs->tail = c;
}

enum { LOG_ACCEPT, LOG_FULL }; /* logged once per interval */

static void log_limited(svc_conns *cs, int which, const char *msg, const char *detail)
{
	int64_t now = base_mono_ms();
	if (cs->last_log_ms[which] && now - cs->last_log_ms[which] < LOG_INTERVAL_MS) {
		cs->suppressed[which]++;
		return;
	}
	base_logf(BASE_LOG_WARN, msg, "%s connections=%llu max_connections=%llu suppressed=%llu",
		  detail, (unsigned long long)cs->open, (unsigned long long)cs->max_conns,
		  (unsigned long long)cs->suppressed[which]);
	cs->last_log_ms[which] = now;
	cs->suppressed[which] = 0;
}

static void listener_update(svc_conns *cs)
{
	if (!cs->lev)
		return;
	if (cs->paused_full || cs->paused_error)
		evconnlistener_disable(cs->lev);
	else
		evconnlistener_enable(cs->lev);
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_conns *cs = arg;
	cs->paused_error = false;
	listener_update(cs);
}

static bool evict_one(svc_conns *cs);

/* The listener's user data is evhttp's; ours is found by listener (servers
 * of one process may run on loops of their own: a lock). */
#define MAX_LISTENERS 16
static pthread_mutex_t listeners_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct evconnlistener *lev;
	svc_conns *cs;
} listeners[MAX_LISTENERS];

static void accept_error_cb(struct evconnlistener *lev, void *arg)
{
	(void)arg;
	int e = EVUTIL_SOCKET_ERROR();
	svc_conns *cs = NULL;
	pthread_mutex_lock(&listeners_mu);
	for (int i = 0; i < MAX_LISTENERS; i++)
		if (listeners[i].lev == lev)
			cs = listeners[i].cs;
	pthread_mutex_unlock(&listeners_mu);
	if (!cs) {
		evconnlistener_disable(lev);
		return;
	}
	cs->accept_errors++;
	/* Out of descriptors: the connection idle the longest gives its own to
	 * the next in the backlog; with none to give, wait a moment. */
	bool evicted = (e == EMFILE || e == ENFILE) && evict_one(cs);
	if (!evicted) {
		cs->paused_error = true;
		listener_update(cs);
		struct timeval tv = {0, PAUSE_MS * 1000};
		evtimer_add(cs->resume, &tv);
	}
	char detail[160];
	snprintf(detail, sizeof(detail), "error=\"%s\" pause_ms=%d", strerror(e),
		 evicted ? 0 : PAUSE_MS);
	log_limited(cs, LOG_ACCEPT, "accept failed, listener paused", detail);
}

void svc_conns_listen(svc_conns *cs, struct evhttp_bound_socket *bound)
{
	cs->lev = evhttp_bound_socket_get_listener(bound);
	pthread_mutex_lock(&listeners_mu);
	for (int i = 0; i < MAX_LISTENERS; i++) {
		if (!listeners[i].lev) {
			listeners[i].lev = cs->lev;
			listeners[i].cs = cs;
			break;
		}
	}
	pthread_mutex_unlock(&listeners_mu);
	evconnlistener_set_error_cb(cs->lev, accept_error_cb);
}

void svc_conns_unlisten(svc_conns *cs)
{
	pthread_mutex_lock(&listeners_mu);
	for (int i = 0; i < MAX_LISTENERS; i++)
		if (listeners[i].cs == cs)
			listeners[i].lev = NULL, listeners[i].cs = NULL;
	pthread_mutex_unlock(&listeners_mu);
	cs->lev = NULL;
}

/* One fewer in the count (HTTP/1.1 here, HTTP/2 from svc_server.c): the
 * listener resumes below the cap. */
void svc_conns_released(svc_conns *cs)
{
	cs->open--;
	if (cs->paused_full && cs->open < cs->max_conns) {
		cs->paused_full = false;
		listener_update(cs);
	}
}

static void conn_free(conn *c)
{
	svc_conns *cs = c->cs;
	unlink_conn(c);
	bool ended = c->writing > 0;
	cs->writing -= c->writing;  /* replies its client left in the middle of */
	if (c->in_cb)
		evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->in_cb);
	if (c->out_cb)
		evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->out_cb);
	if (c->deadline)
		event_free(c->deadline);
	svc_head_reset(&c->head);
	svc_body_end(&cs->gate, &c->spool);
	if (c->h2_first)
		evbuffer_free(c->h2_first);
	free(c);
	svc_conns_released(cs);
	if (ended && cs->reply_ended)
		cs->reply_ended(cs->reply_ended_arg);
}

static void closed_cb(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	conn_free(arg);
}

/* To the HTTP/2 server with the bytes read so far; evhttp lets it go. */
static void hand_over(conn *c)
{
	svc_conns *cs = c->cs;
	struct evbuffer *first = c->h2_first;
	c->h2_first = NULL;
	evhttp_connection_set_closecb(c->evcon, NULL, NULL);
	int own = svc_conns_take_socket(c->bev, c->evcon);
	cs->open += own >= 0;  /* still counted: svc_conns_released when it closes */
	conn_free(c);
	if (own >= 0)
		cs->h2_accept(cs->h2_arg, own, first);
	evbuffer_free(first);
}

/* The request deadline passed, or the request went over the cap (too_large). */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn *c = arg;
	if (c->h2_first && c->evcon) {
		hand_over(c);
		return;
	}
	if (c->busy || !c->evcon)
		return;
	if (c->too_large) {
		c->cs->too_large += c->status == 413;
		svc_send_status(bufferevent_getfd(c->bev), c->status);
	} else {
		c->cs->timed_out++;
		base_logf(BASE_LOG_DEBUG, "request deadline passed, connection closed",
			  "bytes=%llu", (unsigned long long)c->bytes);
	}
	evhttp_connection_free(c->evcon); /* closed_cb frees c */
}

/* The head of the request read so far, from the n bytes just added to buf:
 * once it ends, the body's cap (cs->body_cap) and, when Content-Length says
 * more, true (over) before a byte of the body is taken. */
static bool read_head(conn *c, struct evbuffer *buf, size_t n)
{
	svc_conns *cs = c->cs;
	uint64_t before = c->head_bytes;
	if (!svc_head_feed_buffer(&c->head, buf, n, &c->head_bytes))
		return false;
	c->body_from = evbuffer_get_length(buf) - n + (size_t)(c->head_bytes - before);
	if (!c->peer[0])  /* the peer of a connection once, not per request */
		svc_peer_text(bufferevent_getfd(c->bev), c->peer, sizeof(c->peer));
	c->cap = cs->body_cap ? cs->body_cap(cs->body_cap_arg, &c->head, c->peer) : cs->max_request_bytes;
	bool over = c->head.has_length && c->head.content_length > c->cap;
	/* An upload's (a cap above the small one): the budget, the spool file. */
	int st = !over && c->cap > cs->max_request_bytes
			 ? svc_body_begin(&cs->gate, &c->spool, &c->head, c->cap) : 0;
	if (st)
		c->status = st, over = true;
	svc_head_reset(&c->head);
	c->head.done = true;  /* until the next request */
	return over;
}

/* False when the first bytes are (or may be) HTTP/2's preface; they then
 * leave evhttp's buffer and deadline_cb hands the socket over. */
static bool h2_preface(conn *c, struct evbuffer *buf)
{
	int seen = svc_conns_preface(buf);
	c->decided = seen != 0;
	if (seen <= 0)
		return seen < 0;  /* not HTTP/2: evhttp's; or not sure yet: wait */
	if (!(c->h2_first = evbuffer_new()))
		return true;
	evbuffer_remove_buffer(buf, c->h2_first, evbuffer_get_length(buf));
	bufferevent_disable(c->bev, EV_READ);
	event_active(c->deadline, EV_TIMEOUT, 0);
	return false;
}

static void input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	conn *c = arg;
	if (!info->n_added || c->h2_first || c->spooling)
		return;
	/* Bytes held back while the preface was undecided are read as the
	 * head's too, once it is HTTP/1.1. */
	size_t fresh = c->decided ? info->n_added : evbuffer_get_length(buf);
	if (!c->decided && c->cs->h2_accept && !h2_preface(c, buf))
		return;
	/* evhttp reads again only once the last reply is out. */
	c->busy = false;
	svc_conns *cs = c->cs;
	if (c->bytes == 0 && cs->request_timeout_ms > 0) {
		struct timeval tv = {cs->request_timeout_ms / 1000,
				     (cs->request_timeout_ms % 1000) * 1000};
		evtimer_add(c->deadline, &tv);
	}
	c->bytes += info->n_added;
	touch(c);
	/* The cap: the head's first (Content-Length against the body's cap, an
	 * upload's budget), then the request's whole. */
	bool now = !c->head.done;
	bool over = now && read_head(c, buf, fresh);
	uint64_t limit = c->head.done && c->cap ? c->head_bytes + c->cap : cs->max_request_bytes;
	over = over || c->bytes > limit;
	if (!over && c->spool.fd >= 0) { /* an upload's body: to its file */
		c->spooling = true;
		int st = svc_body_take(&c->spool, buf, now ? c->body_from
							   : evbuffer_get_length(buf) - info->n_added);
		c->spooling = false;
		if (st)
			c->status = st, over = true;
	}
	if (over && !c->too_large) { /* evhttp is reading: the callback runs next */
		c->too_large = true;
		bufferevent_disable(c->bev, EV_READ);
		event_active(c->deadline, EV_TIMEOUT, 0);
	}
	/* libevent filled its read: the rest of the request, up to the cap, at once. */
	if (!c->too_large && !c->reading_more && info->n_added == SVC_CONNS_LIBEVENT_READ &&
	    c->bytes <= limit) {
		c->reading_more = true;
		svc_conns_read_more(c->bev, buf, limit - c->bytes + 1);
		c->reading_more = false;
	}
}

/* evhttp answers a body it cannot parse with 413, as it does one over its cap
 * (libevent 2.1 has one error for both); its cap is off (ours is input_cb's),
 * so its 413 is always the first: a 400. */
static void output_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	conn *c = arg;
	static const char from[] = " 413 ", to[] = "HTTP/1.1 400 Bad Request\r\n";
	if (c->busy || info->orig_size != 0 || info->n_added < 16 || info->n_added > 64)
		return;
	char line[16];
	if (evbuffer_copyout(buf, line, sizeof(line)) != (ev_ssize_t)sizeof(line) ||
	    memcmp(line, "HTTP/1.", 7) != 0 || memcmp(line + 8, from, 5) != 0)
		return;
	c->cs->rewritten++;
	evbuffer_drain(buf, info->n_added);
	evbuffer_add(buf, to, sizeof(to) - 1);
}

/* The cap is reached: close the connection idle the longest, if one is. */
static bool evict_one(svc_conns *cs)
{
	int n = 0;
	for (conn *c = cs->head; c && n < EVICT_SCAN; c = c->next, n++) {
		if (c->evcon && !c->busy && c->bytes == 0) {
			cs->evicted++;
			evhttp_connection_free(c->evcon);
			return true;
		}
	}
	return cs->h2_evict && cs->h2_evict(cs->h2_arg) && ++cs->evicted;
}

static struct bufferevent *bev_cb(struct event_base *base, void *arg)
{
	svc_conns *cs = arg;
	if (cs->open >= cs->max_conns && !evict_one(cs)) {
		cs->paused_full = true;
		listener_update(cs);
		log_limited(cs, LOG_FULL, "connections at the cap, listener paused", "");
	}
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev)
		return NULL; /* evhttp makes its own, uncounted */
	bufferevent_set_max_single_write(bev, SVC_CONNS_MAX_WRITE);
	if (base_vec_reserve(&cs->pending.v, 1))
		return bev;
	conn *c = calloc(1, sizeof(*c));
	if (!c)
		return bev;
	c->cs = cs;
	c->bev = bev;
	svc_body_spool_init(&c->spool);
	c->status = 413;
	c->deadline = evtimer_new(base, deadline_cb, c);
	c->in_cb = evbuffer_add_cb(bufferevent_get_input(bev), input_cb, c);
	c->out_cb = evbuffer_add_cb(bufferevent_get_output(bev), output_cb, c);
	cs->open++;
	touch(c);
	/* evhttp sets its callbacks (and its connection as their argument) once
	 * we return; attach_cb picks the connection up right after. */
	bufferevent_incref(bev);
	conn_vec_append(&cs->pending, c); /* room reserved above */
	event_active(cs->attach, EV_TIMEOUT, 0);
	return bev;
}

static void attach_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	svc_conns *cs = arg;
	for (size_t i = 0; i < conn_vec_len(&cs->pending); i++) {
		conn *c = conn_vec_at(&cs->pending, i);
		struct bufferevent *bev = c->bev;
		bufferevent_event_cb ecb = NULL;
		void *evcon = NULL;
		bufferevent_getcb(bev, NULL, NULL, &ecb, &evcon);
		if (ecb && evcon && c->deadline) {
			c->evcon = evcon;
			evhttp_connection_set_closecb(c->evcon, closed_cb, c);
		} else {
			conn_free(c); /* evhttp already let it go */
		}
		bufferevent_decref(bev);
	}
	cs->pending.v.len = 0;
}

/* ---- the server's side ---- */

/* Our connection of a request. It is the argument of our close callback, but
 * evhttp has no getter for that: the list is searched from its newest end
 * (the connection whose request just arrived is there). */
static conn *find(svc_conns *cs, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	for (conn *c = cs->tail; bev && c; c = c->prev)
		if (c->bev == bev)
			return c;
	return NULL;
}

void svc_conns_request(svc_conns *cs, struct evhttp_request *req)
{
	conn *c = find(cs, req);
	if (!c)
		return;
	c->bytes = 0;
	c->busy = true;
	c->too_large = false;
	c->status = 413;
	svc_head_reset(&c->head);
	c->head_bytes = c->cap = 0;
	evtimer_del(c->deadline);
	touch(c);
}

void svc_conns_replied(svc_conns *cs, struct evhttp_request *req)
{
	conn *c = find(cs, req);
	if (!c)
		return;
	c->busy = false;
	svc_body_end(&cs->gate, &c->spool); /* an upload's bytes leave the budget */
	if (c->writing > 0) {
		c->writing--;
		cs->writing--;
	}
	if (cs->reply_ended)
		cs->reply_ended(cs->reply_ended_arg);
}

void svc_conns_reply_started(svc_conns *cs, struct evhttp_request *req)
{
	conn *c = find(cs, req);
	if (c) {
		c->writing++;
		cs->writing++;
	}
}

uint64_t svc_conns_replies_writing(const svc_conns *cs)
{
	return cs ? cs->writing : 0;
}

svc_conns *svc_conns_create(struct event_base *base, struct evhttp *http,
			    const svc_conns_options *o)
{
	svc_conns *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return NULL;
	cs->base = base;
	cs->http = http;
	conn_vec_init(&cs->pending, SIZE_MAX / sizeof(conn *));
	uint64_t limit = svc_nofile_raise();
	/* Descriptors kept for the store, upstreams, files and the pool. */
	uint64_t reserve = limit / 4 > 128 ? limit / 4 : 128;
	uint64_t auto_max = limit > reserve + 16 ? limit - reserve : 16;
	cs->max_conns = o->max_connections ? o->max_connections : auto_max;
	cs->max_request_bytes = o->max_request_bytes;
	cs->request_timeout_ms = o->request_timeout_ms;
	cs->reply_ended = o->reply_ended;
	cs->reply_ended_arg = o->arg;
	cs->body_cap = o->body_cap;
	cs->body_cap_arg = o->arg;
	cs->gate.budget = o->upload_budget;
	cs->gate.dir = o->spool_dir;
	cs->h2_accept = o->h2_accept;
	cs->h2_evict = o->h2_evict;
	cs->h2_arg = o->h2_arg;
	cs->attach = event_new(base, -1, 0, attach_cb, cs);
	cs->resume = evtimer_new(base, resume_cb, cs);
	if (!cs->attach || !cs->resume) {
		svc_conns_destroy(cs);
		return NULL;
	}
	base_logf(BASE_LOG_INFO, "connections", "max_connections=%llu open_files_limit=%llu",
		  (unsigned long long)cs->max_conns, (unsigned long long)limit);
	evhttp_set_bevcb(http, bev_cb, cs);
	/* The request cap is input_cb's: evhttp's would answer 413 to bodies it
	 * cannot parse too (see output_cb). */
	evhttp_set_max_body_size(http, -1);
	return cs;
}

void svc_conns_destroy(svc_conns *cs)
{
	if (!cs)
		return;
	svc_conns_unlisten(cs);
	attach_cb(-1, 0, cs);
	/* Connections still open (evhttp_free closes them first) lose us. */
	while (cs->head) {
		conn *c = cs->head;
		if (c->evcon)
			evhttp_connection_set_closecb(c->evcon, NULL, NULL);
		conn_free(c);
	}
	if (cs->attach)
		event_free(cs->attach);
	if (cs->resume)
		event_free(cs->resume);
	conn_vec_deinit(&cs->pending);
	free(cs);
}
