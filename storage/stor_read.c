// SPDX-License-Identifier: Apache-2.0
/*
 * stor_read: the store's reads (stor_db.h): metadata, files and indexes, each
 * read counting as an access; access times kept in memory and persisted at a
 * coarse granularity (stor_persist_access, stor_flush_access).
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#include <pthread.h>
#include <string.h>

#include <rocksdb/c.h>

#define ACCESS_PERSIST_MS (60 * 1000) /* granularity of persisted last_access */

stor_errc stor_read_meta(stor_db *db, const rocksdb_readoptions_t *ro, const uint8_t *id,
			   size_t len, stor_meta *m, stor_error *err)
{
	char *rerr = NULL;
	size_t vlen = 0;
	char *v = rocksdb_get_cf(db->db, ro, db->cf[CF_META], (const char *)id, len, &vlen, &rerr);
	if (rerr)
		return stor_rocks_err(err, rerr, "reading metadata");
	if (!v)
		return stor_set_err(err, STOR_E_NOT_FOUND, "store: no entry");
	stor_errc rc = stor_meta_decode((const uint8_t *)v, vlen, m, err);
	rocksdb_free(v);
	return rc;
}

stor_errc stor_get_meta(stor_db *db, const uint8_t *id, size_t len, stor_meta *out,
			stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	rc = stor_read_meta(db, db->ropts, id, len, out, err);
	if (rc == STOR_OK) {
		/* The in-memory access time is newer than the persisted one. */
		pthread_mutex_lock(&db->mu);
		stor_entry *e = stor_entry_find(db, id, len);
		if (e && e->last_access > out->last_access)
			out->last_access = e->last_access;
		pthread_mutex_unlock(&db->mu);
	}
	return rc;
}

void stor_persist_access(stor_db *db, stor_entry *e)
{
	stor_meta m;
	if (db->disk_full || db->read_only ||
	    stor_read_meta(db, db->ropts, e->id, e->id_len, &m, NULL) != STOR_OK)
		return;
	m.last_access = e->last_access;
	uint8_t buf[STOR_META_MAX];
	size_t n = stor_meta_encode(&m, buf);
	char *rerr = NULL;
	rocksdb_put_cf(db->db, db->wnosync, db->cf[CF_META], (const char *)e->id, e->id_len,
		       (const char *)buf, n, &rerr);
	if (rerr) {
		rocksdb_free(rerr);
		return;
	}
	/* Record length may not change (same strings), so the accounting holds. */
	e->persisted_access = e->last_access;
}

static void touch(stor_db *db, const uint8_t *id, size_t len)
{
	int64_t now = db->now_ms();
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_find(db, id, len);
	if (e && e->stored) {
		if (now > e->last_access)
			e->last_access = now;
		stor_lru_unlink(db, e);
		stor_lru_push_front(db, e);
		if (!e->busy && e->last_access - e->persisted_access >= ACCESS_PERSIST_MS)
			stor_persist_access(db, e);
	}
	pthread_mutex_unlock(&db->mu);
}

static stor_errc get_pinned(stor_db *db, const rocksdb_readoptions_t *ro, int cf,
			    const uint8_t *id, size_t len, stor_blob *out, const char *what,
			    stor_error *err)
{
	char *rerr = NULL;
	rocksdb_pinnableslice_t *ps =
		rocksdb_get_pinned_cf(db->db, ro, db->cf[cf], (const char *)id, len, &rerr);
	if (rerr)
		return stor_rocks_err(err, rerr, what);
	if (!ps)
		return stor_set_err(err, STOR_E_NOT_FOUND, "store: no %s", what);
	size_t n = 0;
	out->data = rocksdb_pinnableslice_value(ps, &n);
	out->size = n;
	out->handle_ = ps;
	return STOR_OK;
}

void stor_blob_release(stor_blob *blob)
{
	if (!blob || !blob->handle_)
		return;
	rocksdb_pinnableslice_destroy(blob->handle_);
	blob->handle_ = NULL;
	blob->data = NULL;
	blob->size = 0;
}

stor_errc stor_get_file(stor_db *db, const uint8_t *id, size_t len, stor_blob *out,
			stor_meta *meta, stor_error *err)
{
	memset(out, 0, sizeof(*out));
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	stor_meta m;
	rc = stor_read_meta(db, ro, id, len, &m, err);
	if (rc == STOR_OK && m.state != STOR_STATE_PRESENT)
		rc = stor_set_err(err, STOR_E_NOT_FOUND, "store: no file (%s)", stor_state_name(m.state));
	if (rc == STOR_OK)
		rc = get_pinned(db, ro, CF_DEBUGINFO, id, len, out, "file", err);
	if (rc == STOR_OK && out->size != m.size) {
		stor_blob_release(out);
		rc = stor_set_err(err, STOR_E_CORRUPT, "store: file of %zu bytes, metadata says %llu",
			     out->size, (unsigned long long)m.size);
	}
	rocksdb_readoptions_destroy(ro);
	rocksdb_release_snapshot(db->db, snap);
	if (rc == STOR_OK) {
		touch(db, id, len);
		if (meta)
			*meta = m;
	}
	return rc;
}

stor_errc stor_get_index(stor_db *db, const uint8_t *id, size_t len, stor_blob *out,
			 stor_error *err)
{
	memset(out, 0, sizeof(*out));
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	rc = get_pinned(db, db->ropts, CF_INDEX, id, len, out, "index", err);
	if (rc == STOR_OK)
		touch(db, id, len);
	return rc;
}

stor_errc stor_get_layout(stor_db *db, const uint8_t *id, size_t len, stor_blob *out,
			  stor_error *err)
{
	memset(out, 0, sizeof(*out));
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	rc = get_pinned(db, db->ropts, CF_LAYOUT, id, len, out, "layout", err);
	if (rc == STOR_OK)
		touch(db, id, len);
	return rc;
}

stor_errc stor_flush_access(stor_db *db, stor_error *err)
{
	pthread_mutex_lock(&db->mu);
	for (stor_entry *e = db->lru_head; e; e = e->next)
		if (!e->busy && e->last_access > e->persisted_access)
			stor_persist_access(db, e);
	pthread_mutex_unlock(&db->mu);
	(void)err;
	return STOR_OK;
}
