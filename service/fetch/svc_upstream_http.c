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
 * announced), or in an unlinked file of the spool directory. Redirects are
 * ours (FOLLOWLOCATION off): a 3xx with a Location is checked against the
 * policy, then the same easy handle is restarted on the new URL.
 */
#include "service/fetch/svc_upstream_http.h"
#include "service/fetch/svc_spool.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "base/base_buf.h"
#include "base/base_clock.h"
#include "base/base_sha256.h"

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
	char *url;              /* of the current request (a redirect changes it) */
	char *origin;           /* the URL asked for: redirects are checked against it */
	int n_redirects;
	bool foreign;           /* a redirect went to another host: generic errors only */
	int64_t start_ms;       /* for total_ms */
	base_buf body;          /* of a 200 answer, capped at o.max_size */
	int fd;                 /* the spool file of a 200 answer; -1 until one is written */
	uint64_t spooled;
	int spool_errno;        /* the spool file failed (errno) */
	uint64_t received, window_start, dropped;
	long status;            /* of the current response (redirects change it) */
	int64_t declared;
	bool too_large;
	char sha256[65];
	char etag[96];
	base_sha256 hash;       /* of a 200 body as it arrives (o.hash) */
	bool hashing;
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
	if (r->hashing)
		base_sha256_final(&r->hash, (uint8_t[BASE_SHA256_LEN]){0});
	base_buf_deinit(&r->body);
	if (r->fd >= 0)
		close(r->fd);
	free(r->url);
	free(r->origin);
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
	memcpy(res.sha256, r->sha256, sizeof(res.sha256));
	memcpy(res.etag, r->etag, sizeof(res.etag));
	res.fd = -1;
	uint8_t md[BASE_SHA256_LEN];
	if (r->hashing && (r->hashing = false, base_sha256_final(&r->hash, md)) && r->status == 200)
		for (int i = 0; i < BASE_SHA256_LEN; i++)
			snprintf(res.body_sha256 + 2 * i, 3, "%02x", md[i]);
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(res.error, sizeof(res.error), fmt, ap);
		va_end(ap);
	}
	if (failure == SVC_HTTP_OK && r->status == 200 && r->fd >= 0) {
		res.fd = r->fd;
		res.size = (size_t)r->spooled;
		r->fd = -1;
	} else if (failure == SVC_HTTP_OK && r->status == 200) {
		res.body = base_buf_take(&r->body, &res.size);
	}
	svc_http_done_fn done = r->done;
	void *arg = r->arg;
	/* Detach before the callback, which may start or cancel other requests. */
	req_free(r);
	done(&res, arg);
	free(res.body);
	if (res.fd >= 0)
		close(res.fd);
}

/* ---- redirects ---------------------------------------------------------- */

/* The time left of total_ms for curl (at least 1 ms); 0 without a deadline. */
static long time_left(const svc_http_req *r)
{
	if (r->o.total_ms <= 0)
		return 0;
	int64_t left = r->o.total_ms - (base_mono_ms() - r->start_ms);
	return left < 1 ? 1 : (long)left;
}

/* The same handle, on to next (owned): the state of the last response reset. */
static void restart(svc_http_req *r, char *next)
{
	curl_multi_remove_handle(r->h->multi, r->easy);
	free(r->url);
	r->url = next;
	r->status = 0;
	r->declared = -1;
	r->dropped = 0;
	r->body.len = 0;
	if (r->fd >= 0 && (ftruncate(r->fd, 0) != 0 || lseek(r->fd, 0, SEEK_SET) != 0))
		r->spool_errno = errno;
	r->spooled = 0;
	r->errbuf[0] = '\0';
	curl_easy_setopt(r->easy, CURLOPT_URL, r->url);
	curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, time_left(r));
	if (curl_multi_add_handle(r->h->multi, r->easy) != CURLM_OK)
		finish(r, SVC_HTTP_NETWORK, "could not follow a redirect");
}

/* A 3xx with a Location: follow it (true) when the policy allows, or end the
 * request with the refusal (true); false: not a redirect, an answer. */
static bool follow(svc_http_req *r)
{
	char *loc = NULL;
	if (r->status < 300 || r->status > 399 || r->status == 304 ||
	    curl_easy_getinfo(r->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
		return false;
	if (r->o.redirects == SVC_HTTP_REDIRECT_NONE) {
		finish(r, SVC_HTTP_REDIRECT, "HTTP %ld redirect refused (redirects: none)", r->status);
		return true;
	}
	if (++r->n_redirects > SVC_HTTP_MAX_REDIRECTS) {
		finish(r, SVC_HTTP_REDIRECT, "more than %d redirects", SVC_HTTP_MAX_REDIRECTS);
		return true;
	}
	bool same = svc_http_same_origin(r->origin, loc);
	if (!same && r->o.redirects == SVC_HTTP_REDIRECT_SAME_HOST) {
		finish(r, SVC_HTTP_REDIRECT, "HTTP %ld redirect to another host refused "
		       "(redirects: same-host)", r->status);
		return true;
	}
	r->foreign |= !same;
	char *next = strdup(loc);
	if (!next) {
		finish(r, SVC_HTTP_LOCAL, "out of memory");
		return true;
	}
	restart(r, next);
	return true;
}

/* ---- transfers ---------------------------------------------------------- */

static void transfer_done(svc_http_req *r, CURLcode code)
{
	if (code == CURLE_OK) {
		long status = 0;
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
		r->status = status;
		if (follow(r))
			return;
		size_t got = r->fd >= 0 ? (size_t)r->spooled : r->body.len;
		if (status == 200 && !r->o.no_body && r->declared >= 0 && (uint64_t)r->declared != got) {
			finish(r, SVC_HTTP_NETWORK, "body of %zu bytes, %lld announced", got,
			       (long long)r->declared);
			return;
		}
		finish(r, SVC_HTTP_OK, NULL);
		return;
	}
	/* After a redirect to another host, nothing of what it did is echoed. */
	const char *detail = r->foreign ? "failed (redirected to another host)"
			     : r->errbuf[0] ? r->errbuf
					    : curl_easy_strerror(code);
	if (r->spool_errno) {
		finish(r, SVC_HTTP_LOCAL, "spooling the download to %s: %s", r->o.spool_dir,
		       strerror(r->spool_errno));
		return;
	}
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
	if (r->o.on_header)
		r->o.on_header(r->o.header_arg, p, len);
	if (len > 5 && !strncmp(p, "HTTP/", 5)) {
		/* A new response (after a redirect or a 100): status, no sizes yet. */
		const char *sp = memchr(p, ' ', len);
		r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		r->declared = -1;
		r->sha256[0] = r->etag[0] = '\0';
		if (r->hashing)
			base_sha256_final(&r->hash, (uint8_t[BASE_SHA256_LEN]){0});
		r->hashing = r->o.hash && base_sha256_init(&r->hash);
		return len;
	}
	if (len > 5 && !strncasecmp(p, "etag:", 5))
		sscanf(p + 5, " %95[^\r\n]", r->etag);
	if (len > 18 + 64 && !strncasecmp(p, "x-amz-meta-sha256:", 18))
		sscanf(p + 18, " %64[0-9a-f]", r->sha256);
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

/* Appends to the spool file; false (too_large or spool_errno set) to abort. */
static bool spool(svc_http_req *r, const char *p, size_t len)
{
	if (r->spooled + len > r->o.max_size) {
		r->too_large = true;
		return false;
	}
	if (r->fd < 0 && (r->fd = svc_spool_open(r->o.spool_dir)) < 0) {
		r->spool_errno = errno;
		return false;
	}
	if ((r->spool_errno = svc_spool_write(r->fd, p, len)) != 0)
		return false;
	r->spooled += len;
	return true;
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
	if (r->hashing)
		base_sha256_update(&r->hash, p, len);
	if (r->o.spool_dir)
		return spool(r, p, len) ? len : 0;
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
	r->fd = -1;
	r->start_ms = base_mono_ms();
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
	r->origin = strdup(url);
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
	if (!r->url || !r->origin || !r->easy || !r->headers || !r->watchdog) {
		req_free(r);
		return NULL;
	}
	CURL *e = r->easy;
	if (r->o.prepare && !r->o.prepare(r->o.prepare_arg, e, &r->headers)) {
		req_free(r);
		return NULL;
	}
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
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* ours: follow() */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, time_left(r));
	if (r->o.netrc && r->o.netrc[0]) {
		curl_easy_setopt(e, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
		curl_easy_setopt(e, CURLOPT_NETRC_FILE, r->o.netrc);
	}
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)r->o.timeout_ms);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->o.max_size);
	if (r->o.no_body)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
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
