// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod: the debuginfod routes (svc_debuginfod.h): parsing and
 * validation of the path, the fetch, the reply and its headers, the counters.
 */
#include "service/debuginfod/svc_debuginfod.h"
#include "service/core/svc_build_id.h"
#include "service/core/svc_identity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_expo.h"
#include "service/core/svc_pool.h"
#include "service/debuginfod/svc_debuginfod_impl.h"
#include "service/resolve/svc_packages.h"
#include "source/src_package_format.h"
#include "source/src_source.h"
#include "storage/stor_catalog.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_inflate.h"

static const char *const kind_names[K_COUNT] = {"debuginfo", "executable", "section", "source",
						 "status",    "invalid"};

typedef struct dreq {
	svc_debuginfod *d;
	struct evhttp_request *req;
	int kind;
	bool head;
	uint64_t max_size;   /* X-DEBUGINFOD-MAXSIZE; UINT64_MAX: none */
	char hex[SYM_BUILD_ID_HEX_MAX];
	char section[SVC_DEBUGINFOD_SECTION_MAX + 1];
	sym_build_id id;
	/* filled on a worker (load), sent on the loop (loaded) */
	int status;
	svc_dbg_body *shared; /* the file as another reply sends it now (a reference) */
	bool stale;          /* ... but the store holds another file now */
	bool loader;         /* this request reads shared for the others */
	struct dreq *next_waiter;
	stor_blob blob;      /* the file, pinned by RocksDB (or a view of shared's) */
	stor_meta meta;
	void *image;         /* section requests: the inflated image, or NULL */
	const void *sec;     /* section requests: the bytes, in blob or image */
	size_t size;         /* bytes of the answer */
	void *exe;           /* an executable read from a local dir, or NULL */
	/* the stored file came from a package: which, and its member ("": not) */
	char archive[STOR_CAT_PATH_MAX];
	char member[STOR_CAT_PATH_MAX + 1];
} dreq;

svc_debuginfod *svc_debuginfod_create(const svc_debuginfod_options *o)
{
	svc_debuginfod *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = *o;
	d->sources = calloc(o->n_debug_dirs + 1, sizeof(*d->sources));
	if (!d->sources)
		goto fail;
	for (; d->n_sources < o->n_debug_dirs; d->n_sources++) {
		sym_error err;
		if (!(d->sources[d->n_sources] = src_local_create(o->debug_dirs[d->n_sources], &err)))
			goto fail;
	}
	return d;
fail:
	svc_debuginfod_destroy(d);
	return NULL;
}

void svc_debuginfod_destroy(svc_debuginfod *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_sources; i++)
		src_destroy(d->sources[i]);
	free(d->sources);
	free(d);
}

static void count(svc_debuginfod *d, int kind, int code)
{
	for (int i = 0; i < SVC_DBG_MAX_CODES; i++) {
		if (d->counts[kind][i].code == code || d->counts[kind][i].code == 0) {
			d->counts[kind][i].code = code;
			d->counts[kind][i].n++;
			return;
		}
	}
}

void svc_debuginfod_render_metrics(const svc_debuginfod *d, base_buf *out)
{
	char labels[96];
	base_expo_family(out, "symbolizer_debuginfod_requests_total", "counter",
			 "debuginfod requests (/buildid/...) by kind and status code.");
	for (int k = 0; k < K_COUNT; k++) {
		for (int i = 0; i < SVC_DBG_MAX_CODES && d->counts[k][i].code; i++) {
			snprintf(labels, sizeof(labels), "kind=\"%s\",code=\"%d\"", kind_names[k],
				 d->counts[k][i].code);
			base_expo_u64(out, "symbolizer_debuginfod_requests_total", labels,
				      d->counts[k][i].n);
		}
	}
	base_expo_family(out, "symbolizer_debuginfod_bytes_total", "counter",
			 "Body bytes of debuginfod answers.");
	base_expo_u64(out, "symbolizer_debuginfod_bytes_total", "", d->bytes);
}

/* ---- replies ---- */

/* libevent writes at most 16 KB per call on a connection: a file body goes
 * out in writes of up to this much, far fewer system calls (a 25 MB file:
 * 25 instead of 1,600). */
#define SVC_DEBUGINFOD_WRITE_CHUNK (1u << 20)

void svc_dbg_reply(svc_debuginfod *d, struct evhttp_request *req, int kind, int status,
		   struct evbuffer *body)
{
	count(d, kind, status);
	struct evhttp_connection *conn = evhttp_request_get_connection(req);
	struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
	if (bev && body && evbuffer_get_length(body) > SVC_DEBUGINFOD_WRITE_CHUNK / 16)
		bufferevent_set_max_single_write(bev, SVC_DEBUGINFOD_WRITE_CHUNK);
	d->o.reply(d->o.arg, req, status, body);
}

void svc_dbg_reply_error(svc_debuginfod *d, struct evhttp_request *req, int kind, int status,
			 const char *text)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *b = evbuffer_new();
	if (!b)
		return evhttp_send_error(req, 500, NULL);
	if (status == 503)
		evhttp_add_header(h, "Retry-After", "5");
	evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8");
	if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evbuffer_add_printf(b, "%s\n", text);
	} else {  /* HEAD: the headers GET would send, its length included */
		char len[24];
		snprintf(len, sizeof(len), "%zu", strlen(text) + 1);
		evhttp_add_header(h, "Content-Length", len);
	}
	svc_dbg_reply(d, req, kind, status, b);
	evbuffer_free(b);
}

static void free_image(const void *data, size_t len, void *arg)
{
	(void)data, (void)len;
	free(arg);
}

void svc_dbg_last_modified(struct evhttp_request *req, int64_t unix_ms)
{
	char v[64];
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	if (gmtime_r(&t, &tm) && strftime(v, sizeof(v), "%a, %d %b %Y %H:%M:%S GMT", &tm))
		evhttp_add_header(evhttp_request_get_output_headers(req), "Last-Modified", v);
}

/* The headers elfutils' debuginfod sends with a file. */
static void file_headers(struct evhttp_request *req, const dreq *r, uint64_t size,
			 int64_t fetch_ms)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	char v[320];
	snprintf(v, sizeof(v), "%" PRIu64, size);
	evhttp_add_header(h, "Content-Length", v);
	evhttp_add_header(h, "X-DEBUGINFOD-SIZE", v);
	if (r->kind == K_SECTION)
		snprintf(v, sizeof(v), "%s-%s", r->hex, r->section);
	else
		snprintf(v, sizeof(v), "%s%s", r->hex, r->kind == K_DEBUGINFO ? ".debug" : "");
	/* from a package: the member's path and the package, as elfutils says it */
	evhttp_add_header(h, "X-DEBUGINFOD-FILE", r->archive[0] && !r->exe ? r->member : v);
	if (r->archive[0] && !r->exe)
		evhttp_add_header(h, "X-DEBUGINFOD-ARCHIVE", r->archive);
	svc_dbg_last_modified(req, fetch_ms);
	evhttp_add_header(h, "Content-Type", "application/octet-stream");
	evhttp_add_header(h, "Accept-Ranges", "bytes");
}

/* Largest bounded range cut out of a body (its bytes are copied); a larger one
 * is answered with the whole file. A range to the end costs no copy. */
#define SVC_DEBUGINFOD_RANGE_COPY_MAX (64u << 20)

/*
 * The Range of r's request applied to its body: 206 with *body cut to the
 * range and *len its length, 200 for the whole file (no Range, one not read,
 * If-Range: the validator is not checked, so the whole file is the safe
 * answer), 416 past the end, 500 out of memory.
 */
static int ranged(dreq *r, struct evbuffer **body, uint64_t *len)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(r->req);
	const char *range = evhttp_find_header(in, "Range");
	uint64_t first = 0, last = 0;
	*len = r->size;
	if (!range || r->head || evhttp_find_header(in, "If-Range"))
		return 200;
	svc_dbg_range rc = svc_dbg_range_parse(range, r->size, &first, &last);
	if (rc == SVC_DBG_RANGE_UNSATISFIABLE)
		return 416;
	uint64_t n = last - first + 1, rest = r->size - first;
	if (rc != SVC_DBG_RANGE_OK || (n < rest && n > SVC_DEBUGINFOD_RANGE_COPY_MAX))
		return 200;
	if (evbuffer_drain(*body, first) != 0)
		return 500;
	if (n < rest) {
		struct evbuffer *part = evbuffer_new();
		if (!part || evbuffer_remove_buffer(*body, part, n) != (int)n) {
			if (part)
				evbuffer_free(part);
			return 500;
		}
		evbuffer_free(*body);
		*body = part;
	}
	struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
	char v[96];
	snprintf(v, sizeof(v), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, r->size);
	evhttp_add_header(h, "Content-Range", v);
	snprintf(v, sizeof(v), "%" PRIu64, n);
	evhttp_remove_header(h, "Content-Length");
	evhttp_add_header(h, "Content-Length", v);
	*len = n;
	return 206;
}

/* Section NAME of the file, inflated when compressed (on a worker). */
static int section_find(dreq *r)
{
	sym_error err;
	if (sym_inflate_image(r->blob.data, r->blob.size, r->d->o.max_section_bytes, &r->image,
			      &r->size, &err) != SYM_OK)
		return 404;
	const void *base = r->image ? r->image : r->blob.data;
	size_t base_size = r->image ? r->size : r->blob.size;
	if (!svc_debuginfod_find_section(base, base_size, r->section, &r->sec, &r->size))
		return 404;
	return r->size > r->max_size ? 406 : 200;
}

/* The section's bytes, by reference to the inflated image when there is one
 * (freed once written), else copied out of the stored file. */
static int section_body(dreq *r, struct evbuffer *body)
{
	if (r->head)
		return 200;
	if (!r->image)
		return evbuffer_add(body, r->sec, r->size) == 0 ? 200 : 500;
	if (evbuffer_add_reference(body, r->sec, r->size, free_image, r->image) != 0)
		return 500;
	r->image = NULL;  /* now owned by the evbuffer */
	return 200;
}

/* A whole file, by reference to one buffer shared by every reply sending
 * it at once; released after the last one is written. */
static int file_body(dreq *r, struct evbuffer *body)
{
	if (r->head)
		return 200;
	if (r->exe) {
		if (evbuffer_add_reference(body, r->exe, r->size, free_image, r->exe) != 0)
			return 500;
		r->exe = NULL;  /* freed once written */
		return 200;
	}
	svc_dbg_body *b = r->shared;
	if (!b && !(b = svc_dbg_body_add(&r->d->bodies, &r->id, &r->blob, &r->meta)))
		return 500;
	r->shared = NULL;  /* the reference goes to the evbuffer */
	if (evbuffer_add_reference(body, b->blob.data, b->blob.size, svc_dbg_body_written, b) != 0) {
		svc_dbg_body_put(b);
		return 500;
	}
	return 200;
}

/* An executable: what the store holds when it is one, or an unstripped file
 * (a debug file with code bytes is the executable too). Never for /debuginfo. */
static bool kind_fits(const dreq *r, const stor_blob *blob, const stor_meta *meta)
{
	if (r->kind == K_DEBUGINFO)
		return meta->kind == STOR_KIND_DEBUGINFO;
	if (r->kind == K_SECTION || meta->kind == STOR_KIND_EXECUTABLE)
		return true;
	sym_elf_info info;
	sym_error err;
	return sym_elf_probe(blob->data, blob->size, &info, &err) == SYM_OK && info.has_text;
}

static void dreq_free(dreq *r)
{
	stor_blob_release(&r->blob);
	svc_dbg_body_put(r->shared);
	free(r->image);
	free(r->exe);
	stor_unpin(r->d->o.store, SVC_STORE_KEY(&r->id));
	free(r);
}

/* /executable when the store holds only a debug file: the local dirs' (then
 * the package catalogue's) executable with code bytes, read for this request
 * (on a worker). */
static bool local_executable(dreq *r)
{
	src_source *pkgs = r->d->o.packages ? svc_packages_source(r->d->o.packages) : NULL;
	for (size_t i = 0; i < r->d->n_sources + (pkgs != NULL); i++) {
		src_file f;
		sym_error err;
		src_source *src = i < r->d->n_sources ? r->d->sources[i] : pkgs;
		if (src_find(src, &r->id, SRC_KIND_EXECUTABLE, r->max_size, &f, &err) != SRC_FOUND)
			continue;
		if (f.info.has_text) {
			r->exe = f.data;
			r->size = f.size;
			return true;
		}
		src_file_release(&f);
	}
	return false;
}

/* The package and member the stored file came from, when it came from one
 * the catalogue still lists with this build ID (on a worker). */
static void find_archive(dreq *r)
{
	if (!src_pkg_format_for_path(r->meta.source))
		return;
	stor_cat_entry *e = malloc(sizeof(*e));
	stor_error err;
	if (e && stor_cat_lookup(r->d->o.store, SVC_STORE_KEY(&r->id), r->meta.kind, e, &err) ==
			 STOR_OK &&
	    !strcmp(e->package, r->meta.source)) {
		memcpy(r->archive, e->package, sizeof(r->archive));
		snprintf(r->member, sizeof(r->member), "/%s", e->member);
	}
	free(e);
}

/* On a worker: the store read (a RocksDB blob read and its zstd
 * decompression), the ELF checks and the section's inflation. */
static void load(void *job)
{
	dreq *r = job;
	stor_error serr;
	r->status = 404;
	if (r->shared && !r->loader) {
		/* the same file as the one in flight? (a fetch may have replaced it) */
		stor_meta now;
		r->stale = stor_get_meta(r->d->o.store, SVC_STORE_KEY(&r->id), &now, &serr) !=
				   STOR_OK ||
			   now.fetch_time != r->shared->meta.fetch_time ||
			   now.size != r->shared->meta.size || now.kind != r->shared->meta.kind;
	}
	if (r->shared && !r->loader && !r->stale) {
		r->blob = r->shared->blob;
		r->blob.handle_ = NULL;  /* a view: released with the body */
		r->meta = r->shared->meta;
	} else if (stor_get_file(r->d->o.store, SVC_STORE_KEY(&r->id), &r->blob, &r->meta,
				 &serr) != STOR_OK) {
		return;
	}
	r->size = r->blob.size;
	find_archive(r);
	if (!kind_fits(r, &r->blob, &r->meta) && !(r->kind == K_EXECUTABLE && local_executable(r)))
		return;
	if (r->kind == K_SECTION)
		r->status = section_find(r);
	else
		r->status = r->size > r->max_size ? 406 : 200;
}

static void start_load(dreq *r);

/* On the loop, for the request that read a shared body: the file goes to the
 * body (r keeps a view) and the requests waiting for it go on. */
static void hand_over(dreq *r)
{
	svc_dbg_body *b = r->shared;
	r->loader = false;
	b->loading = false;
	if (r->blob.handle_) {
		b->blob = r->blob;
		b->meta = r->meta;
		r->blob.handle_ = NULL;
	} else {
		svc_dbg_body_unlink(b);  /* nothing read: the waiters read for themselves */
	}
	dreq *w = b->waiters;
	b->waiters = NULL;
	while (w) {
		dreq *next = w->next_waiter;
		if (!b->blob.data) {
			svc_dbg_body_put(w->shared);
			w->shared = NULL;
		}
		start_load(w);
		w = next;
	}
}

/* On the loop: the reply. */
static void loaded(void *job, bool cancelled)
{
	dreq *r = job;
	svc_debuginfod *d = r->d;
	if (r->loader)
		hand_over(r);
	if (r->stale) {
		svc_dbg_body_put(r->shared);
		r->shared = NULL;
	}
	struct evbuffer *body = evbuffer_new();
	int status = cancelled ? 503 : !body ? 500 : r->status;
	if (status == 200)
		status = r->kind == K_SECTION ? section_body(r, body) : file_body(r, body);
	if (status != 200) {
		if (body)
			evbuffer_free(body);
		svc_dbg_reply_error(d, r->req, r->kind, status,
			    status == 406 ? "larger than X-DEBUGINFOD-MAXSIZE"
			    : status == 503 ? "shutting down" : "not found");
		return dreq_free(r);
	}
	file_headers(r->req, r, r->size, r->meta.fetch_time);
	uint64_t len;
	status = ranged(r, &body, &len);
	if (status == 416 || status == 500) {
		char v[48];
		snprintf(v, sizeof(v), "bytes */%" PRIu64, r->size);
		struct evkeyvalq *h = evhttp_request_get_output_headers(r->req);
		evhttp_remove_header(h, "Content-Length");
		evhttp_remove_header(h, "Content-Type");
		if (status == 416)
			evhttp_add_header(h, "Content-Range", v);
		evbuffer_free(body);
		svc_dbg_reply_error(d, r->req, r->kind, status,
				    status == 416 ? "range not satisfiable" : "out of memory");
		return dreq_free(r);
	}
	if (!r->head)
		d->bytes += len;
	svc_dbg_reply(d, r->req, r->kind, status, body);
	evbuffer_free(body);
	dreq_free(r);
}

static void start_load(dreq *r)
{
	if (svc_pool_submit(r->d->o.pool, r, load, loaded))
		return;
	if (r->loader)
		hand_over(r);
	svc_dbg_reply_error(r->d, r->req, r->kind, 503, "busy; try again");
	dreq_free(r);
}

static void fetched(const svc_fetch_result *res, void *arg)
{
	dreq *r = arg;
	switch (res->status) {
	case SVC_FETCH_OK:
		/* kept from eviction until the reply is handed to evhttp */
		stor_pin(r->d->o.store, SVC_STORE_KEY(&r->id));
		r->shared = svc_dbg_body_find(&r->d->bodies, &r->id);
		if (r->shared && r->shared->loading) {
			r->next_waiter = r->shared->waiters;  /* hand_over starts it */
			r->shared->waiters = r;
			return;
		}
		if (!r->shared && (r->shared = svc_dbg_body_start(&r->d->bodies, &r->id)))
			r->loader = true;
		return start_load(r);
	case SVC_FETCH_ERROR:
		svc_dbg_reply_error(r->d, r->req, r->kind, 503, "upstream trouble; try again");
		break;
	case SVC_FETCH_PENDING:
		svc_dbg_reply_error(r->d, r->req, r->kind, 503,
				    "a package scan under way may hold it; try again");
		break;
	default:
		svc_dbg_reply_error(r->d, r->req, r->kind, 404, "not found");
		break;
	}
	free(r);
}

static uint64_t header_u64(struct evhttp_request *req, const char *name, uint64_t dflt)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), name);
	if (!v || *v < '0' || *v > '9')
		return dflt;
	return strtoull(v, NULL, 10);
}

/* GET /buildid/ID/status: answered now, from memory and the store's metadata. */
static bool handle_status(svc_debuginfod *d, struct evhttp_request *req, const sym_build_id *id)
{
	if (!d->o.status) {
		svc_dbg_reply_error(d, req, K_STATUS, 404, "no status here");
		return true;
	}
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(req, 500, NULL);
		return true;
	}
	int code = d->o.status(d->o.status_arg, id, b);
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "Cache-Control", "no-store");
	svc_dbg_reply(d, req, K_STATUS, code, b);
	evbuffer_free(b);
	return true;
}

bool svc_debuginfod_handle(svc_debuginfod *d, struct evhttp_request *req, const char *path)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	if (strncmp(path, "/buildid/", 9) != 0 ||
	    (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD))
		return false;
	dreq *r = calloc(1, sizeof(*r));
	if (!r) {
		evhttp_send_error(req, 500, NULL);
		return true;
	}
	*r = (dreq){.d = d, .req = req, .head = cmd == EVHTTP_REQ_HEAD};
	char arg[SVC_DEBUGINFOD_SOURCE_MAX + 1];
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	if (!svc_debuginfod_parse_path(path + 9, r->hex, &r->id, &r->kind, arg) ||
	    !svc_debuginfod_query_kind(uri ? evhttp_uri_get_query(uri) : NULL, r->hex, &r->id)) {
		free(r);
		svc_dbg_reply_error(d, req, K_INVALID, 400, "bad build ID or path");
		return true;
	}
	/* ?kind=: the file stored under another of its identities (svc_identity.h) */
	svc_identity_canonical(d->o.store, &r->id, &r->id);
	if (r->kind == K_STATUS) {
		sym_build_id id = r->id;
		free(r);
		return handle_status(d, req, &id);
	}
	r->max_size = header_u64(req, "X-DEBUGINFOD-MAXSIZE", UINT64_MAX);
	if (r->max_size == 0)
		r->max_size = UINT64_MAX;
	bool far = header_u64(req, "X-Symbolizer-Hops", 0) >= d->o.max_hops;
	bool from_peer = evhttp_find_header(evhttp_request_get_input_headers(req),
					    "X-Symbolizer-Peer") != NULL;
	svc_fetch_policy policy = far	     ? SVC_FETCH_POLICY_LOCAL
				  : from_peer ? SVC_FETCH_POLICY_OWNER
					      : SVC_FETCH_POLICY_FULL;
	if (r->kind == K_SOURCE) {
		sym_build_id id = r->id;
		uint64_t max_size = r->max_size;
		free(r);
		svc_debuginfod_source(d, req, &id, arg, max_size, far ? NULL : d->o.fetcher, policy);
		return true;
	}
	if (r->kind == K_SECTION)
		memcpy(r->section, arg, strlen(arg) + 1);  /* parse checked its length */
	svc_fetch_kind fk = r->kind == K_DEBUGINFO ? SVC_FETCH_DEBUGINFO : SVC_FETCH_SYMBOLS;
	svc_errc e = svc_fetch_start(d->o.fetcher, &r->id, fk, policy, fetched, r);
	if (e != SVC_OK) {
		int kind = r->kind;
		free(r);
		svc_dbg_reply_error(d, req, kind, 503, "cannot fetch now");
	}
	return true;
}
