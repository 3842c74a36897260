// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_layout: the type-layout index, a derived artifact of a
 * resolution (SVC_ARTIFACT_LAYOUT; svc_resolver_impl.h). Once the symbol
 * resolution brought the file into the store (the DEPEND stage), LOAD reads
 * the layout blob stored next to it (stor_get_layout; one of another version,
 * SYM_LAYOUT_VERSION, or corrupt is built again) and BUILD builds it from the
 * stored file and its dwz file (sym_layout_build) and stores it. A file
 * without type information is an answer too (NO_SYMBOLS, kept in the cache
 * like layouts). Leaves: the driver runs the steps on a worker and goes to
 * the stage they name.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_build_id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_log.h"

void svc_resolve_layout_free(void *artifact)
{
	svc_layout_artifact *a = artifact;
	if (!a)
		return;
	sym_layout_destroy(a->layout);
	free(a);
}

svc_index_entry *svc_resolve_layout_cache_put(svc_index_cache *c, svc_resolve_flight *f)
{
	return svc_index_cache_put_artifact(c, &f->fl.id, f->blob, f->blob_size, free, f->artifact,
					    svc_resolve_layout_free);
}

/* The flight's result: the layouts over blob (or none, why), status OK. */
static bool keep(svc_resolve_flight *f, void *blob, size_t size, sym_layout *l, const char *why)
{
	svc_layout_artifact *a = calloc(1, sizeof(*a));
	if (!a) {
		sym_layout_destroy(l);
		free(blob);
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "out of memory");
		return false;
	}
	a->layout = l;
	snprintf(a->no_layout, sizeof(a->no_layout), "%s", why ? why : "");
	f->artifact = a;
	f->blob = blob;
	f->blob_size = size;
	f->status = SVC_RESOLVE_OK;
	return true;
}

void svc_resolve_layout_load_work(svc_resolve_flight *f)
{
	const sym_build_id *id = &f->fl.id;
	stor_blob b;
	if (stor_get_layout(f->r->o.store, SVC_STORE_KEY(id), &b, NULL) != STOR_OK)
		return;
	/* Copied: the store's value is pinned while held. */
	size_t size = b.size;
	void *blob = malloc(size ? size : 1);
	if (blob)
		memcpy(blob, b.data, size);
	stor_blob_release(&b);
	sym_layout *l = NULL;
	if (!blob || sym_layout_load(blob, size, &l, NULL) != SYM_OK) {
		free(blob);  /* another version, or corrupt: built again */
		return;
	}
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(id, hex);
	base_logf(BASE_LOG_INFO, "layout index loaded", "build_id=%s", hex);
	keep(f, blob, size, l, NULL);
}

enum svc_resolve_stage svc_resolve_layout_load_next(svc_resolve_flight *f, bool cancelled)
{
	if (cancelled) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "server shutting down");
		return SVC_RESOLVE_STAGE_DONE;
	}
	if (f->artifact)
		return SVC_RESOLVE_STAGE_DONE;
	/* The symbol index may have come from the S3 tier alone (a cold
	 * replica, svc_resolve_load.c): the file is fetched first, then. */
	stor_meta m;
	bool held = stor_get_meta(f->r->o.store, SVC_STORE_KEY(&f->fl.id), &m, NULL) == STOR_OK &&
		    m.state == STOR_STATE_PRESENT;
	return held ? SVC_RESOLVE_STAGE_BUILD : SVC_RESOLVE_STAGE_FETCH;
}

/* The dwz file, from the store (the resolution fetched it with the main file). */
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
	a->held = stor_get_file(a->store, SVC_STORE_KEY(id), &a->blob, NULL, NULL) == STOR_OK;
	if (!a->held)
		return false;
	*data = a->blob.data;
	*size = a->blob.size;
	return true;
}

/* The stored file (and dwz file) -> layout blob, stored -> loaded. */
static sym_errc build(svc_resolve_flight *f, void **blob, size_t *size, sym_layout **l,
		      bool *stale, sym_error *err)
{
	svc_resolver *r = f->r;
	const sym_build_id *id = &f->fl.id;
	stor_blob file;
	stor_meta meta;
	stor_error serr;
	if (stor_get_file(r->o.store, SVC_STORE_KEY(id), &file, &meta, &serr) != STOR_OK)
		return sym_error_set(err, SYM_E_IO, "%s", serr.msg);
	struct alt_ctx alt = {.store = r->o.store};
	/* The inflate cap: the builder's default (layout builds are not in the
	 * symbol builds' memory budget). */
	sym_layout_options o = {.alt_resolver = alt_from_store, .alt_ctx = &alt};
	sym_errc rc = sym_layout_build(file.data, file.size, &o, blob, size, err);
	stor_blob_release(&file);
	if (alt.held)
		stor_blob_release(&alt.blob);
	if (!rc)
		rc = sym_layout_load(*blob, *size, l, err);
	/* Not stored is no failure: the next start builds it again. Built from
	 * a file replaced meanwhile, it is not stored, nor served. */
	stor_error perr;
	stor_errc prc = rc ? STOR_OK
			   : stor_put_layout_of(r->o.store, SVC_STORE_KEY(id), meta.fetch_time,
						*blob, *size, &perr);
	if (prc == STOR_E_STALE) {
		*stale = true;
		return sym_error_set(err, SYM_E_IO, "%s; ask again", perr.msg);
	}
	if (prc != STOR_OK) {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(id, hex);
		base_logf(BASE_LOG_WARN, "layout index not stored", "build_id=%s error=\"%s\"",
			  hex, perr.msg);
	}
	return rc;
}

void svc_resolve_layout_build_work(svc_resolve_flight *f)
{
	sym_error err = {0};
	void *blob = NULL;
	size_t size = 0;
	sym_layout *l = NULL;
	bool stale = false;
	sym_errc rc = build(f, &blob, &size, &l, &stale, &err);
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&f->fl.id, hex);
	base_logf(rc ? BASE_LOG_WARN : BASE_LOG_INFO, "layout index built",
		  "build_id=%s types=%u error=\"%s\"", hex, l ? sym_layout_type_count(l) : 0,
		  rc ? err.msg : "");
	if (rc == SYM_OK || rc == SYM_E_NO_SYMBOLS) {
		if (rc) {
			sym_layout_destroy(l);
			free(blob);
			l = NULL, blob = NULL, size = 0;
		}
		keep(f, blob, size, l, rc ? err.msg : NULL);
		return;
	}
	sym_layout_destroy(l);
	free(blob);
	svc_resolve_flight_fail(f, stale			? SVC_RESOLVE_PENDING
				   : rc == SYM_E_TOO_LARGE ? SVC_RESOLVE_TOO_LARGE
							   : SVC_RESOLVE_ERROR,
				"%s", err.msg);
}

enum svc_resolve_stage svc_resolve_layout_build_next(svc_resolve_flight *f, bool cancelled)
{
	if (cancelled)
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "server shutting down");
	return SVC_RESOLVE_STAGE_DONE;
}
