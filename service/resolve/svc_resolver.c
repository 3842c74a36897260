/*
 * svc_resolver: single-flight resolution of build IDs to loaded indexes
 * (svc_resolver.h). A flight walks: LOAD (worker: index from the store) ->
 * FETCH (fetcher: debug info into the store) -> BUILD (worker: index build,
 * written back to the store) -> done, when every waiter gets the result.
 */
#include "service/resolve/svc_resolver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base_log.h"
#include "symbolizer/sym_index.h"

#define N_BUCKETS 1024
#define NEG_MAX_ENTRIES 100000
#define NEG_TTL_CAP_MS 60000

enum stage { STAGE_LOAD, STAGE_FETCH, STAGE_BUILD };

struct svc_resolve_waiter {
	struct flight *f;
	svc_resolve_cb cb;
	void *arg;
	svc_resolve_waiter *prev, *next;
};

struct flight {
	svc_resolver *r;
	sym_build_id id;
	struct flight *hnext;
	svc_resolve_waiter *waiters;
	enum stage stage;
	bool from_executable;     /* the index is (to be) built from an executable alone */
	bool recheck;             /* started by a cache hit on such an index, to find debug info */
	bool pinned, alt_pinned;
	bool has_alt;
	sym_build_id alt_id;
	svc_fetch_status alt_status;
	/* Filled on the worker. */
	void *blob;               /* the index blob (malloc'ed, 8-byte aligned) */
	size_t blob_size;
	sym_index *index;
	svc_resolve_status status;
	char error[SYM_ERROR_MSG_MAX];
	double build_seconds;
	bool stored_rejected;
	stor_blob alt_blob;       /* the dwz file while a build runs */
	bool alt_held;
};

struct negative {
	sym_build_id id;
	svc_resolve_status status;
	char error[SYM_ERROR_MSG_MAX];
	int64_t expiry_ms;
	struct negative *hnext;
};

struct svc_resolver {
	svc_resolver_options o;
	struct flight *flights[N_BUCKETS];
	struct negative *negs[N_BUCKETS];
	size_t n_negs;
	bool stopping;
	svc_resolver_stats st;
};

static const char *const status_names[] = {"ok", "not_found", "error", "no_symbols",
					   "too_large"};

const char *svc_resolve_status_name(svc_resolve_status s)
{
	return (unsigned)s < 5 ? status_names[s] : "unknown";
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t bucket(const sym_build_id *id)
{
	return (size_t)sym_build_id_hash(id) & (N_BUCKETS - 1);
}

svc_resolver *svc_resolver_create(const svc_resolver_options *opts)
{
	svc_resolver *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	base_histogram_init(&r->st.build_seconds, base_build_bounds, base_build_n_bounds);
	return r;
}

/* ---- remembered failures ---- */

static void neg_clear(svc_resolver *r, bool only_expired)
{
	int64_t now = now_ms();
	for (size_t b = 0; b < N_BUCKETS; b++) {
		struct negative **pp = &r->negs[b];
		while (*pp) {
			struct negative *n = *pp;
			if (!only_expired || n->expiry_ms <= now) {
				*pp = n->hnext;
				free(n);
				r->n_negs--;
			} else {
				pp = &n->hnext;
			}
		}
	}
}

static struct negative *neg_find(svc_resolver *r, const sym_build_id *id)
{
	struct negative **pp = &r->negs[bucket(id)];
	int64_t now = now_ms();
	while (*pp) {
		struct negative *n = *pp;
		if (n->expiry_ms <= now) {
			*pp = n->hnext;
			free(n);
			r->n_negs--;
			continue;
		}
		if (sym_build_id_equal(&n->id, id))
			return n;
		pp = &n->hnext;
	}
	return NULL;
}

static void neg_remember(svc_resolver *r, const sym_build_id *id, svc_resolve_status status,
			 const char *error)
{
	int64_t ttl = status == SVC_RESOLVE_ERROR ? r->o.error_ttl_ms : r->o.negative_ttl_ms;
	if (status != SVC_RESOLVE_ERROR && ttl > NEG_TTL_CAP_MS)
		ttl = NEG_TTL_CAP_MS;
	if (ttl <= 0)
		return;
	if (r->n_negs >= NEG_MAX_ENTRIES) {
		neg_clear(r, true);
		if (r->n_negs >= NEG_MAX_ENTRIES)
			neg_clear(r, false);
	}
	struct negative *n = neg_find(r, id);
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return;
		n->id = *id;
		size_t b = bucket(id);
		n->hnext = r->negs[b];
		r->negs[b] = n;
		r->n_negs++;
	}
	n->status = status;
	snprintf(n->error, sizeof(n->error), "%s", error);
	n->expiry_ms = now_ms() + ttl;
}

/* How long an index built from an executable serves before the next look for debug info. */
static int64_t recheck_interval_ms(const svc_resolver *r)
{
	int64_t ttl = r->o.negative_ttl_ms;
	return ttl <= 0 ? 1000 : ttl > NEG_TTL_CAP_MS ? NEG_TTL_CAP_MS : ttl;
}

/* ---- flights ---- */

static struct flight *flight_find(svc_resolver *r, const sym_build_id *id)
{
	struct flight *f = r->flights[bucket(id)];
	while (f && !sym_build_id_equal(&f->id, id))
		f = f->hnext;
	return f;
}

/* A new flight for id at stage, linked in (NULL: out of memory). */
static struct flight *flight_new(svc_resolver *r, const sym_build_id *id, enum stage stage)
{
	struct flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->r = r;
	f->id = *id;
	f->stage = stage;
	size_t b = bucket(id);
	f->hnext = r->flights[b];
	r->flights[b] = f;
	r->st.in_flight++;
	return f;
}

static void flight_unlink(svc_resolver *r, struct flight *f)
{
	struct flight **pp = &r->flights[bucket(&f->id)];
	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	r->st.in_flight--;
}

static void free_blob(void *blob)
{
	free(blob);
}

/* Ends a flight: caches or remembers the result, then calls every waiter. */
static void flight_finish(struct flight *f)
{
	svc_resolver *r = f->r;
	flight_unlink(r, f);
	if (f->pinned)
		stor_unpin(r->o.store, f->id.bytes, f->id.len);
	if (f->alt_pinned)
		stor_unpin(r->o.store, f->alt_id.bytes, f->alt_id.len);

	svc_index_entry *entry = NULL;
	if (f->status == SVC_RESOLVE_OK) {
		entry = svc_index_cache_put(r->o.cache, &f->id, f->blob, f->blob_size, free_blob,
					    f->index);
		f->blob = NULL;
		f->index = NULL;
		if (!entry) {
			f->status = SVC_RESOLVE_ERROR;
			snprintf(f->error, sizeof(f->error), "out of memory");
		} else {
			entry->recheck_ms = f->from_executable ? now_ms() + recheck_interval_ms(r) : 0;
		}
	} else if (f->recheck && !f->waiters) {
		/* A background look for debug info found none: the old index stays. */
	} else {
		neg_remember(r, &f->id, f->status, f->error);
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(&f->id, hex);
		base_logf(f->status == SVC_RESOLVE_ERROR ? BASE_LOG_WARN : BASE_LOG_INFO,
			 "build id not resolved", "build_id=%s status=%s error=%s", hex,
			 svc_resolve_status_name(f->status),
			 base_log_quote(q, sizeof(q), f->error));
	}
	free(f->blob);
	sym_index_destroy(f->index);

	svc_resolve_waiter *w = f->waiters;
	f->waiters = NULL;
	while (w) {
		svc_resolve_waiter *next = w->next;
		svc_resolution res = {.status = f->status};
		snprintf(res.error, sizeof(res.error), "%s", f->error);
		if (entry) {
			svc_index_entry_ref(entry);
			res.entry = entry;
		}
		w->cb(w->arg, &res);
		free(w);
		w = next;
	}
	svc_index_entry_release(r->o.cache, entry);
	free(f);
}

static void fail(struct flight *f, svc_resolve_status status, const char *fmt, const char *what)
{
	f->status = status;
	snprintf(f->error, sizeof(f->error), fmt, what);
}

/* Copies a store value into an 8-byte-aligned buffer of its own. */
static void *own_copy(const stor_blob *b)
{
	void *p = malloc(b->size ? b->size : 1);
	if (p)
		memcpy(p, b->data, b->size);
	return p;
}

/* ---- BUILD (worker) ---- */

static bool alt_resolve(void *ctx, const sym_build_id *id, const char *path, const void **data,
			size_t *size)
{
	(void)path;
	struct flight *f = ctx;
	if (f->alt_held)
		stor_blob_release(&f->alt_blob);
	f->alt_held = false;
	stor_error serr;
	if (stor_get_file(f->r->o.store, id->bytes, id->len, &f->alt_blob, NULL, &serr) != STOR_OK)
		return false;
	f->alt_held = true;
	*data = f->alt_blob.data;
	*size = f->alt_blob.size;
	return true;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void build_work(void *arg)
{
	struct flight *f = arg;
	svc_resolver *r = f->r;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	stor_blob file;
	stor_error serr;
	if (stor_get_file(r->o.store, f->id.bytes, f->id.len, &file, NULL, &serr) != STOR_OK) {
		fail(f, SVC_RESOLVE_ERROR, "store: %.200s", serr.msg);
		return;
	}
	sym_build_options bo = {
		.max_decompressed_bytes = r->o.max_decompressed_bytes,
		.alt_resolver = alt_resolve,
		.alt_ctx = f,
		.threads = r->o.build_threads,
	};
	sym_error err = {0};
	void *blob = NULL;
	size_t blob_size = 0;
	sym_errc rc = sym_index_build(file.data, file.size, &bo, &blob, &blob_size, &err);
	stor_blob_release(&file);
	if (f->alt_held)
		stor_blob_release(&f->alt_blob);
	f->alt_held = false;
	f->build_seconds = seconds_since(&t0);
	if (rc != SYM_OK) {
		svc_resolve_status s = rc == SYM_E_NO_SYMBOLS ? SVC_RESOLVE_NO_SYMBOLS
				       : rc == SYM_E_TOO_LARGE ? SVC_RESOLVE_TOO_LARGE
							       : SVC_RESOLVE_ERROR;
		if (rc == SYM_E_MISSING_ALT && f->has_alt) {
			char hex[SYM_BUILD_ID_HEX_MAX];
			sym_build_id_to_hex(&f->alt_id, hex);
			snprintf(f->error, sizeof(f->error), "dwz supplementary file %s: %s", hex,
				 svc_fetch_status_name(f->alt_status));
			f->status = s;
		} else {
			fail(f, s, "index build: %.200s", err.msg);
		}
		return;
	}
	if (stor_put_index(r->o.store, f->id.bytes, f->id.len, blob, blob_size, &serr) != STOR_OK) {
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(&f->id, hex);
		base_logf(BASE_LOG_WARN, "index not stored", "build_id=%s error=%s", hex,
			 base_log_quote(q, sizeof(q), serr.msg));
	}
	if (sym_index_load(blob, blob_size, &f->index, &err) != SYM_OK) {
		free(blob);
		fail(f, SVC_RESOLVE_ERROR, "index load: %.200s", err.msg);
		return;
	}
	f->blob = blob;
	f->blob_size = blob_size;
	f->status = SVC_RESOLVE_OK;
}

static void build_done(void *arg, bool cancelled)
{
	struct flight *f = arg;
	svc_resolver *r = f->r;
	if (cancelled) {
		fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
	} else {
		base_histogram_observe(&r->st.build_seconds, f->build_seconds);
		if (f->status == SVC_RESOLVE_OK)
			r->st.builds_ok++;
		else
			r->st.builds_failed++;
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&f->id, hex);
		if (f->status == SVC_RESOLVE_OK) {
			sym_index_info info;
			sym_index_get_info(f->index, &info);
			base_logf(BASE_LOG_INFO, "index built",
				 "build_id=%s seconds=%.3f index_bytes=%zu ranges=%u functions=%u",
				 hex, f->build_seconds, f->blob_size, info.n_ranges,
				 info.n_functions);
		}
	}
	flight_finish(f);
}

/* ---- FETCH (loop) ---- */

static void fetch_cb(const svc_fetch_result *res, void *arg)
{
	struct flight *f = arg;
	svc_resolver *r = f->r;
	switch (res->status) {
	case SVC_FETCH_OK:
		break;
	case SVC_FETCH_NOT_FOUND:
		fail(f, SVC_RESOLVE_NOT_FOUND, "%s", res->error[0] ? res->error : "not found");
		flight_finish(f);
		return;
	case SVC_FETCH_TOO_LARGE:
		fail(f, SVC_RESOLVE_TOO_LARGE, "%s", res->error[0] ? res->error : "too large");
		flight_finish(f);
		return;
	default:
		fail(f, SVC_RESOLVE_ERROR, "%s", res->error[0] ? res->error : "fetch failed");
		flight_finish(f);
		return;
	}
	f->from_executable = res->kind == STOR_KIND_EXECUTABLE;
	if (f->recheck && !f->waiters && f->from_executable) {
		/* Still no debug info: the index in the cache serves on. */
		fail(f, SVC_RESOLVE_NOT_FOUND, "%s", "no debug info yet");
		flight_finish(f);
		return;
	}
	if (f->recheck && !f->from_executable) {
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(&f->id, hex);
		base_logf(BASE_LOG_INFO, "debug info found for an index built from the executable",
			 "build_id=%s source=%s", hex, base_log_quote(q, sizeof(q), res->source));
		r->st.upgrades++;
	}
	if (res->cached)
		r->st.store_file_hits++;
	else
		r->st.source_fetches++;
	if (r->stopping) {
		fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		flight_finish(f);
		return;
	}
	/* Keep the file (and its dwz file) in the store while the build reads it. */
	stor_pin(r->o.store, f->id.bytes, f->id.len);
	f->pinned = true;
	f->has_alt = res->has_alt;
	if (res->has_alt) {
		f->alt_id = res->alt_id;
		f->alt_status = res->alt_status;
		stor_pin(r->o.store, f->alt_id.bytes, f->alt_id.len);
		f->alt_pinned = true;
	}
	f->stage = STAGE_BUILD;
	if (!svc_pool_submit(r->o.pool, f, build_work, build_done)) {
		fail(f, SVC_RESOLVE_ERROR, "%s", "cannot queue the index build");
		flight_finish(f);
	}
}

/* ---- LOAD (worker) ---- */

static void load_work(void *arg)
{
	struct flight *f = arg;
	svc_resolver *r = f->r;
	stor_blob b;
	stor_error serr;
	if (stor_get_index(r->o.store, f->id.bytes, f->id.len, &b, &serr) != STOR_OK)
		return; /* not stored (or unreadable): build it */
	void *copy = own_copy(&b);
	size_t size = b.size;
	stor_blob_release(&b);
	if (!copy)
		return;
	sym_error err;
	if (sym_index_load(copy, size, &f->index, &err) != SYM_OK) {
		/* Another format version, or damaged: rebuild from the stored file. */
		free(copy);
		f->index = NULL;
		f->stored_rejected = true;
		stor_delete_index(r->o.store, f->id.bytes, f->id.len, &serr);
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(&f->id, hex);
		base_logf(BASE_LOG_INFO, "stored index rejected, rebuilding", "build_id=%s error=%s",
			 hex, base_log_quote(q, sizeof(q), err.msg));
		return;
	}
	f->blob = copy;
	f->blob_size = size;
	f->status = SVC_RESOLVE_OK;
	stor_meta m;
	f->from_executable = stor_get_meta(r->o.store, f->id.bytes, f->id.len, &m, NULL) == STOR_OK &&
			     m.state == STOR_STATE_PRESENT && m.kind == STOR_KIND_EXECUTABLE;
}

static void load_done(void *arg, bool cancelled)
{
	struct flight *f = arg;
	svc_resolver *r = f->r;
	if (f->stored_rejected)
		r->st.stored_index_rejected++;
	if (!cancelled && f->index) {
		r->st.store_index_hits++;
		flight_finish(f);
		return;
	}
	r->st.store_index_misses++;
	if (cancelled || r->stopping) {
		fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		flight_finish(f);
		return;
	}
	f->stage = STAGE_FETCH;
	if (svc_fetch_start(r->o.fetcher, &f->id, SVC_FETCH_SYMBOLS, fetch_cb, f) != SYM_OK) {
		fail(f, SVC_RESOLVE_ERROR, "%s", "cannot start the fetch");
		flight_finish(f);
	}
}

/* ---- looking again for the debug info of an index built from an executable ---- */

static void start_recheck(svc_resolver *r, svc_index_entry *e)
{
	e->recheck_ms = now_ms() + recheck_interval_ms(r);
	if (r->stopping || flight_find(r, &e->id))
		return;
	struct flight *f = flight_new(r, &e->id, STAGE_FETCH);
	if (!f)
		return;
	f->recheck = true;
	r->st.rechecks++;
	if (svc_fetch_start(r->o.fetcher, &f->id, SVC_FETCH_SYMBOLS, fetch_cb, f) != SYM_OK) {
		flight_unlink(r, f);
		free(f);
	}
}

/* ---- API ---- */

svc_resolve_waiter *svc_resolver_resolve(svc_resolver *r, const sym_build_id *id,
					 svc_resolve_cb cb, void *arg, svc_resolution *now)
{
	memset(now, 0, sizeof(*now));
	svc_index_entry *e = svc_index_cache_get(r->o.cache, id);
	if (e) {
		r->st.memory_hits++;
		now->status = SVC_RESOLVE_OK;
		now->entry = e;
		if (e->recheck_ms && now_ms() >= e->recheck_ms)
			start_recheck(r, e);
		return NULL;
	}
	r->st.memory_misses++;
	struct negative *n = neg_find(r, id);
	if (n) {
		r->st.negative_hits++;
		now->status = n->status;
		snprintf(now->error, sizeof(now->error), "%s", n->error);
		return NULL;
	}
	svc_resolve_waiter *w = calloc(1, sizeof(*w));
	if (!w) {
		now->status = SVC_RESOLVE_ERROR;
		snprintf(now->error, sizeof(now->error), "out of memory");
		return NULL;
	}
	struct flight *f = flight_find(r, id);
	if (f) {
		r->st.joined++;
	} else {
		if (r->stopping || !(f = flight_new(r, id, STAGE_LOAD))) {
			free(w);
			now->status = SVC_RESOLVE_ERROR;
			snprintf(now->error, sizeof(now->error), "%s",
				 r->stopping ? "shutting down" : "out of memory");
			return NULL;
		}
		if (!svc_pool_submit(r->o.pool, f, load_work, load_done)) {
			flight_unlink(r, f);
			free(f);
			free(w);
			now->status = SVC_RESOLVE_ERROR;
			snprintf(now->error, sizeof(now->error), "cannot queue the index load");
			return NULL;
		}
	}
	w->f = f;
	w->cb = cb;
	w->arg = arg;
	w->next = f->waiters;
	if (f->waiters)
		f->waiters->prev = w;
	f->waiters = w;
	return w;
}

void svc_resolver_cancel(svc_resolver *r, svc_resolve_waiter *w)
{
	(void)r;
	if (!w)
		return;
	struct flight *f = w->f;
	if (w->prev)
		w->prev->next = w->next;
	else
		f->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	free(w);
}

const char *svc_resolver_waiter_stage(const svc_resolve_waiter *w)
{
	switch (w->f->stage) {
	case STAGE_LOAD:
		return "loading the index";
	case STAGE_FETCH:
		return "fetching debug info";
	default:
		return "building the index";
	}
}

void svc_resolver_release(svc_resolver *r, svc_index_entry *e)
{
	svc_index_entry_release(r->o.cache, e);
}

const svc_resolver_stats *svc_resolver_get_stats(const svc_resolver *r)
{
	return &r->st;
}

void svc_resolver_stop(svc_resolver *r)
{
	r->stopping = true;
}

void svc_resolver_destroy(svc_resolver *r)
{
	if (!r)
		return;
	r->stopping = true;
	for (size_t b = 0; b < N_BUCKETS; b++) {
		while (r->flights[b]) {
			struct flight *f = r->flights[b];
			fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
			flight_finish(f);
		}
	}
	neg_clear(r, false);
	free(r);
}
