// SPDX-License-Identifier: Apache-2.0
/*
 * stor_entries: the store's in-memory view (stor_db_impl.h): one stor_entry
 * per build ID that has a record or a pin, in a base_hash_map (keyed by the
 * entry's own id bytes) and a doubly linked LRU list (head = most recent),
 * with each entry's logical size, so eviction never reads RocksDB to decide;
 * and the pins. Every function runs with db->mu held (stor_pin and stor_unpin
 * take it).
 */
#include "storage/stor_db_impl.h"

#include <stdlib.h>
#include <string.h>

stor_entry *stor_entry_find(stor_db *db, const uint8_t *id, size_t len)
{
	stor_key key = {id, len};
	stor_entry **e = stor_entry_map_get(&db->entries, &key);
	return e ? *e : NULL;
}

stor_entry *stor_entry_get(stor_db *db, const uint8_t *id, size_t len)
{
	stor_entry *e = stor_entry_find(db, id, len);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	memcpy(e->id, id, len);
	e->id_len = (uint8_t)len;
	stor_key key = {e->id, len};
	stor_entry **slot = stor_entry_map_put(&db->entries, &key, NULL);
	if (!slot) {
		free(e);
		return NULL;
	}
	*slot = e;
	return e;
}

void stor_entries_free(stor_db *db)
{
	size_t pos = 0;
	stor_entry_map_entry *me;
	while ((me = stor_entry_map_next(&db->entries, &pos)))
		free(me->value);
	stor_entry_map_deinit(&db->entries);
}

void stor_lru_unlink(stor_db *db, stor_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else if (db->lru_head == e)
		db->lru_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else if (db->lru_tail == e)
		db->lru_tail = e->prev;
	e->prev = e->next = NULL;
}

void stor_lru_push_front(stor_db *db, stor_entry *e)
{
	e->prev = NULL;
	e->next = db->lru_head;
	if (db->lru_head)
		db->lru_head->prev = e;
	db->lru_head = e;
	if (!db->lru_tail)
		db->lru_tail = e;
}

/* Frees e when nothing keeps it (no record, no pin). */
void stor_entry_maybe_free(stor_db *db, stor_entry *e)
{
	if (e->stored || e->pins || e->busy || e->waiters)
		return;
	stor_key key = {e->id, e->id_len};
	stor_entry_map_remove(&db->entries, &key);
	free(e);
}

/* Records the new accounting of e after a successful write. */
void stor_entry_set(stor_db *db, stor_entry *e, const stor_meta *m, size_t meta_len)
{
	if (e->stored) {
		db->bytes -= e->bytes;
		db->files -= e->present;
		db->indexes -= e->has_index;
		stor_lru_unlink(db, e);
	} else {
		db->stored_entries++;
	}
	e->stored = true;
	e->present = m->state == STOR_STATE_PRESENT;
	e->has_index = m->index_size > 0;
	e->bytes = m->size + m->index_size + m->layout_size + meta_len;
	e->last_access = m->last_access;
	e->persisted_access = m->last_access;
	db->bytes += e->bytes;
	db->files += e->present;
	db->indexes += e->has_index;
	stor_lru_push_front(db, e);
}

void stor_entry_clear(stor_db *db, stor_entry *e)
{
	if (!e->stored)
		return;
	db->bytes -= e->bytes;
	db->files -= e->present;
	db->indexes -= e->has_index;
	db->stored_entries--;
	stor_lru_unlink(db, e);
	e->stored = e->present = e->has_index = false;
	e->bytes = 0;
}

/*
 * Adds to batch the deletion of least recently used entries until `incoming`
 * more bytes fit (skipping pinned ones and `keep`). The victims are collected
 * in *victims (stor_entry *; apply or cancel frees it) and cleared only once
 * the batch is written. Returns how many.
 */
size_t stor_plan_eviction(stor_db *db, rocksdb_writebatch_t *batch, uint64_t incoming,
			  uint64_t outgoing, const stor_entry *keep, base_vec *victims)
{
	base_vec_init(victims, sizeof(stor_entry *), SIZE_MAX / sizeof(stor_entry *));
	if (!db->max_bytes)
		return 0;
	/* The bound is the disk's: what RocksDB holds beyond the entries (WAL,
	 * files not yet collected) counts too (stor_space.c). */
	uint64_t total = db->bytes - outgoing + incoming + db->disk_overhead;
	for (stor_entry *e = db->lru_tail; e && total > db->max_bytes; e = e->prev) {
		if (e->pins || e->busy || e == keep)
			continue;
		stor_entry **slot = base_vec_push(victims);
		if (!slot)
			break;
		*slot = e;
		e->busy = true; /* until the batch is written */
		total -= e->bytes;
		for (int cf = CF_DEBUGINFO; cf < CF_COUNT; cf++)
			rocksdb_writebatch_delete_cf(batch, db->cf[cf], (const char *)e->id, e->id_len);
	}
	return victims->len;
}

void stor_plan_negative_eviction(stor_db *db, rocksdb_writebatch_t *batch, bool new_negative,
				 const stor_entry *keep, base_vec *victims)
{
	if (!db->max_negative)
		return;
	uint64_t n = db->stored_entries - db->files + (new_negative ? 1 : 0);
	for (stor_entry *e = db->lru_tail; e && n > db->max_negative; e = e->prev) {
		if (e->present || e->pins || e->busy || e == keep)
			continue;
		stor_entry **slot = base_vec_push(victims);
		if (!slot)
			break;
		*slot = e;
		e->busy = true; /* until the batch is written */
		n--;
		for (int cf = CF_DEBUGINFO; cf < CF_COUNT; cf++)
			rocksdb_writebatch_delete_cf(batch, db->cf[cf], (const char *)e->id, e->id_len);
	}
}

/* The batch was written: the victims are gone. */
void stor_apply_eviction(stor_db *db, base_vec *victims)
{
	for (size_t i = 0; i < victims->len; i++) {
		stor_entry *e = BASE_VEC_AT(victims, stor_entry *, i);
		e->busy = false;
		stor_entry_clear(db, e);
		db->evictions++;
		stor_entry_maybe_free(db, e);
	}
	if (victims->len)
		pthread_cond_broadcast(&db->cv);
	base_vec_deinit(victims);
}

/* The batch failed: the victims stay. */
void stor_cancel_eviction(stor_db *db, base_vec *victims)
{
	for (size_t i = 0; i < victims->len; i++)
		BASE_VEC_AT(victims, stor_entry *, i)->busy = false;
	if (victims->len)
		pthread_cond_broadcast(&db->cv);
	base_vec_deinit(victims);
}

/* Waits until no other thread writes e, then marks it as ours (mutex held). */
void stor_entry_acquire(stor_db *db, stor_entry *e)
{
	e->waiters++;
	while (e->busy)
		pthread_cond_wait(&db->cv, &db->mu);
	e->waiters--;
	e->busy = true;
}

void stor_entry_release(stor_db *db, stor_entry *e)
{
	e->busy = false;
	pthread_cond_broadcast(&db->cv);
	stor_entry_maybe_free(db, e);
}

/* Evicts until the store is back under its bound, as far as pins allow
 * (after puts that raced, or pins that kept it over). Mutex held; small write. */
void stor_catch_up(stor_db *db)
{
	if (!db->max_bytes || db->bytes <= db->max_bytes || db->disk_full || db->read_only)
		return;
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	base_vec victims;
	size_t nv = stor_plan_eviction(db, b, 0, 0, NULL, &victims);
	char *rerr = NULL;
	if (nv)
		rocksdb_write(db->db, db->wnosync, b, &rerr);
	if (rerr) {
		rocksdb_free(rerr);
		stor_cancel_eviction(db, &victims);
	} else {
		stor_apply_eviction(db, &victims);
	}
	rocksdb_writebatch_destroy(b);
}


/* ---- pins ---- */

void stor_pin(stor_db *db, const uint8_t *id, size_t len)
{
	if (stor_check_id(id, len, NULL) != STOR_OK)
		return;
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_get(db, id, len);
	if (e && e->pins++ == 0)
		db->pinned++;
	pthread_mutex_unlock(&db->mu);
}

void stor_unpin(stor_db *db, const uint8_t *id, size_t len)
{
	if (stor_check_id(id, len, NULL) != STOR_OK)
		return;
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_find(db, id, len);
	if (e && e->pins > 0 && --e->pins == 0) {
		db->pinned--;
		stor_entry_maybe_free(db, e);
		/* Pins may have kept the store over its bound: catch up now. */
		stor_catch_up(db);
	}
	pthread_mutex_unlock(&db->mu);
}
