// SPDX-License-Identifier: Apache-2.0
/*
 * stor_db: the RocksDB object store (see stor_db.h for the contract); this
 * file opens and closes it.
 *
 * Layout: column families "debuginfo" (files; blob files, zstd), "index",
 * "meta" (stor_meta records, encoded by stor_meta.c), plus RocksDB's
 * mandatory "default", unused. Keys are the raw build ID bytes.
 *
 * In memory: one stor_entry per build ID that has a record or a pin
 * (stor_entries.c: hash map, LRU list, accounting, eviction, pins). It is
 * rebuilt at open by one scan of "meta", ordered by the persisted last_access.
 * The other files: stor_read.c, stor_write.c, stor_verify.c (whole-store
 * reads), stor_stats.c (counters and metrics), stor_meta.c (records).
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"
#include "storage/stor_shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rocksdb/c.h>

#include "base/base_clock.h"
#include "base/base_vec.h"

const char *const stor_cf_names[CF_COUNT] = {"default", "debuginfo", "index", "meta", "layout",
					     "catalog"};

stor_errc stor_rocks_err(stor_error *err, char *rerr, const char *what)
{
	stor_errc rc = stor_set_err(err, STOR_E_IO, "rocksdb: %s: %s", what, rerr ? rerr : "?");
	rocksdb_free(rerr);
	return rc;
}

stor_errc stor_iter_end(rocksdb_iterator_t *it, stor_errc rc, stor_error *err, const char *what)
{
	char *rerr = NULL;
	rocksdb_iter_get_error(it, &rerr);
	rocksdb_iter_destroy(it);
	if (rerr && rc == STOR_OK)
		return stor_rocks_err(err, rerr, what);
	rocksdb_free(rerr);
	return rc;
}

stor_errc stor_check_id(const uint8_t *id, size_t len, stor_error *err)
{
	if (!id || !stor_id_len_ok(len))
		return stor_set_err(err, STOR_E_INVALID, "store: build ID of %zu bytes", len);
	return STOR_OK;
}

/* ---- open / close ------------------------------------------------------- */

void stor_options_init(stor_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->sync_writes = true;
}

/* Creates path and its parents; false with errno set when it cannot. */
static bool mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return false;
			buf[i] = c;
		}
	}
	return true;
}

static int by_access(const void *a, const void *b)
{
	const stor_entry *x = *(stor_entry *const *)a, *y = *(stor_entry *const *)b;
	return x->last_access < y->last_access ? -1 : x->last_access > y->last_access;
}

/* Rebuilds the LRU list in last_access order: oldest pushed first, newest at head. */
static void order_lru(stor_db *db, stor_entry **all, size_t n)
{
	qsort(all, n, sizeof(*all), by_access);
	db->lru_head = db->lru_tail = NULL;
	for (size_t i = 0; i < n; i++) {
		all[i]->prev = all[i]->next = NULL;
		stor_lru_push_front(db, all[i]);
	}
}

/* Loads every meta record into the in-memory table, then orders the LRU list. */
static stor_errc load_entries(stor_db *db, stor_error *err)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, db->ropts, db->cf[CF_META]);
	base_vec all;   /* stor_entry * */
	base_vec_init(&all, sizeof(stor_entry *), SIZE_MAX / sizeof(stor_entry *));
	stor_errc rc = STOR_OK;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		if (!stor_id_len_ok(klen) ||
		    stor_meta_decode((const uint8_t *)v, vlen, &m, NULL) != STOR_OK) {
			/* Unreadable record: not served; its bytes still count until deleted. */
			fprintf(stderr, "store: ignoring malformed metadata record (%zu-byte key)\n", klen);
			continue;
		}
		stor_entry *e = stor_entry_get(db, (const uint8_t *)k, klen);
		stor_entry **slot = e ? base_vec_push(&all) : NULL;
		if (!slot) {
			rc = stor_set_err(err, STOR_E_NOMEM, "store: out of memory loading metadata");
			break;
		}
		stor_entry_set(db, e, &m, vlen);
		*slot = e;
	}
	rc = stor_iter_end(it, rc, err, "scanning metadata");
	if (rc == STOR_OK && all.len > 1)
		order_lru(db, all.data, all.len);
	base_vec_deinit(&all);
	return rc;
}

/* The options of column family i (all share one block-based table and cache). */
static rocksdb_options_t *cf_options(stor_db *db, int i)
{
	rocksdb_options_t *co = rocksdb_options_create();
	rocksdb_options_set_block_based_table_factory(co, db->table_opts);
	rocksdb_options_set_compression(co, rocksdb_lz4_compression);
	if (i == CF_DEBUGINFO) {
		/* Files go to blob files (separated from the LSM tree), compressed
		 * with zstd, garbage-collected as entries are replaced or evicted. */
		rocksdb_options_set_enable_blob_files(co, 1);
		rocksdb_options_set_min_blob_size(co, 4096);
		rocksdb_options_set_blob_file_size(co, 256ull << 20);
		rocksdb_options_set_blob_compression_type(co, rocksdb_zstd_compression);
		rocksdb_options_set_enable_blob_gc(co, 1);
		rocksdb_options_set_blob_gc_age_cutoff(co, 0.5);
		rocksdb_options_set_write_buffer_size(co, 64ull << 20);
	} else if (i == CF_INDEX) {
		rocksdb_options_set_write_buffer_size(co, 32ull << 20);
	}
	return co;
}

/* Opens RocksDB under o->path with the column families and read/write options. */
static stor_errc open_rocksdb(stor_db *db, const stor_options *o, stor_error *err)
{
	db->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(db->opts, 1);
	rocksdb_options_set_create_missing_column_families(db->opts, 1);
	rocksdb_options_set_keep_log_file_num(db->opts, 4);
	/* RocksDB's info log is ours (no LOG file to fail on a full disk). */
	stor_shim_options(db->opts);
	rocksdb_options_set_manifest_preallocation_size(db->opts, 64 * 1024);
	/* The write-ahead log holds whole files until a flush: past this, the
	 * column families are flushed and it is let go. */
	uint64_t wal = o->max_bytes ? o->max_bytes / 8 : 64ull << 20;
	rocksdb_options_set_max_total_wal_size(db->opts, wal < (4u << 20) ? (4u << 20)
						       : wal > (64u << 20) ? (64u << 20) : wal);
	rocksdb_options_set_max_open_files(db->opts, 256);
	rocksdb_options_increase_parallelism(db->opts, 2);

	db->block_cache = rocksdb_cache_create_lru(32 << 20);
	db->table_opts = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(db->table_opts, db->block_cache);

	for (int i = 0; i < CF_COUNT; i++)
		db->cf_opts[i] = cf_options(db, i);
	char *rerr = NULL;
	db->db = rocksdb_open_column_families(db->opts, o->path, CF_COUNT, stor_cf_names,
					      (const rocksdb_options_t *const *)db->cf_opts,
					      db->cf, &rerr);
	if (!db->db && rerr && (strstr(rerr, "No space left") || strstr(rerr, "NoSpace"))) {
		/* A full disk: serve what is stored, write nothing (stor_space.c). */
		fprintf(stderr, "store: opening %s read-only: %s\n", o->path, rerr);
		rocksdb_free(rerr);
		rerr = NULL;
		db->db = rocksdb_open_for_read_only_column_families(
			db->opts, o->path, CF_COUNT, stor_cf_names,
			(const rocksdb_options_t *const *)db->cf_opts, db->cf, 0, &rerr);
		db->read_only = db->disk_full = db->db != NULL;
	}
	if (!db->db) {
		stor_errc rc = stor_set_err(err, STOR_E_IO, "store: opening %s: %s", o->path,
				       rerr ? rerr : "?");
		rocksdb_free(rerr);
		return rc;
	}
	db->wsync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(db->wsync, o->sync_writes ? 1 : 0);
	db->wnosync = rocksdb_writeoptions_create();
	db->ropts = rocksdb_readoptions_create();
	return STOR_OK;
}

stor_errc stor_open(const stor_options *o, stor_db **out, stor_error *err)
{
	*out = NULL;
	if (!o || !o->path || !*o->path)
		return stor_set_err(err, STOR_E_INVALID, "store: no data directory");
	if (!mkdir_p(o->path))
		return stor_set_err(err, STOR_E_IO, "store: creating %s: %s", o->path, strerror(errno));
	stor_db *db = calloc(1, sizeof(*db));
	if (!db)
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	db->now_ms = o->now_ms ? o->now_ms : base_real_ms;
	db->max_bytes = o->max_bytes;
	db->max_negative = o->max_negative;
	db->path = strdup(o->path);
	if (!db->path) {
		free(db);
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	}
	pthread_mutex_init(&db->mu, NULL);
	pthread_cond_init(&db->cv, NULL);
	stor_entry_map_init(&db->entries);

	stor_errc rc = open_rocksdb(db, o, err);
	if (rc == STOR_OK)
		rc = load_entries(db, err);
	if (rc != STOR_OK) {
		stor_close(db);
		return rc;
	}
	*out = db;
	return STOR_OK;
}

void stor_close(stor_db *db)
{
	if (!db)
		return;
	if (db->db) {
		stor_flush_access(db, NULL);
		for (int i = 0; i < CF_COUNT; i++)
			if (db->cf[i])
				rocksdb_column_family_handle_destroy(db->cf[i]);
		rocksdb_close(db->db);
	}
	for (int i = 0; i < CF_COUNT; i++)
		if (db->cf_opts[i])
			rocksdb_options_destroy(db->cf_opts[i]);
	if (db->table_opts)
		rocksdb_block_based_options_destroy(db->table_opts);
	if (db->block_cache)
		rocksdb_cache_destroy(db->block_cache);
	if (db->opts)
		rocksdb_options_destroy(db->opts);
	if (db->wsync)
		rocksdb_writeoptions_destroy(db->wsync);
	if (db->wnosync)
		rocksdb_writeoptions_destroy(db->wnosync);
	if (db->ropts)
		rocksdb_readoptions_destroy(db->ropts);
	stor_entries_free(db);
	free(db->path);
	pthread_mutex_destroy(&db->mu);
	pthread_cond_destroy(&db->cv);
	free(db);
}

