// SPDX-License-Identifier: Apache-2.0
/*
 * stor_write: the store's writes (stor_db.h): a file, a negative result, an
 * index, deletions. Each is one RocksDB write batch with its metadata record
 * (and the deletion of what it replaces, and of the entries evicted to make
 * room), so a crash leaves every entry whole or absent; the in-memory view
 * (stor_entries.c) changes only once the batch is written.
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rocksdb/c.h>

/*
 * Writes batch, with the deletion of least recently used entries to make room
 * for `incoming` bytes replacing `outgoing`, then updates memory. Mutex held and
 * e acquired; with `unlocked` the mutex is released during the write itself (a
 * large value with fsync), so that pins, reads and other keys' writes go on.
 */
static stor_errc commit(stor_db *db, rocksdb_writebatch_t *batch, stor_entry *e,
			const stor_meta *m, size_t meta_len, bool sync, bool unlocked,
			stor_error *err)
{
	uint64_t incoming = m->size + m->index_size + m->layout_size + meta_len;
	uint64_t outgoing = e->stored ? e->bytes : 0;
	size_t written = 0;  /* the batch as the WAL takes it */
	rocksdb_writebatch_data(batch, &written);
	stor_errc admitted = stor_space_admit(db, written, err);
	if (admitted != STOR_OK)
		return admitted;
	stor_space_refresh(db);
	base_vec victims;
	stor_plan_eviction(db, batch, incoming, outgoing, e, &victims);
	stor_plan_negative_eviction(db, batch,
				    m->state != STOR_STATE_PRESENT && !(e->stored && !e->present),
				    e, &victims);
	char *rerr = NULL;
	if (unlocked)
		pthread_mutex_unlock(&db->mu);
	rocksdb_write(db->db, sync ? db->wsync : db->wnosync, batch, &rerr);
	if (unlocked)
		pthread_mutex_lock(&db->mu);
	if (rerr) {
		stor_cancel_eviction(db, &victims);
		return stor_space_write_failed(db, rerr, err, "writing batch");
	}
	stor_entry_set(db, e, m, meta_len);
	stor_apply_eviction(db, &victims);
	stor_catch_up(db);
	return STOR_OK;
}

/*
 * Adds the metadata record m of id to batch and commits it (then destroys the
 * batch). A blob write (a file or an index) is synced, with the mutex released
 * during the write; a metadata-only one is neither.
 */
static stor_errc commit_meta(stor_db *db, rocksdb_writebatch_t *b, stor_entry *e,
			     const uint8_t *id, size_t len, const stor_meta *m, bool blob,
			     stor_error *err)
{
	uint8_t buf[STOR_META_MAX];
	size_t mlen = stor_meta_encode(m, buf);
	rocksdb_writebatch_put_cf(b, db->cf[CF_META], (const char *)id, len, (const char *)buf, mlen);
	stor_errc rc = commit(db, b, e, m, mlen, blob, blob, err);
	rocksdb_writebatch_destroy(b);
	return rc;
}

/* Locks the store and takes the entry of id for this writer (made first when
 * `make`); NULL, unlocked, when there is none (or no memory for it). */
static stor_entry *begin(stor_db *db, const uint8_t *id, size_t len, bool make)
{
	pthread_mutex_lock(&db->mu);
	stor_entry *e = make ? stor_entry_get(db, id, len) : stor_entry_find(db, id, len);
	if (!e) {
		pthread_mutex_unlock(&db->mu);
		return NULL;
	}
	stor_entry_acquire(db, e);
	return e;
}

/* Gives the entry back to other writers and unlocks; returns rc. */
static stor_errc done(stor_db *db, stor_entry *e, stor_errc rc)
{
	stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

/* The in-memory access time is newer than the persisted one. */
static void keep_access(const stor_entry *e, stor_meta *m)
{
	if (e->last_access > m->last_access)
		m->last_access = e->last_access;
}

stor_errc stor_put_file(stor_db *db, const uint8_t *id, size_t len, const stor_meta *in,
			const void *data, size_t size, stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	if (!in || (in->kind != STOR_KIND_DEBUGINFO && in->kind != STOR_KIND_EXECUTABLE) ||
	    (size && !data) || in->alt_len > STOR_ID_MAX)
		return stor_set_err(err, STOR_E_INVALID, "store: bad file put");
	if (db->max_bytes && size > db->max_bytes)
		return stor_set_err(err, STOR_E_TOO_LARGE,
			       "store: file of %zu bytes exceeds the store bound of %llu bytes", size,
			       (unsigned long long)db->max_bytes);
	stor_meta m = *in;
	m.source[STOR_SOURCE_MAX - 1] = '\0';
	m.last_error[STOR_ERROR_MAX - 1] = '\0';
	m.state = STOR_STATE_PRESENT;
	m.size = size;
	m.index_size = 0;
	m.layout_size = 0;
	m.fetch_time = m.last_access = db->now_ms();

	stor_entry *e = begin(db, id, len, true);
	if (!e)
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	stor_meta old;
	if (e->present && stor_read_meta(db, db->ropts, id, len, &old, NULL) == STOR_OK) {
		if (m.kind == STOR_KIND_EXECUTABLE && old.state == STOR_STATE_PRESENT &&
		    old.kind == STOR_KIND_DEBUGINFO)
			return done(db, e, stor_set_err(err, STOR_E_EXISTS,
							"store: debuginfo held already"));
		if (old.fetch_time >= m.fetch_time)  /* later than the file it replaces */
			m.fetch_time = m.last_access = old.fetch_time + 1;
	}
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	rocksdb_writebatch_put_cf(b, db->cf[CF_DEBUGINFO], (const char *)id, len, data, size);
	rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
	rocksdb_writebatch_delete_cf(b, db->cf[CF_LAYOUT], (const char *)id, len);
	return done(db, e, commit_meta(db, b, e, id, len, &m, true, err));
}

stor_errc stor_put_negative(stor_db *db, const uint8_t *id, size_t len, stor_state state,
			    const char *source, const char *error_text, int64_t expiry_ms,
			    stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	if (state != STOR_STATE_NOT_FOUND && state != STOR_STATE_ERROR &&
	    state != STOR_STATE_TOO_LARGE)
		return stor_set_err(err, STOR_E_INVALID, "store: %s is not a negative state",
			       stor_state_name(state));
	stor_entry *e = begin(db, id, len, true);
	if (!e)
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	stor_meta m;
	int64_t now = db->now_ms();
	bool keep_file = false;
	if (e->present && stor_read_meta(db, db->ropts, id, len, &m, NULL) == STOR_OK &&
	    m.state == STOR_STATE_PRESENT) {
		keep_file = true; /* keep the file; only the search for better failed */
		keep_access(e, &m);
	} else {
		memset(&m, 0, sizeof(m));
		m.state = state;
		m.fetch_time = m.last_access = now;
		snprintf(m.source, sizeof(m.source), "%s", source ? source : "");
	}
	m.neg_expiry = expiry_ms;
	snprintf(m.last_error, sizeof(m.last_error), "%s", error_text ? error_text : "");
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	if (!keep_file) {
		rocksdb_writebatch_delete_cf(b, db->cf[CF_DEBUGINFO], (const char *)id, len);
		rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
		rocksdb_writebatch_delete_cf(b, db->cf[CF_LAYOUT], (const char *)id, len);
	}
	return done(db, e, commit_meta(db, b, e, id, len, &m, false, err));
}

/* Stores a derived blob (the index, or the type layouts) of a PRESENT entry;
 * file_time >= 0: only if built from the file of that fetch_time. */
static stor_errc put_derived(stor_db *db, const uint8_t *id, size_t len, int cf,
			     int64_t file_time, const void *data, size_t size, stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	if (!size || !data)
		return stor_set_err(err, STOR_E_INVALID, "store: empty %s", stor_cf_names[cf]);
	stor_entry *e = begin(db, id, len, false);
	if (!e)
		return stor_set_err(err, STOR_E_NOT_FOUND, "store: no file to index");
	stor_meta m;
	if (!e->present || (rc = stor_read_meta(db, db->ropts, id, len, &m, err)) != STOR_OK ||
	    m.state != STOR_STATE_PRESENT)
		return done(db, e, rc == STOR_OK || rc == STOR_E_NOT_FOUND
					   ? stor_set_err(err, STOR_E_NOT_FOUND, "store: no file to index")
					   : rc);
	if (file_time >= 0 && m.fetch_time != file_time)
		return done(db, e, stor_set_err(err, STOR_E_STALE,
						"store: the file was replaced while its %s was built",
						stor_cf_names[cf]));
	if (db->max_bytes && size + m.size > db->max_bytes)
		return done(db, e, stor_set_err(err, STOR_E_TOO_LARGE,
						"store: %s of %zu bytes exceeds the store bound",
						stor_cf_names[cf], size));
	if (cf == CF_LAYOUT)
		m.layout_size = size;
	else
		m.index_size = size;
	keep_access(e, &m);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	rocksdb_writebatch_put_cf(b, db->cf[cf], (const char *)id, len, data, size);
	return done(db, e, commit_meta(db, b, e, id, len, &m, true, err));
}

stor_errc stor_put_index(stor_db *db, const uint8_t *id, size_t len, const void *data,
			 size_t size, stor_error *err)
{
	return put_derived(db, id, len, CF_INDEX, -1, data, size, err);
}

stor_errc stor_put_index_of(stor_db *db, const uint8_t *id, size_t len, int64_t file_time,
			    const void *data, size_t size, stor_error *err)
{
	return put_derived(db, id, len, CF_INDEX, file_time < 0 ? 0 : file_time, data, size, err);
}

stor_errc stor_put_layout(stor_db *db, const uint8_t *id, size_t len, const void *data,
			  size_t size, stor_error *err)
{
	return put_derived(db, id, len, CF_LAYOUT, -1, data, size, err);
}

stor_errc stor_put_layout_of(stor_db *db, const uint8_t *id, size_t len, int64_t file_time,
			     const void *data, size_t size, stor_error *err)
{
	return put_derived(db, id, len, CF_LAYOUT, file_time < 0 ? 0 : file_time, data, size,
			   err);
}

stor_errc stor_delete_index(stor_db *db, const uint8_t *id, size_t len, stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	stor_entry *e = begin(db, id, len, false);
	if (!e)
		return STOR_OK;
	stor_meta m;
	if (e->has_index && stor_read_meta(db, db->ropts, id, len, &m, NULL) == STOR_OK) {
		m.index_size = 0;
		keep_access(e, &m);
		rocksdb_writebatch_t *b = rocksdb_writebatch_create();
		rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
		rc = commit_meta(db, b, e, id, len, &m, false, err);
	}
	return done(db, e, rc);
}

stor_errc stor_delete(stor_db *db, const uint8_t *id, size_t len, stor_error *err)
{
	stor_errc rc = stor_check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_find(db, id, len);
	if (e)
		stor_entry_acquire(db, e);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	for (int cf = CF_DEBUGINFO; cf < CF_COUNT; cf++)
		rocksdb_writebatch_delete_cf(b, db->cf[cf], (const char *)id, len);
	char *rerr = NULL;
	rocksdb_write(db->db, db->wnosync, b, &rerr);
	rocksdb_writebatch_destroy(b);
	if (rerr)
		rc = stor_rocks_err(err, rerr, "deleting");
	else if (e)
		stor_entry_clear(db, e);
	if (e)
		return done(db, e, rc);
	pthread_mutex_unlock(&db->mu);
	return rc;
}
