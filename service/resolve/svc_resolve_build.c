// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_build: the symbol index's BUILD stage (svc_resolver_impl.h). On
 * a worker, the index is built from the file in the store (a dwz
 * supplementary file is read from the store too), written back to the store
 * and loaded; back on the loop the build is counted and timed, and the flight
 * is done. A build first takes its expected memory from the budget
 * (svc_resolve_budget.c); when there is no room, the worker lets the file go
 * and the flight waits in the budget's queue, for the driver to start it
 * again (the file read again) when there is. With the shared S3 tier, the
 * index another replica built is read from there first (PREFIX/v1/<kind>/
 * ab/cdef.../index-vN, verified, then loaded with every bound checked as any
 * stored index; a cold replica asks it at LOAD already, before the file,
 * svc_resolve_load.c), and an index built here is written behind to it. A leaf: the driver
 * (svc_resolve_drive.c) runs the step and goes to the stage it names.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_build_id.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/base_clock.h"
#include "base/base_log.h"
#include "service/fetch/svc_s3.h"
#include "symbolizer/sym_inflate.h"

static bool alt_resolve(void *ctx, const sym_build_id *id, const char *path, const void **data,
			size_t *size)
{
	(void)path;
	svc_resolve_flight *f = ctx;
	if (f->alt_held)
		stor_blob_release(&f->alt_blob);
	f->alt_held = false;
	stor_error serr;
	if (stor_get_file(f->r->o.store, SVC_STORE_KEY(id), &f->alt_blob, NULL, &serr) != STOR_OK)
		return false;
	f->alt_held = true;
	*data = f->alt_blob.data;
	*size = f->alt_blob.size;
	return true;
}

/* The flight's result for a failed build. */
static void build_failed(svc_resolve_flight *f, sym_errc rc, const sym_error *err)
{
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
		svc_resolve_flight_fail(f, s, "index build: %.200s", err->msg);
	}
}

/* The index's key in the S3 tier into key; NULL when there is no tier. */
static struct svc_s3 *s3_index_key(svc_resolve_flight *f, char *key, size_t cap)
{
	struct svc_s3 *s3 = f->r->o.fetcher ? svc_fetcher_s3(f->r->o.fetcher) : NULL;
	const char *kind = sym_id_kind_name(f->fl.id.kind);
	char hex[SYM_BUILD_ID_HEX_MAX], what[32];
	sym_build_id_to_hex(&f->fl.id, hex);
	snprintf(what, sizeof(what), "index-v%u", sym_index_format_version());
	return s3 && kind && svc_s3_key(s3, kind, hex, what, key, cap) ? s3 : NULL;
}

static void keep_built(svc_resolve_flight *f, void *blob, size_t blob_size, int64_t file_time);

bool svc_resolve_s3_wanted(const svc_resolve_flight *f)
{
	return f->kind == SVC_ARTIFACT_SYMBOLS && !f->s3_index_tried && f->r->o.fetcher &&
	       svc_fetcher_s3(f->r->o.fetcher);
}

bool svc_resolve_s3_start(svc_resolve_flight *f, svc_fetch_s3_read_fn done)
{
	char key[SVC_S3_KEY_MAX];
	f->s3_index_tried = true;
	if (!s3_index_key(f, key, sizeof(key)))
		return false;
	uint64_t max = f->r->o.max_decompressed_bytes ? f->r->o.max_decompressed_bytes : 1ull << 32;
	f->s3_read = svc_fetcher_s3_read(f->r->o.fetcher, key, max, done, f);
	return f->s3_read != NULL;
}

void svc_resolve_s3_load_work(svc_resolve_flight *f)
{
	uint8_t *blob = f->s3_body;
	size_t size = f->s3_body_size;
	f->s3_body = NULL;
	sym_index *ix;
	sym_error serr;
	if (!blob || sym_index_load(blob, size, &ix, &serr) != SYM_OK) {
		free(blob);  /* another format version, or damaged: built here instead */
		return;
	}
	sym_index_destroy(ix);
	keep_built(f, blob, size, -1);  /* the canonical file's index, by its key */
	f->s3_index = f->status == SVC_RESOLVE_OK;
}

enum svc_resolve_stage svc_resolve_s3_next(svc_resolve_flight *f, bool cancelled)
{
	free(f->s3_body);  /* a job dropped before it ran */
	f->s3_body = NULL;
	if (cancelled) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		return SVC_RESOLVE_STAGE_DONE;
	}
	if (!f->s3_index)
		return f->s3_then;
	f->r->st.s3_index_hits++;
	if (f->s3_then == SVC_RESOLVE_STAGE_FETCH) { /* no file here: what the index says */
		sym_index_info info;
		sym_index_get_info(f->index, &info);
		f->from_executable = info.source != SYM_INDEX_SOURCE_DWARF;
	}
	return SVC_RESOLVE_STAGE_DONE;
}

/* Stores the built index (a failure is only logged) and loads it; an index
 * of a file replaced while it was built (an upload) is neither stored nor
 * served: PENDING, and the next call builds from the new file. file_time < 0:
 * an index from the S3 tier (by the identity's key: no file to compare). */
static void keep_built(svc_resolve_flight *f, void *blob, size_t blob_size, int64_t file_time)
{
	const sym_build_id *id = &f->fl.id;
	stor_error serr;
	stor_errc prc = file_time < 0 ? stor_put_index(f->r->o.store, SVC_STORE_KEY(id), blob,
						       blob_size, &serr)
				      : stor_put_index_of(f->r->o.store, SVC_STORE_KEY(id), file_time,
							  blob, blob_size, &serr);
	if (prc == STOR_E_STALE) {
		free(blob);
		svc_resolve_flight_fail(f, SVC_RESOLVE_PENDING, "%.200s; ask again", serr.msg);
		return;
	}
	if (prc != STOR_OK && !(file_time < 0 && prc == STOR_E_NOT_FOUND)) {
		/* (an index from S3 on a replica without the file: memory only) */
		char hex[SYM_BUILD_ID_HEX_MAX], q[320];
		sym_build_id_to_hex(id, hex);
		base_logf(BASE_LOG_WARN, "index not stored", "build_id=%s error=%s", hex,
			  base_log_quote(q, sizeof(q), serr.msg));
	}
	sym_error err;
	if (sym_index_load(blob, blob_size, &f->index, &err) != SYM_OK) {
		free(blob);
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "index load: %.200s", err.msg);
		return;
	}
	f->blob = blob;
	f->blob_size = blob_size;
	f->status = SVC_RESOLVE_OK;
	svc_resolve_rank(f);
}

void svc_resolve_rank(svc_resolve_flight *f)
{
	svc_string_rank_free(&f->strings);
	svc_string_rank_index(&f->strings, f->index);  /* false: responses hash instead */
}

/* Expected memory of the build: the file, the debug sections it reads at
 * their inflated sizes (what libdw and the builder hold, about), and the
 * inflated copy of the compressed ones. */
static uint64_t estimate(const stor_blob *file)
{
	uint64_t debug = 0, inflated = 0;
	sym_error err;
	sym_inflate_estimate(file->data, file->size, &debug, &inflated, &err);
	uint64_t sum = (uint64_t)file->size + debug;
	sum = sum < debug ? UINT64_MAX : sum;
	return sum + inflated < sum ? UINT64_MAX : sum + inflated;
}

void svc_resolve_build_work(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	int64_t t0 = base_mono_ns();
	stor_blob file;
	stor_meta meta;
	stor_error serr;
	if (stor_get_file(r->o.store, SVC_STORE_KEY(&f->fl.id), &file, &meta, &serr) != STOR_OK) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "store: %.200s", serr.msg);
		return;
	}
	if (!f->build_reserved) {
		f->build_bytes = estimate(&file);
		if (!svc_resolve_budget_take(f)) {
			stor_blob_release(&file);  /* queued: read again when it starts */
			return;
		}
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
	f->build_seconds = base_seconds_since(t0);
	if (rc != SYM_OK)
		build_failed(f, rc, &err);
	else
		keep_built(f, blob, blob_size, meta.fetch_time);
	char key[SVC_S3_KEY_MAX];
	struct svc_s3 *s3 = rc == SYM_OK && f->status == SVC_RESOLVE_OK
				    ? s3_index_key(f, key, sizeof(key))
				    : NULL;
	if (s3)
		svc_s3_behind(s3, key, f->blob, f->blob_size);
}

enum svc_resolve_stage svc_resolve_build_next(svc_resolve_flight *f, bool cancelled)
{
	svc_resolver *r = f->r;
	if (cancelled) {
		f->build_no_room = false;
		svc_resolve_budget_give(f);
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		return SVC_RESOLVE_STAGE_DONE;
	}
	if (f->build_no_room) {
		svc_resolve_budget_give(f);  /* into the queue: build_waiting */
		return SVC_RESOLVE_STAGE_BUILD;
	}
	svc_resolve_budget_give(f);
	svc_resolve_failed_update(f);
	base_histogram_observe(&r->st.build_seconds, f->build_seconds);
	if (f->status == SVC_RESOLVE_OK)
		r->st.builds_ok++;
	else
		r->st.builds_failed++;
	if (f->status == SVC_RESOLVE_OK) {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&f->fl.id, hex);
		sym_index_info info;
		sym_index_get_info(f->index, &info);
		base_logf(BASE_LOG_INFO, "index built",
			  "build_id=%s seconds=%.3f index_bytes=%zu ranges=%u functions=%u", hex,
			  f->build_seconds, f->blob_size, info.n_ranges, info.n_functions);
	}
	return SVC_RESOLVE_STAGE_DONE;
}
