// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_put: an object written to S3 and verified, as a chain of requests
 * on the fetcher's curl multi handle (svc_upstream_http.h), on the loop: no
 * thread blocks on S3. Made on any thread (svc_s3_put_new: the checksums of
 * the object and of its parts are computed there, on a worker, never on
 * the loop), then started on the loop; its done callback comes from the
 * loop. The steps:
 *
 *   small: PUT (x-amz-meta-sha256, x-amz-content-sha256: the server checks
 *          the body on the way in) -> HEAD (size and checksum as written)
 *   from SVC_S3_MULTIPART_MIN: POST ?uploads -> PUT ?partNumber (each part
 *          with its own checksum; its ETag kept) -> POST ?uploadId (the
 *          completion) -> HEAD; on a failure DELETE ?uploadId (abort), so
 *          no half object stays behind
 *   then, when asked (svc_s3_put_then_delete): DELETE of an object derived
 *          from the old one (an upload's file replaces the index built from
 *          the file it replaces); 204 or 404 both do
 *
 * Every request is signed (SigV4) by the prepare hook of the request, which
 * also sets its method and body. Its answer's status goes to the S3
 * client's credentials state (svc_s3_auth.c).
 */
#include "service/fetch/svc_s3_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base/base_sha256.h"

typedef enum { ST_PUT, ST_CREATE, ST_PART, ST_COMPLETE, ST_HEAD, ST_ABORT, ST_DELETE } put_state;
static const char *const step_names[] = {"PUT", "create multipart", "PUT part",
					 "complete multipart", "HEAD", "abort multipart",
					 "DELETE"};

struct svc_s3_put {
	svc_s3 *s3;
	svc_s3_put *prev, *next;     /* the client's ops in flight (svc_s3_detach) */
	char key[SVC_S3_KEY_MAX];
	char url[SVC_S3_KEY_MAX + 1024];
	char del_url[SVC_S3_KEY_MAX + 1024]; /* "": nothing to delete after */
	const uint8_t *data;
	uint8_t *owned;              /* a copy (write-behind), freed with the op */
	size_t size;
	char sha[65];
	size_t n_parts, part;
	char (*part_sha)[65];
	char (*etag)[96];
	char upload_id[1600];        /* percent-encoded */
	base_buf xml;                /* the completion body */
	char xml_sha[65];
	const uint8_t *up;           /* the current request's body */
	size_t up_len, up_off;
	put_state st;
	svc_http_req *req;
	svc_s3_put_done_fn done;
	void *arg;
	svc_error err;
};

svc_s3_put *svc_s3_put_new(svc_s3 *s3, const char *key, const uint8_t *data, size_t size,
			   bool copy, svc_error *err)
{
	if (size > SVC_S3_PUT_MAX)
		return svc_error_set(err, SVC_E_TOO_LARGE, "s3 PUT: %zu bytes is over 5 GiB", size),
		       NULL;
	svc_s3_put *op = calloc(1, sizeof(*op));
	size_t n = size >= SVC_S3_MULTIPART_MIN ? (size + SVC_S3_PART_SIZE - 1) / SVC_S3_PART_SIZE : 0;
	bool ok = op && strlen(key) < sizeof(op->key) && svc_s3_url(s3, key, op->url, sizeof(op->url));
	if (ok && n) {
		op->part_sha = calloc(n, sizeof(*op->part_sha));
		op->etag = calloc(n, sizeof(*op->etag));
		ok = op->part_sha && op->etag;
	}
	if (ok && copy && size)
		ok = (op->owned = malloc(size)) != NULL;
	if (!ok) {
		svc_s3_put_free(op);
		return svc_error_set(err, SVC_E_NOMEM, "s3 PUT %s: out of memory or key too long",
				     key),
		       NULL;
	}
	op->s3 = s3;
	memcpy(op->key, key, strlen(key) + 1);
	if (op->owned)
		memcpy(op->owned, data, size);
	op->data = op->owned ? op->owned : data;
	op->size = size;
	op->n_parts = n;
	base_buf_init(&op->xml, 1 << 20);
	base_sha256_hex(op->data, size, op->sha);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * SVC_S3_PART_SIZE;
		size_t len = size - off < SVC_S3_PART_SIZE ? size - off : SVC_S3_PART_SIZE;
		base_sha256_hex(op->data + off, len, op->part_sha[i]);
	}
	return op;
}

bool svc_s3_put_then_delete(svc_s3_put *op, const char *key)
{
	return svc_s3_url(op->s3, key, op->del_url, sizeof(op->del_url));
}

const char *svc_s3_put_key(const svc_s3_put *op)
{
	return op->key;
}

size_t svc_s3_put_size(const svc_s3_put *op)
{
	return op->size;
}

svc_errc svc_s3_put_result(const svc_s3_put *op, svc_error *err)
{
	if (err)
		*err = op->err;
	return op->err.code;
}

static void unlink_op(svc_s3_put *op)
{
	svc_s3 *s3 = op->s3;
	if (!op->prev && s3->ops != op)
		return;
	if (op->prev)
		op->prev->next = op->next;
	else
		s3->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
	op->prev = op->next = NULL;
}

void svc_s3_put_free(svc_s3_put *op)
{
	if (!op)
		return;
	if (op->req)
		svc_http_cancel(op->req);
	if (op->s3)
		unlink_op(op);
	free(op->part_sha);
	free(op->etag);
	free(op->owned);
	base_buf_deinit(&op->xml);
	free(op);
}

/* ---- one request ---- */

static size_t on_read(char *p, size_t size, size_t n, void *arg)
{
	svc_s3_put *op = arg;
	size_t want = size * n, left = op->up_len - op->up_off;
	size_t take = want < left ? want : left;
	memcpy(p, op->up + op->up_off, take);
	op->up_off += take;
	return take;
}

static int on_seek(void *arg, curl_off_t off, int origin)
{
	svc_s3_put *op = arg;
	if (origin != SEEK_SET || off < 0 || (size_t)off > op->up_len)
		return CURL_SEEKFUNC_CANTSEEK;
	op->up_off = (size_t)off;
	return CURL_SEEKFUNC_OK;
}

static bool add_header(struct curl_slist **h, const char *name, const char *value)
{
	char line[256];
	snprintf(line, sizeof(line), "%s: %s", name, value);
	struct curl_slist *t = curl_slist_append(*h, line);
	if (t)
		*h = t;
	return t != NULL;
}

static void upload_body(CURL *e, svc_s3_put *op, const uint8_t *p, size_t len)
{
	op->up = p;
	op->up_len = len;
	op->up_off = 0;
	curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(e, CURLOPT_READDATA, op);
	curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
	curl_easy_setopt(e, CURLOPT_SEEKDATA, op);
	curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
}

/* svc_http's prepare hook: the step's method, body and checksums, signed. */
static bool prepare(const void *arg, void *easy, void *headers)
{
	svc_s3_put *op = (svc_s3_put *)arg;
	CURL *e = easy;
	struct curl_slist **h = headers;
	bool ok = true;
	size_t off = op->part * SVC_S3_PART_SIZE;
	switch (op->st) {
	case ST_PUT:
		ok = add_header(h, "x-amz-meta-sha256", op->sha) &&
		     add_header(h, "x-amz-content-sha256", op->sha);
		upload_body(e, op, op->data, op->size);
		break;
	case ST_CREATE:
		ok = add_header(h, "x-amz-meta-sha256", op->sha);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		break;
	case ST_PART:
		ok = add_header(h, "x-amz-content-sha256", op->part_sha[op->part]);
		upload_body(e, op, op->data + off,
			    op->size - off < SVC_S3_PART_SIZE ? op->size - off : SVC_S3_PART_SIZE);
		break;
	case ST_COMPLETE:
		ok = add_header(h, "x-amz-content-sha256", op->xml_sha);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)op->xml.len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, (const char *)op->xml.data);
		break;
	case ST_HEAD:
		break;
	case ST_ABORT:
	case ST_DELETE:
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		break;
	}
	return ok && svc_s3_sign(op->s3, e, h);
}

static void step_done(svc_http_result *res, void *arg);

/* Starts the request of op->st; false (err set) when it could not start. */
static bool step(svc_s3_put *op)
{
	char url[sizeof(op->url) + 1700];
	int w = 0;
	if (op->st == ST_CREATE)
		w = snprintf(url, sizeof(url), "%s?uploads=", op->url);
	else if (op->st == ST_PART)
		w = snprintf(url, sizeof(url), "%s?partNumber=%zu&uploadId=%s", op->url, op->part + 1,
			     op->upload_id);
	else if (op->st == ST_COMPLETE || op->st == ST_ABORT)
		w = snprintf(url, sizeof(url), "%s?uploadId=%s", op->url, op->upload_id);
	else if (op->st == ST_DELETE)
		w = snprintf(url, sizeof(url), "%s", op->del_url);
	else
		w = snprintf(url, sizeof(url), "%s", op->url);
	svc_http_opts o = {
		.timeout_ms = op->s3->set.timeout_ms,
		.total_ms = op->s3->set.timeout_ms, /* per request: a slow S3 is a failure */
		.max_size = op->st == ST_HEAD ? SVC_S3_PUT_MAX : 1u << 20,
		.redirects = SVC_HTTP_REDIRECT_NONE,
		.no_body = op->st == ST_HEAD,
		.prepare = prepare,
		.prepare_arg = op,
	};
	if (w < 0 || (size_t)w >= sizeof(url) || !op->s3->http)
		return svc_error_set(&op->err, SVC_E_UPSTREAM, "s3 %s %s: cannot start",
				     step_names[op->st], op->s3->name),
		       false;
	op->req = svc_http_get(op->s3->http, url, &o, step_done, op);
	if (!op->req)
		return svc_error_set(&op->err, SVC_E_NOMEM, "s3 %s %s: cannot start a request",
				     step_names[op->st], op->s3->name),
		       false;
	return true;
}

/* ---- the chain ---- */

/* The text between <tag> and </tag> (printable, no markup or quotes) into
 * out; false when absent, empty or too long. */
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

static void finish(svc_s3_put *op)
{
	unlink_op(op);
	svc_s3_count_put(op->s3, op->err.code == SVC_OK, op->size);
	if (op->err.code == SVC_E_UNAUTHENTICATED || op->err.code == SVC_E_INVALID)
		op->err.code = SVC_E_UPSTREAM; /* to the uploader: S3 cannot take it now (503) */
	op->done(op, op->arg);
}

/* A failed step: the multipart upload aborted (its outcome ignored), then done. */
static void fail(svc_s3_put *op)
{
	if (op->upload_id[0] && op->st != ST_ABORT && op->st != ST_HEAD) {
		op->st = ST_ABORT;
		if (step(op))
			return;
	}
	finish(op);
}

/* The completion body, its checksum, then the request. */
static bool complete(svc_s3_put *op)
{
	base_buf_printf(&op->xml, "<CompleteMultipartUpload>");
	for (size_t i = 0; i < op->n_parts; i++)
		base_buf_printf(&op->xml, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>",
				i + 1, op->etag[i]);
	if (!base_buf_printf(&op->xml, "</CompleteMultipartUpload>") ||
	    !base_buf_append(&op->xml, "", 1))
		return svc_error_set(&op->err, SVC_E_NOMEM, "s3: out of memory"), false;
	op->xml.len--; /* the NUL stays after the body, not in it */
	base_sha256_hex(op->xml.data, op->xml.len, op->xml_sha);
	op->st = ST_COMPLETE;
	return step(op);
}

/* A 200 of the current step: on to the next one; false (err set) to fail. */
static bool next(svc_s3_put *op, const svc_http_result *res)
{
	char raw[512], body[8192];
	size_t bl = res->body && res->size < sizeof(body) ? res->size : res->body ? sizeof(body) - 1 : 0;
	memcpy(body, res->body ? (const char *)res->body : "", bl);
	body[bl] = '\0';
	switch (op->st) {
	case ST_PUT:
	case ST_COMPLETE:
		if (op->st == ST_COMPLETE && strstr(body, "<Error>"))
			return svc_error_set(&op->err, SVC_E_UPSTREAM, "s3 complete multipart %s: "
					     "an error in its answer", op->s3->name), false;
		op->st = ST_HEAD;
		return step(op);
	case ST_CREATE:
		if (!xml_value(body, "UploadId", raw, sizeof(raw)))
			return svc_error_set(&op->err, SVC_E_UPSTREAM,
					     "s3 create multipart %s: no UploadId", op->s3->name), false;
		encode_id(raw, op->upload_id, sizeof(op->upload_id));
		op->st = ST_PART;
		op->part = 0;
		return step(op);
	case ST_PART:
		if (!res->etag[0] || strchr(res->etag, '<') || strchr(res->etag, '&'))
			return svc_error_set(&op->err, SVC_E_UPSTREAM, "s3 PUT part %s: no ETag",
					     op->s3->name), false;
		memcpy(op->etag[op->part], res->etag, sizeof(op->etag[0]));
		if (++op->part < op->n_parts)
			return step(op);
		return complete(op);
	case ST_HEAD:
		if (res->declared_size != (int64_t)op->size || strcasecmp(res->sha256, op->sha))
			return svc_error_set(&op->err, SVC_E_UPSTREAM,
					     "s3 %s: the written object does not verify (size %lld, "
					     "want %zu)", op->s3->name, (long long)res->declared_size,
					     op->size), false;
		if (op->del_url[0]) {
			op->st = ST_DELETE;
			return step(op);
		}
		finish(op);
		return true;
	case ST_ABORT:
	case ST_DELETE:
		break;
	}
	finish(op);
	return true;
}

static void step_done(svc_http_result *res, void *arg)
{
	svc_s3_put *op = arg;
	op->req = NULL;
	if (res->failure == SVC_HTTP_OK)
		svc_s3_note_status(op->s3, res->status);
	if (op->st == ST_ABORT)
		return finish(op);
	if (op->st == ST_DELETE && res->failure == SVC_HTTP_OK &&
	    (res->status == 204 || res->status == 200 || res->status == 404))
		return finish(op);
	if (res->failure != SVC_HTTP_OK) {
		svc_error_set(&op->err, SVC_E_UPSTREAM, "s3 %s %s at %s: %s", step_names[op->st],
			      op->s3->name, op->s3->set.endpoint, res->error);
		return fail(op);
	}
	if (res->status != 200) {
		svc_error_set(&op->err,
			      res->status == 401 || res->status == 403 ? SVC_E_UNAUTHENTICATED
								      : SVC_E_UPSTREAM,
			      "s3 %s %s at %s: HTTP %ld", step_names[op->st], op->s3->name,
			      op->s3->set.endpoint, res->status);
		return fail(op);
	}
	if (!next(op, res))
		fail(op);
}

bool svc_s3_put_start(svc_s3_put *op, svc_s3_put_done_fn done, void *arg)
{
	svc_s3 *s3 = op->s3;
	op->done = done;
	op->arg = arg;
	memset(&op->err, 0, sizeof(op->err));
	op->upload_id[0] = '\0';
	op->part = 0;
	op->xml.len = 0;
	op->st = op->n_parts ? ST_CREATE : ST_PUT;
	if (!step(op))
		return false;
	unlink_op(op);
	op->next = s3->ops;
	if (s3->ops)
		s3->ops->prev = op;
	s3->ops = op;
	return true;
}

void svc_s3_put_stop_all(svc_s3 *s3)
{
	/* Writes in flight stop (their requests go with the multi handle); no
	 * callback: their owners free them (svc_upload_destroy, the queue). */
	while (s3->ops) {
		svc_s3_put *op = s3->ops;
		if (op->req)
			svc_http_cancel(op->req);
		op->req = NULL;
		unlink_op(op);
		op->s3 = NULL;
	}
}
