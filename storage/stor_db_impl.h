/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_db_impl: what the store's files share inside storage/: the column
 * families, the store object, the helpers of stor_db.c and stor_read.c, and
 * the in-memory entries (hash map, LRU list, accounting, eviction, pins) that
 * stor_entries.c keeps. Not for use outside storage/.
 */
#ifndef STOR_DB_IMPL_H
#define STOR_DB_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include <rocksdb/c.h>

#include "base/base_hash.h"
#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "storage/stor_db.h"

enum { CF_DEFAULT, CF_DEBUGINFO, CF_INDEX, CF_META, CF_LAYOUT, CF_CATALOG, CF_COUNT };

extern const char *const stor_cf_names[CF_COUNT];

typedef struct stor_entry {
	uint8_t id[STOR_ID_MAX];
	uint8_t id_len;
	bool stored;              /* has a meta record in RocksDB */
	bool has_index;
	bool present;             /* state PRESENT */
	uint32_t pins;
	bool busy;                /* a write of this entry is in progress */
	uint32_t waiters;         /* threads waiting for busy to clear */
	uint64_t bytes;           /* logical size: file + index + meta record */
	int64_t last_access;      /* in memory */
	int64_t persisted_access; /* as in the meta record */
	struct stor_entry *prev, *next; /* LRU list, only when stored */
} stor_entry;

/* The entries map's key: a build ID's bytes (in the map, the entry's own id). */
typedef struct stor_key {
	const uint8_t *id;
	size_t len;
} stor_key;

static inline uint64_t stor_key_hash(const stor_key *k)
{
	return base_hash_bytes(k->id, k->len);
}

static inline bool stor_key_eq(const stor_key *a, const stor_key *b)
{
	return a->len == b->len && memcmp(a->id, b->id, a->len) == 0;
}

BASE_HASH_MAP(stor_entry_map, stor_key, stor_entry *, stor_key_hash, stor_key_eq)

struct stor_db {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_options_t *cf_opts[CF_COUNT];
	rocksdb_column_family_handle_t *cf[CF_COUNT];
	rocksdb_writeoptions_t *wsync, *wnosync;
	rocksdb_readoptions_t *ropts;
	rocksdb_cache_t *block_cache;
	rocksdb_block_based_table_options_t *table_opts;
	int64_t (*now_ms)(void);
	uint64_t max_bytes;
	uint64_t max_negative;    /* bound on negative records (0: none) */
	char *path;               /* the data dir */

	/* stor_space.c, under mu */
	bool disk_full;           /* writes refused until there is room */
	bool read_only;           /* opened read-only on a full disk */
	int64_t disk_checked_ms;  /* when free space was last looked at, while full */
	int64_t disk_measured_ms; /* when disk_overhead was last measured */
	uint64_t disk_overhead;   /* disk bytes beyond db->bytes (WAL, garbage), counted
				     against max_bytes */
	uint64_t write_errors;
	uint64_t space_refused;  /* writes refused as larger than the disk can take */

	pthread_mutex_t mu;
	pthread_cond_t cv;        /* signalled when an entry stops being busy */
	stor_entry_map entries;
	stor_entry *lru_head, *lru_tail;
	uint64_t bytes, stored_entries, files, indexes, evictions, pinned;
};

/* stor_space.c (see there): may a write of `incoming` bytes go ahead? STOR_OK,
 * or with err set: STOR_E_IO when the disk is full, STOR_E_NOSPACE when this
 * write does not fit (smaller ones still may). Mutex held. */
stor_errc stor_space_admit(stor_db *db, uint64_t incoming, stor_error *err);
/* A RocksDB write failed with rerr (freed here): "disk full" when it is ENOSPC. */
stor_errc stor_space_write_failed(stor_db *db, char *rerr, stor_error *err, const char *what);
/* Bytes the data dir takes on disk (as du counts them). */
uint64_t stor_space_disk_bytes(stor_db *db);
/* Measures disk_overhead again when it is older than a few seconds. Mutex held. */
void stor_space_refresh(stor_db *db);

/* stor_db.c: a RocksDB error string (freed here) as STOR_E_IO; the end of a
 * scan (the iterator destroyed, its error, if rc is still OK, as rc); a build
 * ID's length checked. */
stor_errc stor_rocks_err(stor_error *err, char *rerr, const char *what);
stor_errc stor_iter_end(rocksdb_iterator_t *it, stor_errc rc, stor_error *err, const char *what);
stor_errc stor_check_id(const uint8_t *id, size_t len, stor_error *err);

/* stor_read.c: the meta record read with the given options and decoded; the
 * in-memory last_access of e written to its record (mutex held). */
stor_errc stor_read_meta(stor_db *db, const rocksdb_readoptions_t *ro, const uint8_t *id,
			 size_t len, stor_meta *m, stor_error *err);
void stor_persist_access(stor_db *db, stor_entry *e);

/* stor_entries.c, every function with db->mu held (but stor_entries_free, at close). */
/* The entry of a build ID, or NULL; stor_entry_get() makes it (NULL: no memory). */
stor_entry *stor_entry_find(stor_db *db, const uint8_t *id, size_t len);
stor_entry *stor_entry_get(stor_db *db, const uint8_t *id, size_t len);
/* The LRU list (head: most recently used). */
void stor_lru_unlink(stor_db *db, stor_entry *e);
void stor_lru_push_front(stor_db *db, stor_entry *e);
/* Frees e when nothing keeps it (no record, no pin, no writer, no waiter). */
void stor_entry_maybe_free(stor_db *db, stor_entry *e);
/* The accounting of e after a write of its record (meta_len bytes), or its deletion. */
void stor_entry_set(stor_db *db, stor_entry *e, const stor_meta *m, size_t meta_len);
void stor_entry_clear(stor_db *db, stor_entry *e);
/*
 * Eviction in three steps: plan (deletions of least recently used entries
 * added to batch until incoming more bytes fit, victims marked busy), then
 * apply once the batch is written, or cancel when it failed.
 */
/* Adds to victims the least recently used negative records past
 * max_negative, counting one more when new_negative (skipping keep). */
void stor_plan_negative_eviction(stor_db *db, rocksdb_writebatch_t *batch, bool new_negative,
				 const stor_entry *keep, base_vec *victims);
size_t stor_plan_eviction(stor_db *db, rocksdb_writebatch_t *batch, uint64_t incoming,
			  uint64_t outgoing, const stor_entry *keep, base_vec *victims);
void stor_apply_eviction(stor_db *db, base_vec *victims);
void stor_cancel_eviction(stor_db *db, base_vec *victims);
/* One writer per entry: acquire waits until no other thread writes it. */
void stor_entry_acquire(stor_db *db, stor_entry *e);
void stor_entry_release(stor_db *db, stor_entry *e);
/* Evicts until the store is under its bound again, as far as pins allow. */
void stor_catch_up(stor_db *db);
/* Frees every entry and the map (stor_close). */
void stor_entries_free(stor_db *db);

#endif
