// SPDX-License-Identifier: Apache-2.0
/*
 * svc_file_write: the ranked write of a file (svc_file_write.h): the held
 * file's rank (its bytes read only when it is a debug file: whether it has
 * lines), the compare, the write, with the identity reserved in its write
 * slot (a list of reservations under the slot's lock: a writer of a
 * reserved identity waits on the slot's condition).
 */
#include "service/core/svc_file_write.h"
#include "service/core/svc_build_id.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WRITE_SLOTS 64

static pthread_mutex_t slots[WRITE_SLOTS] = {
#define M4 PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, \
	   PTHREAD_MUTEX_INITIALIZER
#define M16 M4, M4, M4, M4
	M16, M16, M16, M16
#undef M16
#undef M4
};
static pthread_cond_t conds[WRITE_SLOTS] = {
#define C4 PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, \
	   PTHREAD_COND_INITIALIZER
#define C16 C4, C4, C4, C4
	C16, C16, C16, C16
#undef C16
#undef C4
};
static svc_file_reservation *reserved[WRITE_SLOTS];

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

static unsigned slot_of(const sym_build_id *id)
{
	svc_store_key k = svc_store_key_of(id);
	uint32_t h = 2166136261u;  /* FNV-1a */
	for (size_t i = 0; i < k.len; i++)
		h = (h ^ k.bytes[i]) * 16777619u;
	return h % WRITE_SLOTS;
}

static bool is_reserved(unsigned slot, const sym_build_id *id)
{
	for (const svc_file_reservation *r = reserved[slot]; r; r = r->next)
		if (sym_build_id_equal(&r->id, id))
			return true;
	return false;
}

/* Takes id's slot once no reservation of id is left in it (the slot's lock
 * held on return); false (lock not held) after SVC_FILE_WAIT_MS. */
static bool lock_free(unsigned slot, const sym_build_id *id, stor_error *err)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SVC_FILE_WAIT_MS / 1000;
	pthread_mutex_lock(&slots[slot]);
	while (is_reserved(slot, id))
		if (pthread_cond_timedwait(&conds[slot], &slots[slot], &until) != 0 &&
		    is_reserved(slot, id)) {
			pthread_mutex_unlock(&slots[slot]);
			err->code = STOR_E_IO;
			snprintf(err->msg, sizeof(err->msg),
				 "busy: another write of this identity is still in flight");
			return false;
		}
	return true;
}

static void unreserve_locked(svc_file_reservation *res)
{
	for (svc_file_reservation **p = &reserved[res->slot]; *p; p = &(*p)->next)
		if (*p == res) {
			*p = res->next;
			break;
		}
	pthread_cond_broadcast(&conds[res->slot]);
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

/* The compare; true when the file is to be written. */
static bool decide_locked(stor_db *store, const sym_build_id *id, const void *data, size_t size,
			  bool force, svc_file_outcome *out, stor_error *err)
{
	if (!held_file(store, id, data, size, out, err)) {
		out->verdict = SVC_FILE_FAILED;
		out->stored = err->code;
		return false;
	}
	if (out->verdict == SVC_FILE_SAME)
		return false;
	if (out->held != SVC_RANK_NONE && out->offered <= out->held && !force) {
		out->verdict = SVC_FILE_KEPT;
		return false;
	}
	return true;
}

bool svc_file_decide(stor_db *store, const sym_build_id *id, const stor_meta *meta,
		     const void *data, size_t size, const sym_elf_info *info, bool force,
		     svc_file_reservation *res, svc_file_outcome *out, stor_error *err)
{
	memset(out, 0, sizeof(*out));
	out->offered = svc_file_rank_of(meta->kind, info);
	unsigned slot = slot_of(id);
	if (!lock_free(slot, id, err)) {
		out->verdict = SVC_FILE_FAILED;
		out->stored = err->code;
		return false;
	}
	bool write = decide_locked(store, id, data, size, force, out, err);
	if (write) {
		memset(res, 0, sizeof(*res));
		res->id = *id;
		res->slot = slot;
		res->meta = *meta;
		res->out = *out;
		res->next = reserved[slot];
		reserved[slot] = res;
	}
	pthread_mutex_unlock(&slots[slot]);
	return write;
}

void svc_file_commit(stor_db *store, svc_file_reservation *res, const void *data, size_t size,
		     svc_file_outcome *out, stor_error *err)
{
	*out = res->out;
	pthread_mutex_lock(&slots[res->slot]);
	stor_errc rc = STOR_OK;
	if (out->held_debuginfo && res->meta.kind == STOR_KIND_EXECUTABLE)
		rc = stor_delete(store, SVC_STORE_KEY(&res->id), err);
	if (rc == STOR_OK)
		rc = stor_put_file(store, SVC_STORE_KEY(&res->id), &res->meta, data, size, err);
	out->verdict = rc == STOR_OK ? SVC_FILE_WRITTEN : SVC_FILE_FAILED;
	out->stored = rc;
	unreserve_locked(res);
	pthread_mutex_unlock(&slots[res->slot]);
}

void svc_file_release(svc_file_reservation *res)
{
	pthread_mutex_lock(&slots[res->slot]);
	unreserve_locked(res);
	pthread_mutex_unlock(&slots[res->slot]);
}

void svc_file_write(stor_db *store, const sym_build_id *id, stor_meta *meta, const void *data,
		    size_t size, const sym_elf_info *info, bool force, svc_file_before_fn before,
		    void *before_arg, svc_file_outcome *out, stor_error *err)
{
	svc_file_reservation res;
	if (!svc_file_decide(store, id, meta, data, size, info, force, &res, out, err))
		return;
	if (before && !before(before_arg, meta)) {
		svc_file_release(&res);
		out->verdict = SVC_FILE_REFUSED;
		return;
	}
	svc_file_commit(store, &res, data, size, out, err);
}
