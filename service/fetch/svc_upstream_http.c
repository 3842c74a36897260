// SPDX-License-Identifier: Apache-2.0
/*
 * upstream_http: libcurl multi + libevent (see upstream_http.h).
 *
 * The glue is the "multi_socket" pattern: sock_cb keeps one libevent event per
 * socket curl cares about, timer_cb one timer for curl's own timeouts; both
 * call curl_multi_socket_action and then collect finished transfers. The
 * per-request watchdog is a libevent timer of our own, so the progress rule
 * does not depend on curl's second-granular low-speed check. A 200 body
 * grows in a base_buf capped at max_size (one allocation when its size is
 * announced).
 */
#include "service/fetch/svc_upstream_http.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "base/base_buf.h"

#define DROPPED_BODY_MAX (1u << 20) /* bytes of an error page we read and drop */

struct svc_http {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	char *user_agent;
	svc_http_req *reqs;
	size_t n_reqs;
};

struct svc_http_req {
	svc_http *h;
	CURL *easy;
	svc_http_req *prev, *next;
	struct event *watchdog;
	struct curl_slist *headers;
	svc_http_opts o;
	svc_http_done_fn done;
	void *arg;
	char *url;
	base_buf body;          /* of a 200 answer, capped at o.max_size */
	uint64_t received, window_start, dropped;
	long status;            /* of the current response (redirects change it) */
	int64_t declared;
	bool too_large;
	char errbuf[CURL_ERROR_SIZE];
};

struct sock_ctx {
	struct event *ev;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- finishing ------------------------------------------------------------ */

static void req_free(svc_http_req *r)
{
	svc_http *h = r->h;
	if (r->prev)
		r->prev->next = r->next;
	else
		h->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	h->n_reqs--;
	if (r->easy) {
		curl_multi_remove_handle(h->multi, r->easy);
		curl_easy_cleanup(r->easy);
	}
	if (r->watchdog)
		event_free(r->watchdog);
	curl_slist_free_all(r->headers);
	base_buf_deinit(&r->body);
	free(r->url);
	free(r);
}

static void finish(svc_http_req *r, svc_http_failure failure, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finish(svc_http_req *r, svc_http_failure failure, const char *fmt, ...)
{
	svc_http_result res;
	memset(&res, 0, sizeof(res));
	res.failure = failure;
	res.status = failure == SVC_HTTP_OK ? r->status : 0;
	res.declared_size = r->declared;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(res.error, sizeof(res.error), fmt, ap);
		va_end(ap);
	}
	if (failure == SVC_HTTP_OK && r->status == 200)
		res.body = base_buf_take(&r->body, &res.size);
	svc_http_done_fn done = r->done;
	void *arg = r->arg;
	/* Detach before the callback, which may start or cancel other requests. */
	req_free(r);
	done(&res, arg);
	free(res.body);
}

static void transfer_done(svc_http_req *r, CURLcode code)
{
	if (code == CURLE_OK) {
		long status = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
		r->status = status;
		if (status == 200 && r->declared >= 0 && (uint64_t)r->declared != r->body.len) {
			finish(r, SVC_HTTP_NETWORK, "body of %zu bytes, %lld announced", r->body.len,
			       (long long)r->declared);
			return;
		}
		finish(r, SVC_HTTP_OK, NULL);
		return;
	}
	const char *detail = r->errbuf[0] ? r->errbuf : curl_easy_strerror(code);
	if (r->too_large || code == CURLE_FILESIZE_EXCEEDED) {
		finish(r, SVC_HTTP_TOO_LARGE, "larger than the %llu-byte cap",
		       (unsigned long long)r->o.max_size);
		return;
	}
	switch (code) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
		finish(r, SVC_HTTP_CONNECT, "connect: %s", detail);
		return;
	case CURLE_OPERATION_TIMEDOUT:
		finish(r, SVC_HTTP_TIMEOUT, "timeout: %s", detail);
		return;
	default:
		finish(r, SVC_HTTP_NETWORK, "%s", detail);
		return;
	}
}

static void check_done(svc_http *h)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(h->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		svc_http_req *r = NULL;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r)
			transfer_done(r, msg->data.result);
	}
}

/* ---- libevent <-> curl ------------------------------------------------ */

static void event_cb(evutil_socket_t fd, short kind, void *arg)
{
	svc_http *h = arg;
	int flags = (kind & EV_READ ? CURL_CSELECT_IN : 0) | (kind & EV_WRITE ? CURL_CSELECT_OUT : 0);
	int running = 0;
	curl_multi_socket_action(h->multi, fd, flags, &running);
	check_done(h);
}

static void timer_cb(evutil_socket_t fd, short kind, void *arg)
{
	(void)fd;
	(void)kind;
	svc_http *h = arg;
	int running = 0;
	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(h);
}

static int multi_timer_cb(CURLM *multi, long timeout_ms, void *arg)
{
	(void)multi;
	svc_http *h = arg;
	if (timeout_ms < 0) {
		evtimer_del(h->timer);
	} else {
		struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
		evtimer_add(h->timer, &tv);
	}
	return 0;
}

static int sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)easy;
	svc_http *h = userp;
	struct sock_ctx *sc = socketp;
	if (what == CURL_POLL_REMOVE) {
		if (sc) {
			event_free(sc->ev);
			free(sc);
			curl_multi_assign(h->multi, s, NULL);
		}
		return 0;
	}
	short kind = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) |
		     (what & CURL_POLL_OUT ? EV_WRITE : 0);
	if (!sc) {
		if (!(sc = calloc(1, sizeof(*sc))))
			return -1;
		curl_multi_assign(h->multi, s, sc);
	} else {
		event_free(sc->ev);
	}
	sc->ev = event_new(h->base, s, kind, event_cb, h);
	if (!sc->ev)
		return -1;
	event_add(sc->ev, NULL);
	return 0;
}

/* ---- per-request callbacks --------------------------------------------- */

static void watchdog_cb(evutil_socket_t fd, short kind, void *arg)
{
	(void)fd;
	(void)kind;
	svc_http_req *r = arg;
	uint64_t got = r->received - r->window_start;
	if (got < r->o.min_progress) {
		finish(r, SVC_HTTP_TIMEOUT, "timeout: %llu bytes in %.1f s (at least %llu expected)",
		       (unsigned long long)got, (double)r->o.timeout_ms / 1000.0,
		       (unsigned long long)r->o.min_progress);
		return;
	}
	r->window_start = r->received;
}

static size_t header_cb(char *p, size_t size, size_t n, void *arg)
{
	svc_http_req *r = arg;
	size_t len = size * n;
	r->received += len;
	if (len > 5 && !strncmp(p, "HTTP/", 5)) {
		/* A new response (after a redirect or a 100): status, no sizes yet. */
		const char *sp = memchr(p, ' ', len);
		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->declared = -1;
		return len;
	}
	static const char *const names[] = {"content-length:", "x-debuginfod-size:"};
	for (int i = 0; i < 2; i++) {
		size_t nl = strlen(names[i]);
		if (len > nl && !strncasecmp(p, names[i], nl)) {
			char tmp[32];
			size_t vl = len - nl < sizeof(tmp) - 1 ? len - nl : sizeof(tmp) - 1;
			memcpy(tmp, p + nl, vl);
			tmp[vl] = '\0';
			char *end;
			long long v = strtoll(tmp, &end, 10);
			if (end != tmp && v >= 0 && (i == 1 || r->declared < 0))
				r->declared = v;
			if (r->status == 200 && r->declared >= 0 && (uint64_t)r->declared > r->o.max_size) {
				r->too_large = true;
				return 0; /* abort before any byte of the body */
			}
		}
	}
	return len;
}

static size_t write_cb(char *p, size_t size, size_t n, void *arg)
{
	svc_http_req *r = arg;
	size_t len = size * n;
	r->received += len;
	if (r->status != 200) {
		r->dropped += len;
		return r->dropped > DROPPED_BODY_MAX ? 0 : len;
	}
	/* A size announced within the cap: one allocation for the whole body. */
	if (!r->body.cap && r->declared > 0 && (uint64_t)r->declared <= r->o.max_size)
		base_buf_reserve(&r->body, (size_t)r->declared);
	if (!base_buf_append(&r->body, p, len)) {
		r->too_large = r->body.over;
		return 0;
	}
	return len;
}

/* ---- API ------------------------------------------------------------- */

svc_http *svc_http_create(struct event_base *base, const char *user_agent)
{
	pthread_once(&curl_once, curl_init_once);
	svc_http *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->base = base;
	h->multi = curl_multi_init();
	h->timer = evtimer_new(base, timer_cb, h);
	h->user_agent = strdup(user_agent ? user_agent : "symbolizer");
	if (!h->multi || !h->timer || !h->user_agent) {
		svc_http_destroy(h);
		return NULL;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return h;
}

void svc_http_destroy(svc_http *h)
{
	if (!h)
		return;
	while (h->reqs)
		req_free(h->reqs);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	if (h->timer)
		event_free(h->timer);
	free(h->user_agent);
	free(h);
}

svc_http_req *svc_http_get(svc_http *h, const char *url, const svc_http_opts *o,
			   svc_http_done_fn done, void *arg)
{
	svc_http_req *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->h = h;
	r->o = *o;
	if (r->o.timeout_ms < 1)
		r->o.timeout_ms = 1;
	r->done = done;
	r->arg = arg;
	r->declared = -1;
	base_buf_init(&r->body, r->o.max_size < SIZE_MAX ? (size_t)r->o.max_size : SIZE_MAX);
	r->next = h->reqs;
	if (h->reqs)
		h->reqs->prev = r;
	h->reqs = r;
	h->n_reqs++;

	char maxsize[64];
	snprintf(maxsize, sizeof(maxsize), "X-DEBUGINFOD-MAXSIZE: %llu",
		 (unsigned long long)r->o.max_size);
	r->url = strdup(url);
	r->easy = curl_easy_init();
	r->headers = curl_slist_append(NULL, maxsize);
	/* Federation loops (issue 13): a daemon asked with hops >= its --max-hops
	 * asks no upstream, so replicas listing each other stop after one hop.
	 * The peer tier is not a hop: the owner asked through it goes to its
	 * upstreams, and never back to its own peer tier. */
	struct curl_slist *hops =
		r->headers ? curl_slist_append(r->headers, r->o.peer ? "X-Symbolizer-Peer: 1"
								    : "X-Symbolizer-Hops: 1")
			   : NULL;
	if (hops)
		r->headers = hops;
	r->watchdog = event_new(h->base, -1, EV_PERSIST, watchdog_cb, r);
	if (!r->url || !r->easy || !r->headers || !r->watchdog) {
		req_free(r);
		return NULL;
	}
	CURL *e = r->easy;
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)r);
	curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)r->o.timeout_ms);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->o.max_size);
	struct timeval tv = {r->o.timeout_ms / 1000, (r->o.timeout_ms % 1000) * 1000};
	if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
		req_free(r);
		return NULL;
	}
	event_add(r->watchdog, &tv);
	return r;
}

void svc_http_cancel(svc_http_req *r)
{
	if (r)
		req_free(r);
}

size_t svc_http_active(const svc_http *h)
{
	return h->n_reqs;
}
