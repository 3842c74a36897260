// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_request: the S3 client's one blocking request (svc_s3.h), on an
 * easy handle of its own: the bucket check at start (a list of one key).
 * Reads and writes are not here: they go on the loop's multi handle
 * (svc_provider_s3.c, svc_fetch_s3.c, svc_s3_put.c). Error texts carry the
 * server's <Code> only (an S3 error body may echo the access key; it is
 * never copied out).
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/base_sha256.h"

typedef struct reply {
	char code[64];           /* <Code> of an error body */
	char err_body[2048];
	size_t err_len;
	long long length;        /* Content-Length; -1 when absent */
	char sha[72];            /* x-amz-meta-sha256 */
	base_buf *down;          /* GET: the body (capped), when not NULL */
	long status;
	bool too_large;          /* GET: the body went over its cap */
} reply;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t len = size * n;
	if (r->down && r->status == 200) {
		r->too_large = !base_buf_append(r->down, p, len);
		return r->too_large ? 0 : len;
	}
	size_t room = sizeof(r->err_body) - 1 - r->err_len;
	size_t take = len < room ? len : room;
	memcpy(r->err_body + r->err_len, p, take);
	r->err_len += take;
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t len = size * n;
	char line[160];
	size_t l = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, p, l);
	line[l] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (!strncmp(line, "HTTP/", 5) && strchr(line, ' '))
		r->status = strtol(strchr(line, ' ') + 1, NULL, 10);
	else if (!strncasecmp(line, "content-length:", 15))
		r->length = strtoll(line + 15, NULL, 10);
	else if (!strncasecmp(line, "x-amz-meta-sha256:", 18))
		sscanf(line + 18, " %64[0-9a-fA-F]", r->sha);
	return len;
}

/* The <Code> of an XML error body, printable characters only. */
static void error_code(reply *r)
{
	r->err_body[r->err_len] = '\0';
	const char *a = strstr(r->err_body, "<Code>"), *b = a ? strstr(a, "</Code>") : NULL;
	size_t k = 0;
	for (const char *p = a ? a + 6 : b; a && b && p < b && k < sizeof(r->code) - 1; p++)
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
			r->code[k++] = *p;
	r->code[k] = '\0';
}

/* One GET (the body into r->down). The HTTP status, or -1 with err set
 * (connect, timeout). */
static long request(svc_s3 *s3, const char *what, const char *url, reply *r, svc_error *err)
{
	CURL *e = curl_easy_init();
	struct curl_slist *h = NULL;
	char ebuf[CURL_ERROR_SIZE] = "";
	if (!e || !svc_s3_sign(s3, e, &h)) {
		curl_easy_cleanup(e);
		curl_slist_free_all(h);
		return svc_error_set(err, SVC_E_NOMEM, "s3 %s: out of memory", what), -1;
	}
	r->length = -1;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_USERAGENT, s3->user_agent);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)s3->set.timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)s3->set.timeout_ms);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	CURLcode rc = curl_easy_perform(e);
	long status = -1;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
		svc_s3_note_status(s3, status);
	}
	else
		svc_error_set(err, SVC_E_UPSTREAM, "s3 %s %s: %s", what, s3->name,
			      ebuf[0] ? ebuf : curl_easy_strerror(rc));
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	if (status >= 300)
		error_code(r);
	return status;
}

static svc_errc status_error(svc_s3 *s3, const char *what, long st, const reply *r,
			     svc_error *err)
{
	svc_errc c = st == 403 || st == 401 ? SVC_E_UNAUTHENTICATED
		     : st >= 500	     ? SVC_E_UPSTREAM
		     : st == 404	     ? SVC_E_INVALID
					     : SVC_E_UPSTREAM;
	return svc_error_set(err, c, "s3 %s %s at %s: HTTP %ld%s%s", what, s3->name,
			     s3->set.endpoint, st, r->code[0] ? " " : "", r->code);
}

svc_errc svc_s3_check(svc_s3 *s3, svc_error *err)
{
	char url[SVC_S3_KEY_MAX + 1024];
	if (!svc_s3_url(s3, "?max-keys=1", url, sizeof(url)))
		return svc_error_set(err, SVC_E_INVALID, "s3: endpoint too long");
	/* A GET (list one key), not a HEAD: its error body names the cause. */
	base_buf b;
	base_buf_init(&b, 1 << 16);
	reply r = {.down = &b};
	long st = request(s3, "list bucket", url, &r, err);
	base_buf_deinit(&b);
	if (st < 0)
		return err->code;
	if (st != 200)
		return status_error(s3, "list bucket", st, &r, err);
	return SVC_OK;
}
