// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload: the PUT /buildid/ID/{debuginfo,executable} route on the loop
 * (svc_upload.h): who may upload, the path, the body's size, one upload per
 * build ID at a time (the others queue behind it), the worker's check and
 * write (svc_upload_store.c), then the old index forgotten, the dwz
 * supplementary file looked for, the answer and the counters.
 */
#include "service/upload/svc_upload_impl.h"
#include "service/fetch/svc_s3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_expo.h"
#include "service/core/svc_build_id.h"

static const char *const result_names[UP_RESULTS] = {
	"stored", "replaced", "unchanged", "conflict", "disabled", "remote", "unauthorized",
	"bad_path", "bad_elf", "wrong_build_id", "too_large", "length_required", "no_space",
	"error",
};

static const char *const should_names[SHOULD_ANSWERS] = {
	"unspecified", "upload", "present", "pending", "invalid", "too_large",
};

svc_upload *svc_upload_create(const svc_upload_options *o, svc_error *err)
{
	svc_upload *u = calloc(1, sizeof(*u));
	if (!u) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return NULL;
	}
	u->o = *o;
	u->o.token_file = NULL;  /* not kept: the token is */
	u->o.trusted_proxies = NULL;
	if (!svc_proxies_parse(&u->proxies, o->trusted_proxies, err)) {
		free(u);
		return NULL;
	}
	if (o->token_file && o->token_file[0] && !svc_upload_read_token(u, o->token_file, err)) {
		free(u);
		return NULL;
	}
	return u;
}

void svc_upload_destroy(svc_upload *u)
{
	if (!u)
		return;
	/* Uploads left waiting for an S3 write the fetcher's end stopped (and
	 * those queued behind them): their requests went with evhttp. */
	for (upload *a = u->active, *na; a; a = na) {
		na = a->next_active;
		for (upload *p = a, *np; p; p = np) {
			np = p->next_same;
			if (p->reserved)
				svc_file_release(&p->slot);
			svc_s3_put_free(p->s3op);
			free(p);
		}
	}
	if (u->token) {
		memset(u->token, 0, u->token_len);
		free(u->token);
	}
	free(u);
}

unsigned svc_upload_in_flight(const svc_upload *u)
{
	return u ? u->in_flight : 0;
}

bool svc_upload_may_send(const svc_upload *u, const char *peer, const char *authorization)
{
	return svc_upload_enabled(u) && svc_upload_peer_allowed(peer, u->o.allow_remote) &&
	       svc_upload_token_ok(authorization, u->token, u->token_len);
}

bool svc_upload_enabled(const svc_upload *u)
{
	return u && u->token;
}

void svc_upload_render_metrics(const svc_upload *u, base_buf *out)
{
	char labels[64];
	base_expo_family(out, "symbolizer_uploads_total", "counter",
			 "PUT /buildid/ID/... uploads by result (stored, replaced, unchanged, or why "
			 "refused).");
	for (int i = 0; i < UP_RESULTS; i++) {
		snprintf(labels, sizeof(labels), "result=\"%s\"", result_names[i]);
		base_expo_u64(out, "symbolizer_uploads_total", labels, u->results[i]);
	}
	base_expo_family(out, "symbolizer_upload_bytes_total", "counter",
			 "Bytes of uploaded files stored.");
	base_expo_u64(out, "symbolizer_upload_bytes_total", "", u->bytes);
	base_expo_family(out, "symbolizer_should_upload_total", "counter",
			 "ShouldUpload answers per build ID.");
	for (int i = 1; i < SHOULD_ANSWERS; i++) {
		snprintf(labels, sizeof(labels), "answer=\"%s\"", should_names[i]);
		base_expo_u64(out, "symbolizer_should_upload_total", labels, u->should[i]);
	}
}

/* ---- answers ---- */

static void reply(svc_upload *u, struct evhttp_request *req, int result, int status,
		  const char *text)
{
	u->results[result]++;
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8");
	evhttp_add_header(h, "X-Symbolizer-Upload", result_names[result]);
	if (status == 401)
		evhttp_add_header(h, "WWW-Authenticate", "Bearer realm=\"symbolizer\"");
	if (status == 503)
		evhttp_add_header(h, "Retry-After", "5");
	evbuffer_add_printf(b, "%s\n", text);
	u->o.reply(u->o.arg, req, status, b);
	evbuffer_free(b);
}

static void start(upload *p);

/* Answers p, frees it, and starts the next upload of its build ID. */
static void finish(upload *p)
{
	svc_upload *u = p->u;
	u->in_flight--;
	reply(u, p->req, p->result, p->status, p->text);
	for (upload **a = &u->active; *a; a = &(*a)->next_active) {
		if (*a != p)
			continue;
		upload *next = p->next_same;
		if (next) {
			next->next_active = p->next_active;
			*a = next;
		} else {
			*a = p->next_active;
		}
		free(p);
		if (next)
			start(next);
		return;
	}
	free(p);
}

static void alt_fetched(const svc_fetch_result *res, void *arg)
{
	upload *p = arg;
	char alt[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&p->alt_id, alt);
	size_t n = strlen(p->text);
	bool found = res->status == SVC_FETCH_OK && res->kind == STOR_KIND_DEBUGINFO;
	evhttp_add_header(evhttp_request_get_output_headers(p->req), "X-Symbolizer-Alt",
			  found ? "found" : "missing");
	if (found)
		snprintf(p->text + n, sizeof(p->text) - n, "; dwz supplementary file %s found", alt);
	else
		snprintf(p->text + n, sizeof(p->text) - n,
			 "; dwz supplementary file %s not found anywhere (%s): upload it with "
			 "PUT /buildid/%s/debuginfo",
			 alt, svc_fetch_status_name(res->status), alt);
	finish(p);
}

static void stored(void *job, bool cancelled);

/* The S3 write's callback (the loop): its result to the commit job. */
static void s3_written(struct svc_s3_put *op, void *arg)
{
	upload *p = arg;
	svc_error err = {0};
	p->s3_rc = svc_s3_put_result(op, &err);
	snprintf(p->s3_err, sizeof(p->s3_err), "%s", err.msg);
	svc_s3_put_free(op);
	p->s3op = NULL;
	if (svc_pool_submit(p->u->o.pool, p, svc_upload_commit_work, stored))
		return;
	svc_file_release(&p->slot);
	p->reserved = false;
	p->result = UP_ERROR;
	p->status = 503;
	snprintf(p->text, sizeof(p->text), "busy; try again");
	finish(p);
}

static void stored(void *job, bool cancelled)
{
	upload *p = job;
	svc_upload *u = p->u;
	if (cancelled && p->reserved) {
		svc_file_release(&p->slot);
		p->reserved = false;
	}
	if (p->s3op && !cancelled) {
		/* Decided and reserved: the S3 write on the loop's multi handle; the
		 * answer waits for its callback (no worker blocks on S3). */
		if (!svc_s3_put_start(p->s3op, s3_written, p))
			s3_written(p->s3op, p);
		return;
	}
	if (cancelled) {
		p->result = UP_ERROR;
		p->status = 503;
		snprintf(p->text, sizeof(p->text), "shutting down");
		return finish(p);
	}
	if (p->result == UP_STORED || p->result == UP_REPLACED) {
		u->bytes += p->size;
		u->o.replaced(u->o.arg, &p->store_id);
		if (p->has_alt && svc_fetch_start(u->o.fetcher, &p->alt_id, SVC_FETCH_DEBUGINFO,
						  SVC_FETCH_POLICY_FULL, alt_fetched, p) == SVC_OK)
			return;
	}
	finish(p);
}

static void start(upload *p)
{
	if (svc_pool_submit(p->u->o.pool, p, svc_upload_store_work, stored))
		return;
	p->result = UP_ERROR;
	p->status = 503;
	snprintf(p->text, sizeof(p->text), "busy; try again");
	finish(p);
}

/* ---- the request ---- */

/* "ID/debuginfo" or "ID/executable" into p, ID of the kind ?kind= names
 * (gnu or htlhash: hex); false when malformed. */
static bool parse_path(upload *p, const char *rest, sym_id_kind kind)
{
	const char *slash = strchr(rest, '/');
	if (!slash || kind == SYM_ID_GO ||
	    !svc_build_id_parse(rest, (size_t)(slash - rest), &p->id) ||
	    (kind != SYM_ID_GNU &&
	     !sym_build_id_from_hex_kind(kind, rest, (size_t)(slash - rest), &p->id)))
		return false;
	sym_build_id_to_hex(&p->id, p->hex);
	if (!strcmp(slash + 1, "debuginfo"))
		p->want_debuginfo = true;
	else if (strcmp(slash + 1, "executable") != 0)
		return false;
	return true;
}

/* ?force=1 and ?kind=NAME (the ID's identity kind; gnu when absent). False
 * for a kind that is not one. */
static bool query_opts(const char *query, bool *force, sym_id_kind *kind)
{
	struct evkeyvalq q;
	TAILQ_INIT(&q);
	*force = false;
	*kind = SYM_ID_GNU;
	if (!query || evhttp_parse_query_str(query, &q) != 0)
		return true;
	const char *v = evhttp_find_header(&q, "force");
	*force = v && (!strcmp(v, "1") || !strcmp(v, "true"));
	const char *k = evhttp_find_header(&q, "kind");
	bool ok = !k || sym_id_kind_parse(k, strlen(k), kind);
	evhttp_clear_headers(&q);
	return ok;
}

/* Who may upload; false when refused (answered). */
static bool admitted(svc_upload *u, struct evhttp_request *req)
{
	if (!u->token) {
		reply(u, req, UP_DISABLED, 403,
		      "uploads are disabled: the daemon was started without --upload-token-file");
		return false;
	}
	char *addr = NULL;
	ev_uint16_t port = 0;
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	if (conn)
		evhttp_connection_get_peer(conn, &addr, &port);
	/* Behind a trusted proxy, the client it names (svc_upload_proxy.c). */
	char client[64];
	const char *xff = evhttp_find_header(evhttp_request_get_input_headers(req),
					     "X-Forwarded-For");
	bool known = svc_proxies_client(&u->proxies, addr, xff, client, sizeof(client));
	if (!svc_upload_peer_allowed(known ? client : NULL, u->o.allow_remote)) {
		reply(u, req, UP_REMOTE, 403,
		      "uploads are accepted over loopback only (there is no TLS); "
		      "the operator may allow other peers with --upload-allow-remote 1");
		return false;
	}
	const char *auth =
		evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	if (!svc_upload_token_ok(auth, u->token, u->token_len)) {
		reply(u, req, UP_UNAUTHORIZED, 401,
		      auth ? "wrong token" : "an upload needs Authorization: Bearer TOKEN");
		return false;
	}
	return true;
}

/* The body's buffer; NULL when refused (answered). */
static struct evbuffer *body(svc_upload *u, struct evhttp_request *req, size_t *size)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq *h = evhttp_request_get_input_headers(req);
	*size = evbuffer_get_length(in);
	if (*size > u->o.max_upload_bytes) {
		char t[128];
		snprintf(t, sizeof(t), "the body is over --max-upload-bytes (%llu bytes)",
			 (unsigned long long)u->o.max_upload_bytes);
		reply(u, req, UP_TOO_LARGE, 413, t);
		return NULL;
	}
	if (*size == 0) {
		bool sized = evhttp_find_header(h, "Content-Length") ||
			     evhttp_find_header(h, "Transfer-Encoding");
		reply(u, req, sized ? UP_BAD_ELF : UP_NO_LENGTH, sized ? 400 : 411,
		      sized ? "empty body: the body must be the ELF file"
			    : "Content-Length required (or a chunked body)");
		return NULL;
	}
	return in;
}

bool svc_upload_handle(svc_upload *u, struct evhttp_request *req, const char *path,
		       const char *query)
{
	if (evhttp_request_get_command(req) != EVHTTP_REQ_PUT || strncmp(path, "/buildid/", 9) != 0)
		return false;
	if (!admitted(u, req))
		return true;
	upload *p = calloc(1, sizeof(*p));
	if (!p) {
		reply(u, req, UP_ERROR, 500, "out of memory");
		return true;
	}
	*p = (upload){.u = u, .req = req};
	sym_id_kind kind;
	if (!query_opts(query, &p->force, &kind) || !parse_path(p, path + 9, kind)) {
		free(p);
		reply(u, req, UP_BAD_PATH, 400,
		      "expected PUT /buildid/ID/debuginfo or /buildid/ID/executable with ID "
		      "lowercase hex, even, 2..128 digits (?kind=htlhash: 32 digits, the file "
		      "hash; a Go build ID is not an upload path: use either of those)");
		return true;
	}
	if (!(p->in = body(u, req, &p->size))) {
		free(p);
		return true;
	}
	u->in_flight++;
	for (upload *a = u->active; a; a = a->next_active) {
		if (!sym_build_id_equal(&a->id, &p->id))
			continue;
		upload **tail = &a->next_same;  /* after the ones already waiting */
		while (*tail)
			tail = &(*tail)->next_same;
		*tail = p;
		return true;
	}
	p->next_active = u->active;
	u->active = p;
	start(p);
	return true;
}
