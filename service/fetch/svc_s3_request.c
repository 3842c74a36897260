// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_request: the S3 client's blocking requests (svc_s3.h), on an easy
 * handle of their own (a worker's or the write-behind thread's): the bucket
 * check at start (a list of one key), PUT then HEAD to verify, GET with its
 * checks. Error texts carry the server's <Code> only (an S3 error body may
 * echo the access key; it is never copied out).
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
	const uint8_t *up;       /* PUT body */
	size_t up_len, up_off;
	base_buf *down;          /* GET: the body (capped), when not NULL */
	long status;
	char etag[96];           /* ETag of a part */
	const char *method;      /* "POST", "DELETE"; NULL: by the fields above */
	const char *post;        /* POST body */
	size_t post_len;
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
	else if (!strncasecmp(line, "etag:", 5))
		sscanf(line + 5, " %95s", r->etag);
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
	if (r->method && !strcmp(r->method, "POST")) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->post_len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->post ? r->post : "");
	} else if (r->method) {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	} else if (put) {
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

/* A header line "name: value" appended to *h; false when out of memory. */
static bool add_header(struct curl_slist **h, const char *name, const char *value)
{
	char line[256];
	snprintf(line, sizeof(line), "%s: %s", name, value);
	struct curl_slist *t = curl_slist_append(*h, line);
	if (t)
		*h = t;
	return t != NULL;
}

/* The text between <tag> and </tag> of xml into out (printable, no quotes
 * or markup); false when absent or too long. */
static bool xml_value(const char *xml, const char *tag, char *out, size_t cap)
{
	char open[64], close[64];
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	const char *a = strstr(xml, open), *b = a ? strstr(a, close) : NULL;
	if (!b || (size_t)(b - a - strlen(open)) >= cap || b == a + strlen(open))
		return false;
	size_t n = 0;
	for (const char *p = a + strlen(open); p < b; p++) {
		if (*p <= ' ' || *p > '~' || *p == '<' || *p == '"' || *p == '&')
			return false;
		out[n++] = *p;
	}
	out[n] = '\0';
	return true;
}

/* uploadId percent-encoded for a query (unreserved bytes kept). */
static void encode_id(const char *id, char *out, size_t cap)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)id; *p && n + 4 < cap; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '_' || *p == '.' || *p == '~')
			out[n++] = (char)*p;
		else
			n += (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
	}
	out[n] = '\0';
}

/* Uploads the parts of a multipart upload and completes it; its parts'
 * ETags go into the completion body. False (err set) on any failure. */
static bool send_parts(svc_s3 *s3, const char *url, const char *id, const uint8_t *data,
		       size_t size, base_buf *done, svc_error *err)
{
	size_t parts = (size + SVC_S3_PART_SIZE - 1) / SVC_S3_PART_SIZE;
	base_buf_printf(done, "<CompleteMultipartUpload>");
	for (size_t i = 0; i < parts; i++) {
		size_t off = i * SVC_S3_PART_SIZE;
		size_t len = size - off < SVC_S3_PART_SIZE ? size - off : SVC_S3_PART_SIZE;
		char purl[4096], sha[65];
		if ((size_t)snprintf(purl, sizeof(purl), "%s?partNumber=%zu&uploadId=%s", url, i + 1,
				     id) >= sizeof(purl))
			return svc_error_set(err, SVC_E_UPSTREAM, "s3: upload ID too long"), false;
		base_sha256_hex(data + off, len, sha);
		struct curl_slist *h = NULL;
		if (!add_header(&h, "x-amz-content-sha256", sha)) {
			curl_slist_free_all(h);
			return svc_error_set(err, SVC_E_NOMEM, "s3: out of memory"), false;
		}
		reply r = {.up = data + off, .up_len = len};
		long st = request(s3, "PUT part", purl, true, &r, h, err);
		if (st != 200 || !r.etag[0])
			return st < 0 ? false : (status_error(s3, "PUT part", st, &r, err), false);
		base_buf_printf(done, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>", i + 1,
				r.etag);
	}
	return base_buf_printf(done, "</CompleteMultipartUpload>") ||
	       (svc_error_set(err, SVC_E_NOMEM, "s3: out of memory"), false);
}

/* A large object in parts of SVC_S3_PART_SIZE: create (with the whole
 * object's checksum as its metadata), the parts, complete; aborted on a
 * failure so no half object stays behind. */
static svc_errc put_multipart(svc_s3 *s3, const char *url, const uint8_t *data, size_t size,
			      const char *sha, svc_error *err)
{
	char curl[4096], raw[512], id[1600], body_sha[65];
	struct curl_slist *h = NULL;
	base_buf xml;
	base_buf_init(&xml, 1 << 16);
	snprintf(curl, sizeof(curl), "%s?uploads=", url);
	reply c = {.method = "POST", .down = &xml};
	if (!add_header(&h, "x-amz-meta-sha256", sha))
		return curl_slist_free_all(h), svc_error_set(err, SVC_E_NOMEM, "s3: out of memory");
	long st = request(s3, "create multipart", curl, false, &c, h, err);
	bool ok = st == 200 && base_buf_append(&xml, "", 1) &&
		  xml_value((const char *)xml.data, "UploadId", raw, sizeof(raw));
	base_buf_deinit(&xml);
	if (!ok)
		return st < 0 ? err->code
			      : status_error(s3, "create multipart", st == 200 ? 502 : st, &c, err);
	encode_id(raw, id, sizeof(id));
	base_buf done;
	base_buf_init(&done, 1 << 24);
	ok = (size_t)snprintf(curl, sizeof(curl), "%s?uploadId=%s", url, id) < sizeof(curl);
	ok = ok && send_parts(s3, url, id, data, size, &done, err);
	if (ok) {
		base_buf resp;
		base_buf_init(&resp, 1 << 16);
		base_sha256_hex(done.data, done.len, body_sha);
		h = NULL;
		ok = add_header(&h, "x-amz-content-sha256", body_sha);
		reply f = {.method = "POST", .post = (const char *)done.data, .post_len = done.len,
			   .down = &resp};
		st = ok ? request(s3, "complete multipart", curl, false, &f, h, err) : -1;
		ok = st == 200 && base_buf_append(&resp, "", 1) &&
		     !strstr((const char *)resp.data, "<Error>");
		if (!ok && st >= 0)
			status_error(s3, "complete multipart", st == 200 ? 502 : st, &f, err);
		base_buf_deinit(&resp);
	}
	base_buf_deinit(&done);
	if (!ok) {
		reply a = {.method = "DELETE"};
		svc_error ignored = {0};
		request(s3, "abort multipart", curl, false, &a, NULL, &ignored);
		return err->code ? err->code : SVC_E_UPSTREAM;
	}
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
	base_sha256_hex(data, size, sha);
	snprintf(h1, sizeof(h1), "x-amz-meta-sha256: %s", sha);
	snprintf(h2, sizeof(h2), "x-amz-content-sha256: %s", sha);
	struct curl_slist *h = curl_slist_append(NULL, h1), *t;
	if (h && (t = curl_slist_append(h, h2)))
		h = t;
	reply r = {.up = data, .up_len = size};
	long st = 200;
	svc_errc rc = SVC_OK;
	if (size >= SVC_S3_MULTIPART_MIN) {
		curl_slist_free_all(h);
		rc = put_multipart(s3, url, data, size, sha, err);
	} else if ((st = request(s3, "PUT", url, true, &r, h, err)) < 0) {
		rc = err->code;
	} else if (st != 200) {
		rc = status_error(s3, "PUT", st, &r, err);
	}
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
		rc = r.too_large ? svc_error_set(err, SVC_E_TOO_LARGE, "s3 GET: over %llu bytes",
						  (unsigned long long)max)
				  : err->code;
	else if (st == 404)
		what = SVC_S3_GET_MISSING, rc = svc_error_set(err, SVC_E_NOT_FOUND, "s3: no %s", key);
	else if (st != 200)
		rc = status_error(s3, "GET", st, &r, err);
	if (rc == SVC_OK) {
		base_sha256_hex(b.data, b.len, sha);
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
