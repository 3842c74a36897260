// SPDX-License-Identifier: Apache-2.0
/*
 * svc_file_write: the ranked write of a file (svc_file_write.h): the held
 * file's rank (its bytes read only when it is a debug file: whether it has
 * lines), the compare, the write, under the identity's write slot.
 */
#include "service/core/svc_file_write.h"
#include "service/core/svc_build_id.h"

#include <pthread.h>
#include <string.h>

#define WRITE_SLOTS 64

static pthread_mutex_t slots[WRITE_SLOTS] = {
#define M4 PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, \
	   PTHREAD_MUTEX_INITIALIZER
#define M16 M4, M4, M4, M4
	M16, M16, M16, M16
#undef M16
#undef M4
};

static const char *const rank_names[] = {"nothing", "an executable without DWARF",
					 "a debug file without line info",
					 "a debug file with line info"};

const char *svc_file_rank_name(svc_file_rank r)
{
	return (unsigned)r < sizeof(rank_names) / sizeof(rank_names[0]) ? rank_names[r] : "unknown";
}

svc_file_rank svc_file_rank_of(stor_kind kind, const sym_elf_info *info)
{
	if (kind != STOR_KIND_DEBUGINFO)
		return SVC_RANK_EXECUTABLE;
	return info->has_debug_line ? SVC_RANK_LINES : SVC_RANK_NO_LINES;
}

static pthread_mutex_t *slot_of(const sym_build_id *id)
{
	svc_store_key k = svc_store_key_of(id);
	uint32_t h = 2166136261u;  /* FNV-1a */
	for (size_t i = 0; i < k.len; i++)
		h = (h ^ k.bytes[i]) * 16777619u;
	return &slots[h % WRITE_SLOTS];
}

/* What the store holds for id: its rank, and whether it is these bytes.
 * False when the store failed. */
static bool held_file(stor_db *store, const sym_build_id *id, const void *data, size_t size,
		      svc_file_outcome *out, stor_error *err)
{
	stor_meta m;
	stor_errc rc = stor_get_meta(store, SVC_STORE_KEY(id), &m, err);
	if (rc == STOR_E_NOT_FOUND || (rc == STOR_OK && m.state != STOR_STATE_PRESENT))
		return true;  /* nothing held (at most a negative record) */
	if (rc != STOR_OK)
		return false;
	if (m.kind != STOR_KIND_DEBUGINFO && m.size != size) {
		out->held = SVC_RANK_EXECUTABLE;  /* no need to read it */
		return true;
	}
	stor_blob b;
	if ((rc = stor_get_file(store, SVC_STORE_KEY(id), &b, NULL, err)) != STOR_OK)
		return rc == STOR_E_NOT_FOUND;  /* gone meanwhile: nothing held */
	out->held_debuginfo = m.kind == STOR_KIND_DEBUGINFO;
	sym_elf_info info;
	sym_error serr;
	memset(&info, 0, sizeof(info));
	if (m.kind == STOR_KIND_DEBUGINFO && sym_elf_probe(b.data, b.size, &info, &serr) != SYM_OK)
		info.has_debug_line = false;
	out->held = svc_file_rank_of(m.kind, &info);
	if (b.size == size && memcmp(b.data, data, size) == 0)
		out->verdict = SVC_FILE_SAME;
	stor_blob_release(&b);
	return true;
}

static void write_locked(stor_db *store, const sym_build_id *id, stor_meta *meta,
			 const void *data, size_t size, bool force, svc_file_before_fn before,
			 void *before_arg, svc_file_outcome *out, stor_error *err)
{
	if (!held_file(store, id, data, size, out, err)) {
		out->verdict = SVC_FILE_FAILED;
		out->stored = err->code;
		return;
	}
	if (out->verdict == SVC_FILE_SAME)
		return;
	if (out->held != SVC_RANK_NONE && out->offered <= out->held && !force) {
		out->verdict = SVC_FILE_KEPT;
		return;
	}
	if (before && !before(before_arg, meta)) {
		out->verdict = SVC_FILE_REFUSED;
		return;
	}
	stor_errc rc = STOR_OK;
	if (out->held_debuginfo && meta->kind == STOR_KIND_EXECUTABLE)
		rc = stor_delete(store, SVC_STORE_KEY(id), err);
	if (rc == STOR_OK)
		rc = stor_put_file(store, SVC_STORE_KEY(id), meta, data, size, err);
	out->verdict = rc == STOR_OK ? SVC_FILE_WRITTEN : SVC_FILE_FAILED;
	out->stored = rc;
}

void svc_file_write(stor_db *store, const sym_build_id *id, stor_meta *meta, const void *data,
		    size_t size, const sym_elf_info *info, bool force, svc_file_before_fn before,
		    void *before_arg, svc_file_outcome *out, stor_error *err)
{
	memset(out, 0, sizeof(*out));
	out->offered = svc_file_rank_of(meta->kind, info);
	pthread_mutex_t *mu = slot_of(id);
	pthread_mutex_lock(mu);
	write_locked(store, id, meta, data, size, force, before, before_arg, out, err);
	pthread_mutex_unlock(mu);
}
