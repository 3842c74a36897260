// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3: the S3 client's object (svc_s3.h): credentials, keys and URLs,
 * SigV4 on an easy handle, and the blocking requests (HEAD bucket at start,
 * PUT then HEAD to verify). Error texts carry the server's <Code> only (an
 * S3 error body may echo the access key; it is never copied out).
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <errno.h>

static bool load_credentials(svc_s3 *s3, const svc_s3_settings *s, svc_error *err)
{
	if (s->credentials_file[0]) {
		char text[SVC_S3_CREDENTIALS_MAX + 1];
		FILE *fp = fopen(s->credentials_file, "re");
		if (!fp)
			return svc_error_set(err, SVC_E_INVALID, "--s3-credentials-file %s: %s",
					     s->credentials_file, strerror(errno)), false;
		size_t n = fread(text, 1, sizeof(text), fp);
		fclose(fp);
		bool ok = svc_s3_credentials_parse(text, n, s3->key, sizeof(s3->key), s3->secret,
						   sizeof(s3->secret), err);
		memset(text, 0, sizeof(text));
		if (!ok)
			svc_error_prefix(err, "--s3-credentials-file %s", s->credentials_file);
		return ok;
	}
	const char *k = getenv("AWS_ACCESS_KEY_ID"), *sec = getenv("AWS_SECRET_ACCESS_KEY");
	if (!k || !*k || !sec || !*sec)
		return svc_error_set(err, SVC_E_INVALID,
				     "s3: no credentials (--s3-credentials-file, or "
				     "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"), false;
	if (strlen(k) >= sizeof(s3->key) || strlen(sec) >= sizeof(s3->secret))
		return svc_error_set(err, SVC_E_INVALID, "s3: AWS_* credentials too long"), false;
	snprintf(s3->key, sizeof(s3->key), "%s", k);
	snprintf(s3->secret, sizeof(s3->secret), "%s", sec);
	return true;
}

svc_s3 *svc_s3_create(const svc_s3_settings *s, const char *user_agent, svc_error *err)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	svc_s3 *s3 = calloc(1, sizeof(*s3));
	if (!s3)
		return svc_error_set(err, SVC_E_NOMEM, "s3: out of memory"), NULL;
	s3->set = *s;
	size_t n = strlen(s3->set.endpoint);
	while (n && s3->set.endpoint[n - 1] == '/')
		s3->set.endpoint[--n] = '\0';
	snprintf(s3->name, sizeof(s3->name), "s3://%s%s%s", s->bucket, s->prefix[0] ? "/" : "",
		 s->prefix);
	snprintf(s3->sigv4, sizeof(s3->sigv4), "aws:amz:%s:s3", s->region);
	snprintf(s3->user_agent, sizeof(s3->user_agent), "%s", user_agent ? user_agent : "symbolizer");
	if (!load_credentials(s3, s, err) || !svc_s3_behind_start(s3, err)) {
		svc_s3_destroy(s3);
		return NULL;
	}
	return s3;
}

void svc_s3_destroy(svc_s3 *s3)
{
	if (!s3)
		return;
	svc_s3_behind_stop(s3);
	/* The secret leaves no copy in freed memory. */
	memset(s3->secret, 0, sizeof(s3->secret));
	free(s3);
}

const char *svc_s3_name(const svc_s3 *s3)
{
	return s3->name;
}

bool svc_s3_key(const svc_s3 *s3, const char *kind, const char *hex, const char *what, char *out,
		size_t cap)
{
	size_t hl = strlen(hex);
	if (hl < 4)
		return false;
	int w = snprintf(out, cap, "%s%sv1/%s/%.2s/%s/%s", s3->set.prefix,
			 s3->set.prefix[0] ? "/" : "", kind, hex, hex + 2, what);
	return w > 0 && (size_t)w < cap && (size_t)w < SVC_S3_KEY_MAX;
}

bool svc_s3_url(const svc_s3 *s3, const char *key, char *out, size_t cap)
{
	const char *ep = s3->set.endpoint;
	const char *host = strstr(ep, "://") + 3;
	int w;
	if (s3->set.virtual_host)
		w = snprintf(out, cap, "%.*s%s.%s/%s", (int)(host - ep), ep, s3->set.bucket, host,
			     key);
	else
		w = snprintf(out, cap, "%s/%s/%s", ep, s3->set.bucket, key);
	return w > 0 && (size_t)w < cap;
}

bool svc_s3_sign(const svc_s3 *s3, void *easy, void *headers)
{
	CURL *e = easy;
	struct curl_slist **h = headers;
	curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s3->sigv4);
	curl_easy_setopt(e, CURLOPT_USERNAME, s3->key);
	curl_easy_setopt(e, CURLOPT_PASSWORD, s3->secret);
	for (struct curl_slist *l = *h; l; l = l->next)
		if (!strncasecmp(l->data, "x-amz-content-sha256:", 21))
			return true;
	struct curl_slist *n = curl_slist_append(*h, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	if (!n)
		return false;
	*h = n;
	return true;
}

/* ---- blocking requests --------------------------------------------------- */

typedef struct reply {
	char code[64];           /* <Code> of an error body */
	char err_body[2048];
	size_t err_len;
	long long length;        /* Content-Length; -1 when absent */
	char sha[72];            /* x-amz-meta-sha256 */
	const uint8_t *up;       /* PUT body */
	size_t up_len, up_off;
	base_buf *down;          /* GET: the body (capped), when not NULL */
	long status;
} reply;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t len = size * n;
	if (r->down && r->status == 200)
		return base_buf_append(r->down, p, len) ? len : 0;
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

static size_t on_read(char *p, size_t size, size_t n, void *arg)
{
	reply *r = arg;
	size_t want = size * n, left = r->up_len - r->up_off;
	size_t take = want < left ? want : left;
	memcpy(p, r->up + r->up_off, take);
	r->up_off += take;
	return take;
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

/* One request: HEAD (!put, no r->down), GET (r->down), PUT (put). The HTTP status, or -1 with
 * err set (connect, timeout). */
static long request(svc_s3 *s3, const char *what, const char *url, bool put, reply *r,
		    struct curl_slist *extra, svc_error *err)
{
	CURL *e = curl_easy_init();
	struct curl_slist *h = extra;
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
	if (put) {
		curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(e, CURLOPT_READDATA, r);
		curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->up_len);
	} else if (!r->down) {
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	}
	CURLcode rc = curl_easy_perform(e);
	long status = -1;
	if (rc == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
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
	long st = request(s3, "list bucket", url, false, &r, NULL, err);
	base_buf_deinit(&b);
	if (st < 0)
		return err->code;
	if (st != 200)
		return status_error(s3, "list bucket", st, &r, err);
	return SVC_OK;
}

svc_errc svc_s3_put(svc_s3 *s3, const char *key, const uint8_t *data, size_t size,
		    svc_error *err)
{
	if (size > SVC_S3_PUT_MAX)
		return svc_error_set(err, SVC_E_TOO_LARGE, "s3 PUT: %zu bytes is over 5 GiB", size);
	char url[SVC_S3_KEY_MAX + 1024], sha[65], h1[128], h2[128];
	if (!svc_s3_url(s3, key, url, sizeof(url)))
		return svc_error_set(err, SVC_E_INVALID, "s3: key too long");
	svc_s3_sha256_hex(data, size, sha);
	snprintf(h1, sizeof(h1), "x-amz-meta-sha256: %s", sha);
	snprintf(h2, sizeof(h2), "x-amz-content-sha256: %s", sha);
	struct curl_slist *h = curl_slist_append(NULL, h1), *t;
	if (h && (t = curl_slist_append(h, h2)))
		h = t;
	reply r = {.up = data, .up_len = size};
	long st = request(s3, "PUT", url, true, &r, h, err);
	svc_errc rc = SVC_OK;
	if (st < 0)
		rc = err->code;
	else if (st != 200)
		rc = status_error(s3, "PUT", st, &r, err);
	reply v = {0};
	if (rc == SVC_OK && (st = request(s3, "HEAD", url, false, &v, NULL, err)) != 200)
		rc = st < 0 ? err->code : status_error(s3, "HEAD", st, &v, err);
	if (rc == SVC_OK && (v.length != (long long)size || strcasecmp(v.sha, sha)))
		rc = svc_error_set(err, SVC_E_UPSTREAM,
				   "s3 %s: the written object does not verify (size %lld, want %zu)",
				   s3->name, v.length, size);
	if (rc == SVC_E_UNAUTHENTICATED || rc == SVC_E_INVALID)
		rc = SVC_E_UPSTREAM; /* to the uploader: S3 cannot take it now (503) */
	svc_s3_count_put(s3, rc == SVC_OK, size);
	return rc;
}

svc_errc svc_s3_get(svc_s3 *s3, const char *key, uint64_t max, uint8_t **out, size_t *size,
		    svc_error *err)
{
	char url[SVC_S3_KEY_MAX + 1024], sha[65];
	*out = NULL;
	*size = 0;
	if (!svc_s3_url(s3, key, url, sizeof(url)))
		return svc_error_set(err, SVC_E_INVALID, "s3: key too long");
	base_buf b;
	base_buf_init(&b, max < SIZE_MAX ? (size_t)max : SIZE_MAX);
	reply r = {.down = &b};
	long st = request(s3, "GET", url, false, &r, NULL, err);
	svc_errc rc = SVC_OK;
	int what = SVC_S3_GET_FAILED;
	if (st < 0)
		rc = b.len >= max ? svc_error_set(err, SVC_E_TOO_LARGE, "s3 GET: over %llu bytes",
						  (unsigned long long)max)
				  : err->code;
	else if (st == 404)
		what = SVC_S3_GET_MISSING, rc = svc_error_set(err, SVC_E_NOT_FOUND, "s3: no %s", key);
	else if (st != 200)
		rc = status_error(s3, "GET", st, &r, err);
	if (rc == SVC_OK) {
		svc_s3_sha256_hex(b.data, b.len, sha);
		what = SVC_S3_GET_BAD;
		if (!r.sha[0] || strcasecmp(sha, r.sha) || (r.length >= 0 && (size_t)r.length != b.len))
			rc = svc_error_set(err, SVC_E_BAD_FILE, "s3 %s: object does not verify", key);
	}
	if (rc == SVC_OK) {
		what = SVC_S3_GET_OK;
		*out = base_buf_take(&b, size);
	}
	svc_s3_count_get(s3, what, rc == SVC_OK ? *size : 0);
	base_buf_deinit(&b);
	return rc;
}
