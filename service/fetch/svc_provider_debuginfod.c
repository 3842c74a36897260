// SPDX-License-Identifier: Apache-2.0
/*
 * svc_provider_debuginfod: the debuginfod protocol over libcurl, the first
 * provider (svc_provider_impl.h): GET {url}/buildid/{hex}/debuginfo,
 * .../executable and .../source/{path} on the fetcher's libcurl transport
 * (svc_upstream_http.c), and what the answers mean:
 *
 *   200          found (the body, spooled or in memory)
 *   404          not found
 *   406, a body over the cap          too large
 *   5xx, 429, timeouts, refused or reset connections    retry
 *   another status, our side (the spool file), a refused redirect  rejected
 *
 * A peer (the peer tier) is a debuginfod server too: its requests carry
 * X-Symbolizer-Peer instead of a hop. This is the only file of the room that
 * knows the protocol's paths.
 */
#include "service/fetch/svc_provider_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dbgd {
	svc_provider base;
	svc_provider_env env;
	char *url;               /* as configured, credentials included */
	bool peer;
} dbgd;

char *svc_fetch_url(const char *base, const char *hex, const char *what, svc_error *err)
{
	static const char mid[] = "/buildid/";
	size_t lb = strlen(base), lh = strlen(hex), lw = strlen(what);
	size_t n = lb + (sizeof(mid) - 1) + lh + 1 + lw;
	if (lb > SVC_FETCH_URL_MAX || n > SVC_FETCH_URL_MAX) {
		svc_error_set(err, SVC_E_INVALID, "URL of %zu bytes, over the %d-byte limit",
			      lb > SVC_FETCH_URL_MAX ? lb : n, SVC_FETCH_URL_MAX);
		return NULL;
	}
	char *url = malloc(n + 1);
	if (!url) {
		svc_error_set(err, SVC_E_NOMEM, "URL: out of memory");
		return NULL;
	}
	char *p = url;
	memcpy(p, base, lb);
	p += lb;
	memcpy(p, mid, sizeof(mid) - 1);
	p += sizeof(mid) - 1;
	memcpy(p, hex, lh);
	p += lh;
	*p++ = '/';
	memcpy(p, what, lw);
	p[lw] = '\0';
	return url;
}

/* "source" + path with every byte but [A-Za-z0-9/._~-] as %XX, as debuginfod
 * clients encode it ('/' kept). */
static char *encode_source(const char *path)
{
	static const char hexd[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *out = malloc(7 + 3 * n + 1), *p = out;
	if (!out)
		return NULL;
	memcpy(p, "source", 6);
	p += 6;
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		unsigned c = *s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '/' || c == '.' || c == '_' || c == '~' || c == '-') {
			*p++ = (char)c;
		} else {
			*p++ = '%';
			*p++ = hexd[c >> 4];
			*p++ = hexd[c & 15];
		}
	}
	*p = '\0';
	return out;
}

static svc_provider *dbgd_create(const svc_provider_env *env, const char *url, bool peer,
				 svc_error *err)
{
	dbgd *d = calloc(1, sizeof(*d));
	if (!d || !(d->url = strdup(url))) {
		free(d);
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return NULL;
	}
	d->base.ops = &svc_provider_debuginfod_ops;
	d->env = *env;
	d->peer = peer;
	return &d->base;
}

static void dbgd_destroy(svc_provider *p)
{
	dbgd *d = (dbgd *)p;
	free(d->url);
	free(d);
}

static svc_provider_req *dbgd_start(svc_provider *p, const svc_provider_ask *ask,
				    svc_http_done_fn done, void *arg, svc_error *err)
{
	dbgd *d = (dbgd *)p;
	const svc_config *c = d->env.cfg;
	char *what = ask->want == SVC_WANT_SOURCE ? encode_source(ask->path ? ask->path : "")
		     : strdup(ask->want == SVC_WANT_DEBUGINFO ? "debuginfo" : "executable");
	if (!what) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return NULL;
	}
	char *url = svc_fetch_url(d->url, ask->hex, what, err);
	free(what);
	if (!url)
		return NULL;
	svc_http_opts o = {
		.timeout_ms = c->upstream_timeout_ms,
		.total_ms = ask->total_ms,
		.min_progress = c->upstream_min_progress,
		.max_size = ask->max_size,
		.peer = d->peer,
		.spool_dir = d->env.spool_dir,
		.netrc = c->upstream_netrc[0] ? c->upstream_netrc : NULL,
		.redirects = (svc_http_redirects)c->upstream_redirects,
	};
	svc_http_req *req = svc_http_get(d->env.http, url, &o, done, arg);
	free(url);
	if (!req)
		svc_error_set(err, SVC_E_IO, "could not start a request");
	return (svc_provider_req *)req;
}

static void dbgd_cancel(svc_provider_req *req)
{
	svc_http_cancel((svc_http_req *)req);
}

static void set_why(svc_provider_answer *a, svc_answer_class cls, const char *why)
{
	a->cls = cls;
	snprintf(a->why, sizeof(a->why), "%s", why);
}

/* An answer arrived: what its status means. */
static void classify_status(const svc_provider_ask *ask, svc_http_result *res,
			    svc_provider_answer *a)
{
	char why[64];
	snprintf(why, sizeof(why), "HTTP %ld", res->status);
	a->answered = true;
	if (res->status == 200) {
		a->cls = SVC_ANSWER_FOUND;
		a->body = res->body;
		a->fd = res->fd;
		a->size = res->size;
		res->body = NULL;
		res->fd = -1;
	} else if (res->status == 404) {
		set_why(a, SVC_ANSWER_NOT_FOUND, why);
	} else if (res->status == 406) {
		set_why(a, SVC_ANSWER_TOO_LARGE, why);
		snprintf(a->detail, sizeof(a->detail), "HTTP 406 (over %llu bytes)",
			 (unsigned long long)ask->max_size);
	} else if (res->status >= 500 || res->status == 429) {
		set_why(a, SVC_ANSWER_RETRY, why);
	} else {
		/* Another client error: the server works, it will not change its mind. */
		set_why(a, SVC_ANSWER_REJECTED, why);
	}
}

static void dbgd_classify(svc_provider *p, const svc_provider_ask *ask, svc_http_result *res,
			  svc_provider_answer *a)
{
	(void)p;
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	switch (res->failure) {
	case SVC_HTTP_OK:
		classify_status(ask, res, a);
		break;
	case SVC_HTTP_TOO_LARGE:
		set_why(a, SVC_ANSWER_TOO_LARGE, res->error);
		break;
	case SVC_HTTP_LOCAL:
		a->ours = true;
		set_why(a, SVC_ANSWER_REJECTED, res->error);
		break;
	case SVC_HTTP_REDIRECT:
		/* A refusal by policy: not the server's failure. */
		set_why(a, SVC_ANSWER_REJECTED, res->error);
		break;
	default:
		set_why(a, SVC_ANSWER_RETRY, res->error);
		break;
	}
	if (!a->detail[0])
		snprintf(a->detail, sizeof(a->detail), "%s", a->why);
}

const svc_provider_ops svc_provider_debuginfod_ops = {
	.name = "debuginfod",
	.id_kinds = 1u << SYM_ID_GNU,
	.create = dbgd_create,
	.destroy = dbgd_destroy,
	.start = dbgd_start,
	.cancel = dbgd_cancel,
	.classify = dbgd_classify,
};
