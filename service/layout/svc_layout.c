// SPDX-License-Identifier: Apache-2.0
/*
 * svc_layout: the GetTypeLayouts method (svc_layout.h): calls, their flights
 * (one per build ID: resolution, then the build on a worker) and the cache of
 * built layout indexes.
 */
#include "service/layout/svc_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "base/base_log.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/core/svc_build_id.h"
#include "service/core/svc_flight.h"
#include "service/layout/svc_layout_encode.h"
#include "symbolizer/sym_layout.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

/* A built layout index (or why there is none: NO_SYMBOLS). */
struct entry {
	void *blob;
	sym_layout *l;
	int status;
	char error[SYM_ERROR_MSG_MAX];
};

BASE_HASH_MAP(svc_layout_map, sym_build_id, struct entry *, sym_build_id_hash,
	      sym_build_id_equal)

struct svc_layout {
	svc_layout_options o;
	svc_flight_table flights;
	svc_layout_map cache;
	bool stopping;
};

struct flight {
	svc_flight f;               /* first: the table's record */
	svc_layout *ly;
	svc_resolve_waiter *rw;
	const char *stage;
	/* the worker's result */
	struct entry *e;
	int status;
	char error[SYM_ERROR_MSG_MAX];
};

struct call {
	svc_flight_waiter w;        /* first: the flight's waiter */
	svc_layout *ly;
	svc_rpc_call *rpc;
	Symbolizer__V1__GetTypeLayoutsRequest *msg;
	struct event *timer;
};

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	sym_layout_destroy(e->l);
	free(e->blob);
	free(e);
}

svc_layout *svc_layout_create(const svc_layout_options *o)
{
	svc_layout *ly = calloc(1, sizeof(*ly));
	if (!ly)
		return NULL;
	ly->o = *o;
	svc_flight_table_init(&ly->flights);
	svc_layout_map_init(&ly->cache);
	return ly;
}

void svc_layout_stop(svc_layout *ly)
{
	if (ly)
		ly->stopping = true;
}

void svc_layout_forget(svc_layout *ly, const sym_build_id *id)
{
	struct entry **e = svc_layout_map_get(&ly->cache, id);
	if (!e)
		return;
	struct entry *old = *e;
	svc_layout_map_remove(&ly->cache, id);
	entry_free(old);
}

/* ---- calls ---- */

static void call_free(struct call *c)
{
	svc_flight_leave(&c->w);
	if (c->timer)
		event_free(c->timer);
	if (c->msg)
		symbolizer__v1__get_type_layouts_request__free_unpacked(c->msg, NULL);
	free(c);
}

/* Answers with the layouts of e, or the status alone. */
static void answer(struct call *c, const struct entry *e, int status, const char *error,
		   uint32_t retry_ms)
{
	const sym_layout *l = e && e->l ? e->l : NULL;
	if (e) {
		status = e->status;
		error = e->error;
	}
	if (!svc_layout_encode(c->msg, l, status, error, retry_ms, svc_rpc_call_response(c->rpc)))
		svc_rpc_call_failf(c->rpc, SVC_E_NOMEM, "out of memory packing the response");
	else
		svc_rpc_call_ok(c->rpc);
	call_free(c);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	struct call *c = arg;
	struct flight *f = (struct flight *)c->w.flight;
	const char *stage = f && f->stage ? f->stage : "building the layout index";
	answer(c, NULL, STATUS(PENDING), stage, strstr(stage, "fetch") ? 1000 : 500);
}

static void stop_hook(void *arg)
{
	struct call *c = arg;
	svc_rpc_call_failf(c->rpc, SVC_E_SHUTTING_DOWN, "server shutting down");
	call_free(c);
}

/* ---- flights ---- */

static void flight_end(struct flight *f)
{
	svc_layout *ly = f->ly;
	svc_flight_remove(&ly->flights, &f->f);
	if (f->e) {
		bool inserted;
		if (svc_layout_map_size(&ly->cache) >= ly->o.max_cached) {
			size_t pos = 0;
			svc_layout_map_entry *old = svc_layout_map_next(&ly->cache, &pos);
			if (old) {
				struct entry *oe = old->value;
				sym_build_id k = old->key;
				svc_layout_map_remove(&ly->cache, &k);
				entry_free(oe);
			}
		}
		struct entry **slot = svc_layout_map_put(&ly->cache, &f->f.id, &inserted);
		if (slot && inserted)
			*slot = f->e;
		else
			entry_free(f->e), f->e = NULL;
	}
	svc_flight_waiter *w;
	while ((w = svc_flight_pop(&f->f)) != NULL) {
		struct call *c = (struct call *)w;
		struct entry **e = svc_layout_map_get(&ly->cache, &f->f.id);
		if (e)
			answer(c, *e, 0, NULL, 0);
		else
			answer(c, NULL, f->status, f->error,
			       f->status == STATUS(ERROR) ? 5000 : 0);
	}
	free(f);
}

/* The dwz file, from the store (the resolver fetched it with the main file). */
struct alt_ctx {
	stor_db *store;
	stor_blob blob;
	bool held;
};

static bool alt_from_store(void *ctx, const sym_build_id *id, const char *path,
			   const void **data, size_t *size)
{
	(void)path;
	struct alt_ctx *a = ctx;
	if (a->held)
		stor_blob_release(&a->blob);
	a->held = stor_get_file(a->store, id->bytes, id->len, &a->blob, NULL, NULL) == STOR_OK;
	if (!a->held)
		return false;
	*data = a->blob.data;
	*size = a->blob.size;
	return true;
}

/* A stored layout blob of this version, loaded into e (copied: the store's is pinned). */
static bool from_store(svc_layout *ly, const sym_build_id *id, struct entry *e)
{
	stor_blob b;
	if (stor_get_layout(ly->o.store, id->bytes, id->len, &b, NULL) != STOR_OK)
		return false;
	size_t size = b.size;
	e->blob = malloc(size ? size : 1);
	bool ok = e->blob != NULL;
	if (ok)
		memcpy(e->blob, b.data, size);
	stor_blob_release(&b);
	if (ok && sym_layout_load(e->blob, size, &e->l, NULL) == SYM_OK)
		return true;   /* else another version, or corrupt: built again */
	free(e->blob);
	e->blob = NULL;
	return false;
}

/* The stored file (and dwz file) -> layout blob, stored -> loaded into e. */
static sym_errc build(svc_layout *ly, const sym_build_id *id, struct entry *e, sym_error *err)
{
	stor_blob file;
	stor_error serr;
	if (stor_get_file(ly->o.store, id->bytes, id->len, &file, NULL, &serr) != STOR_OK)
		return sym_error_set(err, SYM_E_IO, "%s", serr.msg);
	struct alt_ctx alt = {.store = ly->o.store};
	sym_layout_options o = {.max_decompressed_bytes = ly->o.max_decompressed_bytes,
				.alt_resolver = alt_from_store, .alt_ctx = &alt};
	size_t size = 0;
	sym_errc rc = sym_layout_build(file.data, file.size, &o, &e->blob, &size, err);
	stor_blob_release(&file);
	if (alt.held)
		stor_blob_release(&alt.blob);
	if (!rc)
		rc = sym_layout_load(e->blob, size, &e->l, err);
	/* Not stored is no failure: the next start builds it again. */
	stor_error perr;
	if (!rc && stor_put_layout(ly->o.store, id->bytes, id->len, e->blob, size, &perr)) {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(id, hex);
		base_logf(BASE_LOG_WARN, "layout index not stored", "build_id=%s error=\"%s\"",
			  hex, perr.msg);
	}
	return rc;
}

/* On a worker: the layout index from the store, or built (and stored). */
static void build_work(void *arg)
{
	struct flight *f = arg;
	struct entry *e = calloc(1, sizeof(*e));
	sym_error err = {0};
	sym_errc rc = SYM_E_NOMEM;
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&f->f.id, hex);
	if (e && from_store(f->ly, &f->f.id, e)) {
		rc = SYM_OK;
		base_logf(BASE_LOG_INFO, "layout index loaded", "build_id=%s", hex);
	} else if (e) {
		rc = build(f->ly, &f->f.id, e, &err);
		base_logf(rc ? BASE_LOG_WARN : BASE_LOG_INFO, "layout index built",
			  "build_id=%s types=%u error=\"%s\"", hex,
			  e->l ? sym_layout_type_count(e->l) : 0, rc ? err.msg : "");
	}
	if (rc == SYM_OK || rc == SYM_E_NO_SYMBOLS) {
		e->status = rc ? STATUS(NO_SYMBOLS) : STATUS(OK);
		snprintf(e->error, sizeof(e->error), "%s", rc ? err.msg : "");
		f->e = e;
		return;
	}
	entry_free(e);
	f->status = rc == SYM_E_TOO_LARGE ? STATUS(TOO_LARGE) : STATUS(ERROR);
	snprintf(f->error, sizeof(f->error), "%s", err.msg);
}

static void build_done(void *arg, bool cancelled)
{
	struct flight *f = arg;
	if (cancelled) {
		f->status = STATUS(ERROR);
		snprintf(f->error, sizeof(f->error), "server shutting down");
	}
	flight_end(f);
}

static void resolved(struct flight *f, svc_resolution *res)
{
	svc_layout *ly = f->ly;
	f->rw = NULL;
	if (res->entry)
		svc_resolver_release(ly->o.resolver, res->entry);
	if (res->status == SVC_RESOLVE_OK && !ly->stopping) {
		f->stage = "building the layout index";
		if (svc_pool_submit(ly->o.pool, f, build_work, build_done))
			return;
	}
	switch (res->status) {
	case SVC_RESOLVE_OK: f->status = STATUS(ERROR); break;
	case SVC_RESOLVE_NOT_FOUND: f->status = STATUS(NOT_FOUND); break;
	case SVC_RESOLVE_NO_SYMBOLS: f->status = STATUS(NO_SYMBOLS); break;
	case SVC_RESOLVE_TOO_LARGE: f->status = STATUS(TOO_LARGE); break;
	default: f->status = STATUS(ERROR); break;
	}
	snprintf(f->error, sizeof(f->error), "%s",
		 res->status == SVC_RESOLVE_OK ? "server shutting down" : res->error);
	flight_end(f);
}

static void resolved_cb(void *arg, svc_resolution *res)
{
	resolved(arg, res);
}

/* The flight of id, started when there is none; NULL when out of memory. */
static struct flight *flight_for(svc_layout *ly, const sym_build_id *id, bool *started)
{
	struct flight *f = (struct flight *)svc_flight_find(&ly->flights, id);
	*started = false;
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f || !svc_flight_add(&ly->flights, &f->f, id)) {
		free(f);
		return NULL;
	}
	f->ly = ly;
	f->stage = "fetching debug info";
	*started = true;
	return f;
}

static void start(struct flight *f)
{
	svc_resolution now;
	memset(&now, 0, sizeof(now));
	f->rw = svc_resolver_resolve(f->ly->o.resolver, &f->f.id, resolved_cb, f, &now);
	if (!f->rw)
		resolved(f, &now);
}

/* ---- the method ---- */

static int64_t wait_budget_ms(struct call *c)
{
	const Symbolizer__V1__Options *opt = c->msg->options;
	return svc_rpc_call_wait_budget_ms(c->rpc, opt ? opt->max_wait_ms : 0,
					   c->ly->o.default_wait_ms, c->ly->o.max_wait_ms);
}

/* Waits on the build ID's flight (started when none runs). */
static void wait_for(struct call *c, const sym_build_id *id)
{
	bool started;
	struct flight *f = flight_for(c->ly, id, &started);
	if (!f) {
		svc_rpc_call_failf(c->rpc, SVC_E_NOMEM, "out of memory");
		call_free(c);
		return;
	}
	svc_flight_join(&f->f, &c->w);
	int64_t wait = wait_budget_ms(c);
	c->timer = evtimer_new(c->ly->o.base, timer_cb, c);
	struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)((wait % 1000) * 1000)};
	bool timed = c->timer && evtimer_add(c->timer, &tv) == 0;
	if (started)
		start(f);  /* may answer c now */
	else if (!timed)
		timer_cb(-1, 0, c);
}

void svc_layout_handle(void *ctx, svc_rpc_call *rpc)
{
	svc_layout *ly = ctx;
	struct call *c = calloc(1, sizeof(*c));
	if (!c) {
		svc_rpc_call_failf(rpc, SVC_E_NOMEM, "out of memory");
		return;
	}
	c->ly = ly;
	c->rpc = rpc;
	size_t len;
	const uint8_t *body = svc_rpc_call_body(rpc, &len);
	c->msg = symbolizer__v1__get_type_layouts_request__unpack(NULL, len, body);
	svc_rpc_call_drop_body(rpc);
	if (!c->msg) {
		svc_rpc_call_failf(rpc, SVC_E_INVALID,
				   "request body is not a valid symbolizer.v1.GetTypeLayoutsRequest");
		call_free(c);
		return;
	}
	if (c->msg->n_types + c->msg->n_fields > ly->o.max_queries) {
		svc_rpc_call_failf(rpc, SVC_E_TOO_LARGE, "%zu types and fields: at most %u",
				   c->msg->n_types + c->msg->n_fields, ly->o.max_queries);
		call_free(c);
		return;
	}
	svc_rpc_call_on_stop(rpc, stop_hook, c);
	sym_build_id id;
	const char *bad = svc_build_id_check(c->msg->build_id, &id);
	struct entry **e = bad ? NULL : svc_layout_map_get(&ly->cache, &id);
	if (bad)
		answer(c, NULL, STATUS(INVALID), bad, 0);
	else if (e)
		answer(c, *e, 0, NULL, 0);
	else
		wait_for(c, &id);
}

void svc_layout_destroy(svc_layout *ly)
{
	if (!ly)
		return;
	svc_flight *f;
	while ((f = svc_flight_any(&ly->flights)) != NULL) {
		struct flight *fl = (struct flight *)f;
		if (fl->rw)
			svc_resolver_cancel(ly->o.resolver, fl->rw);
		fl->status = STATUS(ERROR);
		snprintf(fl->error, sizeof(fl->error), "server shutting down");
		flight_end(fl);
	}
	size_t pos = 0;
	svc_layout_map_entry *me;
	while ((me = svc_layout_map_next(&ly->cache, &pos)) != NULL)
		entry_free(me->value);
	svc_layout_map_deinit(&ly->cache);
	svc_flight_table_deinit(&ly->flights);
	free(ly);
}
