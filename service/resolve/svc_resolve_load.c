// SPDX-License-Identifier: Apache-2.0
/*
 * svc_resolve_load: the symbol index's LOAD stage (svc_resolver_impl.h). On a
 * worker, the index stored for the build ID is read and loaded; a stored
 * index of another format version, or a damaged one, is deleted and rebuilt.
 * Without an index, on a replica that holds no file for the build ID either
 * (a cold one), the index another replica wrote to the S3 tier is read
 * first (svc_resolve_s3_index): the lookups are answered from it and the
 * debug file is fetched only when something needs the file (debuginfod,
 * layouts, a rebuild). Else the flight goes on to FETCH. A leaf: the driver
 * (svc_resolve_drive.c) runs the step and goes to the stage it names.
 */
#include "service/resolve/svc_resolver_impl.h"
#include "service/core/svc_build_id.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_log.h"

/* Copies a store value into an 8-byte-aligned buffer of its own. */
static void *own_copy(const stor_blob *b)
{
	void *p = malloc(b->size ? b->size : 1);
	if (p)
		memcpy(p, b->data, b->size);
	return p;
}

static void reject_stored(svc_resolve_flight *f, const sym_error *err)
{
	stor_error serr;
	f->index = NULL;
	f->stored_rejected = true;
	stor_delete_index(f->r->o.store, SVC_STORE_KEY(&f->fl.id), &serr);
	char hex[SYM_BUILD_ID_HEX_MAX], q[320];
	sym_build_id_to_hex(&f->fl.id, hex);
	base_logf(BASE_LOG_INFO, "stored index rejected, rebuilding", "build_id=%s error=%s", hex,
		  base_log_quote(q, sizeof(q), err->msg));
}

void svc_resolve_load_work(svc_resolve_flight *f)
{
	svc_resolver *r = f->r;
	const sym_build_id *id = &f->fl.id;
	stor_blob b;
	stor_error serr;
	stor_meta m;
	if (stor_get_index(r->o.store, SVC_STORE_KEY(id), &b, &serr) != STOR_OK) {
		/* not stored (or unreadable): the S3 tier's when no file is held
		 * here (else BUILD asks it, with the file at hand), or build it */
		f->s3_ask = !(stor_get_meta(r->o.store, SVC_STORE_KEY(id), &m, NULL) == STOR_OK &&
			      m.state == STOR_STATE_PRESENT);
		return;
	}
	void *copy = own_copy(&b);
	size_t size = b.size;
	stor_blob_release(&b);
	if (!copy)
		return;
	sym_error err;
	if (sym_index_load(copy, size, &f->index, &err) != SYM_OK) {
		/* Another format version, or damaged: rebuild from the stored file. */
		free(copy);
		reject_stored(f, &err);
		return;
	}
	f->blob = copy;
	f->blob_size = size;
	f->status = SVC_RESOLVE_OK;
	svc_resolve_rank(f);
	f->from_executable = stor_get_meta(r->o.store, SVC_STORE_KEY(id), &m, NULL) == STOR_OK &&
			     m.state == STOR_STATE_PRESENT && m.kind == STOR_KIND_EXECUTABLE;
}

enum svc_resolve_stage svc_resolve_load_next(svc_resolve_flight *f, bool cancelled)
{
	svc_resolver *r = f->r;
	if (f->stored_rejected)
		r->st.stored_index_rejected++;
	if (!cancelled && f->index) {
		r->st.store_index_hits++;
		return SVC_RESOLVE_STAGE_DONE;
	}
	r->st.store_index_misses++;
	if (cancelled) {
		svc_resolve_flight_fail(f, SVC_RESOLVE_ERROR, "%s", "shutting down");
		return SVC_RESOLVE_STAGE_DONE;
	}
	if (f->s3_ask && svc_resolve_s3_wanted(f)) {
		f->s3_then = SVC_RESOLVE_STAGE_FETCH;
		return SVC_RESOLVE_STAGE_S3;
	}
	return SVC_RESOLVE_STAGE_FETCH;
}
