/*
 * stor_db: the RocksDB object store (see stor_db.h for the contract).
 *
 * Layout: column families "debuginfo" (files; blob files, zstd), "index",
 * "meta" (stor_meta records, encoded by stor_meta.c), plus RocksDB's
 * mandatory "default", unused. Keys are the raw build ID bytes.
 *
 * In memory: one stor_entry per build ID that has a record or a pin
 * (stor_entries.c: hash table, LRU list, accounting, eviction). It is rebuilt
 * at open by one scan of "meta", ordered by the persisted last_access.
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <rocksdb/c.h>

#define ACCESS_PERSIST_MS (60 * 1000) /* granularity of persisted last_access */

static const char *const cf_names[CF_COUNT] = {"default", "debuginfo", "index", "meta"};

/* Turns a RocksDB error string (freed here) into STOR_E_IO. */
static stor_errc rocks_err(stor_error *err, char *rerr, const char *what)
{
	stor_errc rc = stor_set_err(err, STOR_E_IO, "rocksdb: %s: %s", what, rerr ? rerr : "?");
	rocksdb_free(rerr);
	return rc;
}

static int64_t real_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static stor_errc check_id(const uint8_t *id, size_t len, stor_error *err)
{
	if (!id || len < 1 || len > STOR_ID_MAX)
		return stor_set_err(err, STOR_E_INVALID, "store: build ID of %zu bytes", len);
	return STOR_OK;
}

/* ---- open / close ------------------------------------------------------- */

void stor_options_init(stor_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->sync_writes = true;
}

static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	}
	return 0;
}

static int by_access(const void *a, const void *b)
{
	const stor_entry *x = *(stor_entry *const *)a, *y = *(stor_entry *const *)b;
	return x->last_access < y->last_access ? -1 : x->last_access > y->last_access;
}

/* Loads every meta record into the in-memory table, then orders the LRU list. */
static stor_errc load_entries(stor_db *db, stor_error *err)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, db->ropts, db->cf[CF_META]);
	stor_entry **all = NULL;
	size_t n = 0, cap = 0;
	stor_errc rc = STOR_OK;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		if (klen < 1 || klen > STOR_ID_MAX ||
		    stor_meta_decode((const uint8_t *)v, vlen, &m, NULL) != STOR_OK) {
			/* Unreadable record: not served; its bytes still count until deleted. */
			fprintf(stderr, "store: ignoring malformed metadata record (%zu-byte key)\n", klen);
			continue;
		}
		stor_entry *e = stor_entry_get(db, (const uint8_t *)k, klen);
		if (!e || (n == cap && !(all = realloc(all, (cap = cap ? cap * 2 : 256) * sizeof(*all))))) {
			rc = stor_set_err(err, STOR_E_NOMEM, "store: out of memory loading metadata");
			break;
		}
		stor_entry_set(db, e, &m, vlen);
		all[n++] = e;
	}
	char *rerr = NULL;
	rocksdb_iter_get_error(it, &rerr);
	rocksdb_iter_destroy(it);
	if (rerr && rc == STOR_OK)
		rc = rocks_err(err, rerr, "scanning metadata");
	else
		rocksdb_free(rerr);
	/* Rebuild the list in last_access order: oldest pushed first, newest at head. */
	if (rc == STOR_OK && n > 1) {
		qsort(all, n, sizeof(*all), by_access);
		db->lru_head = db->lru_tail = NULL;
		for (size_t i = 0; i < n; i++) {
			all[i]->prev = all[i]->next = NULL;
			stor_lru_push_front(db, all[i]);
		}
	}
	free(all);
	return rc;
}

stor_errc stor_open(const stor_options *o, stor_db **out, stor_error *err)
{
	*out = NULL;
	if (!o || !o->path || !*o->path)
		return stor_set_err(err, STOR_E_INVALID, "store: no data directory");
	if (mkdir_p(o->path) != 0)
		return stor_set_err(err, STOR_E_IO, "store: creating %s: %s", o->path, strerror(errno));
	stor_db *db = calloc(1, sizeof(*db));
	if (!db)
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	db->now_ms = o->now_ms ? o->now_ms : real_now_ms;
	db->max_bytes = o->max_bytes;
	pthread_mutex_init(&db->mu, NULL);
	pthread_cond_init(&db->cv, NULL);
	db->n_buckets = 256;
	db->buckets = calloc(db->n_buckets, sizeof(*db->buckets));
	if (!db->buckets) {
		stor_close(db);
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	}

	db->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(db->opts, 1);
	rocksdb_options_set_create_missing_column_families(db->opts, 1);
	rocksdb_options_set_keep_log_file_num(db->opts, 4);
	rocksdb_options_set_max_open_files(db->opts, 256);
	rocksdb_options_increase_parallelism(db->opts, 2);

	db->block_cache = rocksdb_cache_create_lru(32 << 20);
	db->table_opts = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(db->table_opts, db->block_cache);

	for (int i = 0; i < CF_COUNT; i++) {
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
		db->cf_opts[i] = co;
	}
	char *rerr = NULL;
	db->db = rocksdb_open_column_families(db->opts, o->path, CF_COUNT, cf_names,
					      (const rocksdb_options_t *const *)db->cf_opts,
					      db->cf, &rerr);
	if (!db->db) {
		stor_errc rc = stor_set_err(err, STOR_E_IO, "store: opening %s: %s", o->path,
				       rerr ? rerr : "?");
		rocksdb_free(rerr);
		stor_close(db);
		return rc;
	}
	db->wsync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(db->wsync, o->sync_writes ? 1 : 0);
	db->wnosync = rocksdb_writeoptions_create();
	db->ropts = rocksdb_readoptions_create();
	stor_errc rc = load_entries(db, err);
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
	if (db->buckets) {
		for (size_t i = 0; i < db->n_buckets; i++) {
			stor_entry *e = db->buckets[i];
			while (e) {
				stor_entry *next = e->hnext;
				free(e);
				e = next;
			}
		}
		free(db->buckets);
	}
	pthread_mutex_destroy(&db->mu);
	pthread_cond_destroy(&db->cv);
	free(db);
}

/* ---- reads ------------------------------------------------------------- */

/* Reads and decodes the meta record with the given read options. */
static stor_errc read_meta(stor_db *db, const rocksdb_readoptions_t *ro, const uint8_t *id,
			   size_t len, stor_meta *m, stor_error *err)
{
	char *rerr = NULL;
	size_t vlen = 0;
	char *v = rocksdb_get_cf(db->db, ro, db->cf[CF_META], (const char *)id, len, &vlen, &rerr);
	if (rerr)
		return rocks_err(err, rerr, "reading metadata");
	if (!v)
		return stor_set_err(err, STOR_E_NOT_FOUND, "store: no entry");
	stor_errc rc = stor_meta_decode((const uint8_t *)v, vlen, m, err);
	rocksdb_free(v);
	return rc;
}

stor_errc stor_get_meta(stor_db *db, const uint8_t *id, size_t len, stor_meta *out,
			stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	rc = read_meta(db, db->ropts, id, len, out, err);
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

/* Writes the meta record with a newer last_access (mutex held). */
static void persist_access(stor_db *db, stor_entry *e)
{
	stor_meta m;
	if (read_meta(db, db->ropts, e->id, e->id_len, &m, NULL) != STOR_OK)
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
			persist_access(db, e);
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
		return rocks_err(err, rerr, what);
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
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	stor_meta m;
	rc = read_meta(db, ro, id, len, &m, err);
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
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	rc = get_pinned(db, db->ropts, CF_INDEX, id, len, out, "index", err);
	if (rc == STOR_OK)
		touch(db, id, len);
	return rc;
}

/* ---- writes ------------------------------------------------------------ */

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
	uint64_t incoming = m->size + m->index_size + meta_len;
	uint64_t outgoing = e->stored ? e->bytes : 0;
	stor_entry **victims;
	size_t nv = stor_plan_eviction(db, batch, incoming, outgoing, e, &victims);
	char *rerr = NULL;
	if (unlocked)
		pthread_mutex_unlock(&db->mu);
	rocksdb_write(db->db, sync ? db->wsync : db->wnosync, batch, &rerr);
	if (unlocked)
		pthread_mutex_lock(&db->mu);
	if (rerr) {
		stor_cancel_eviction(db, victims, nv);
		return rocks_err(err, rerr, "writing batch");
	}
	stor_entry_set(db, e, m, meta_len);
	stor_apply_eviction(db, victims, nv);
	stor_catch_up(db);
	return STOR_OK;
}

stor_errc stor_put_file(stor_db *db, const uint8_t *id, size_t len, const stor_meta *in,
			const void *data, size_t size, stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
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
	m.fetch_time = m.last_access = db->now_ms();

	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_get(db, id, len);
	if (!e) {
		pthread_mutex_unlock(&db->mu);
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	}
	stor_entry_acquire(db, e);
	if (m.kind == STOR_KIND_EXECUTABLE && e->present) {
		stor_meta old;
		if (read_meta(db, db->ropts, id, len, &old, NULL) == STOR_OK &&
		    old.state == STOR_STATE_PRESENT && old.kind == STOR_KIND_DEBUGINFO) {
			stor_entry_release(db, e);
			pthread_mutex_unlock(&db->mu);
			return stor_set_err(err, STOR_E_EXISTS, "store: debuginfo held already");
		}
	}
	uint8_t buf[STOR_META_MAX];
	size_t mlen = stor_meta_encode(&m, buf);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	rocksdb_writebatch_put_cf(b, db->cf[CF_DEBUGINFO], (const char *)id, len, data, size);
	rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
	rocksdb_writebatch_put_cf(b, db->cf[CF_META], (const char *)id, len, (const char *)buf, mlen);
	rc = commit(db, b, e, &m, mlen, true, true, err);
	rocksdb_writebatch_destroy(b);
	stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

stor_errc stor_put_negative(stor_db *db, const uint8_t *id, size_t len, stor_state state,
			    const char *source, const char *error_text, int64_t expiry_ms,
			    stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	if (state != STOR_STATE_NOT_FOUND && state != STOR_STATE_ERROR &&
	    state != STOR_STATE_TOO_LARGE)
		return stor_set_err(err, STOR_E_INVALID, "store: %s is not a negative state",
			       stor_state_name(state));
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_get(db, id, len);
	if (!e) {
		pthread_mutex_unlock(&db->mu);
		return stor_set_err(err, STOR_E_NOMEM, "store: out of memory");
	}
	stor_entry_acquire(db, e);
	stor_meta m;
	int64_t now = db->now_ms();
	bool keep_file = false;
	if (e->present && read_meta(db, db->ropts, id, len, &m, NULL) == STOR_OK &&
	    m.state == STOR_STATE_PRESENT) {
		keep_file = true; /* keep the file; only the search for better failed */
		if (e->last_access > m.last_access)
			m.last_access = e->last_access;
	} else {
		memset(&m, 0, sizeof(m));
		m.state = state;
		m.fetch_time = m.last_access = now;
		snprintf(m.source, sizeof(m.source), "%s", source ? source : "");
	}
	m.neg_expiry = expiry_ms;
	snprintf(m.last_error, sizeof(m.last_error), "%s", error_text ? error_text : "");
	uint8_t buf[STOR_META_MAX];
	size_t mlen = stor_meta_encode(&m, buf);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	if (!keep_file) {
		rocksdb_writebatch_delete_cf(b, db->cf[CF_DEBUGINFO], (const char *)id, len);
		rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
	}
	rocksdb_writebatch_put_cf(b, db->cf[CF_META], (const char *)id, len, (const char *)buf, mlen);
	rc = commit(db, b, e, &m, mlen, false, false, err);
	rocksdb_writebatch_destroy(b);
	stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

stor_errc stor_put_index(stor_db *db, const uint8_t *id, size_t len, const void *data,
			 size_t size, stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	if (!size || !data)
		return stor_set_err(err, STOR_E_INVALID, "store: empty index");
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_find(db, id, len);
	if (!e) {
		pthread_mutex_unlock(&db->mu);
		return stor_set_err(err, STOR_E_NOT_FOUND, "store: no file to index");
	}
	stor_entry_acquire(db, e);
	stor_meta m;
	if (!e->present || (rc = read_meta(db, db->ropts, id, len, &m, err)) != STOR_OK ||
	    m.state != STOR_STATE_PRESENT) {
		stor_entry_release(db, e);
		pthread_mutex_unlock(&db->mu);
		return rc == STOR_OK || rc == STOR_E_NOT_FOUND
			       ? stor_set_err(err, STOR_E_NOT_FOUND, "store: no file to index")
			       : rc;
	}
	if (db->max_bytes && size + m.size > db->max_bytes) {
		stor_entry_release(db, e);
		pthread_mutex_unlock(&db->mu);
		return stor_set_err(err, STOR_E_TOO_LARGE, "store: index of %zu bytes exceeds the store bound",
			       size);
	}
	m.index_size = size;
	if (e->last_access > m.last_access)
		m.last_access = e->last_access;
	uint8_t buf[STOR_META_MAX];
	size_t mlen = stor_meta_encode(&m, buf);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	rocksdb_writebatch_put_cf(b, db->cf[CF_INDEX], (const char *)id, len, data, size);
	rocksdb_writebatch_put_cf(b, db->cf[CF_META], (const char *)id, len, (const char *)buf, mlen);
	rc = commit(db, b, e, &m, mlen, true, true, err);
	rocksdb_writebatch_destroy(b);
	stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

stor_errc stor_delete_index(stor_db *db, const uint8_t *id, size_t len, stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
	if (rc != STOR_OK)
		return rc;
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_find(db, id, len);
	if (!e) {
		pthread_mutex_unlock(&db->mu);
		return STOR_OK;
	}
	stor_entry_acquire(db, e);
	stor_meta m;
	if (e->has_index && read_meta(db, db->ropts, id, len, &m, NULL) == STOR_OK) {
		m.index_size = 0;
		if (e->last_access > m.last_access)
			m.last_access = e->last_access;
		uint8_t buf[STOR_META_MAX];
		size_t mlen = stor_meta_encode(&m, buf);
		rocksdb_writebatch_t *b = rocksdb_writebatch_create();
		rocksdb_writebatch_delete_cf(b, db->cf[CF_INDEX], (const char *)id, len);
		rocksdb_writebatch_put_cf(b, db->cf[CF_META], (const char *)id, len,
					  (const char *)buf, mlen);
		rc = commit(db, b, e, &m, mlen, false, false, err);
		rocksdb_writebatch_destroy(b);
	}
	stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

stor_errc stor_delete(stor_db *db, const uint8_t *id, size_t len, stor_error *err)
{
	stor_errc rc = check_id(id, len, err);
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
		rc = rocks_err(err, rerr, "deleting");
	else if (e)
		stor_entry_clear(db, e);
	if (e)
		stor_entry_release(db, e);
	pthread_mutex_unlock(&db->mu);
	return rc;
}

/* ---- pins, stats, iteration ------------------------------------------- */

void stor_pin(stor_db *db, const uint8_t *id, size_t len)
{
	if (check_id(id, len, NULL) != STOR_OK)
		return;
	pthread_mutex_lock(&db->mu);
	stor_entry *e = stor_entry_get(db, id, len);
	if (e && e->pins++ == 0)
		db->pinned++;
	pthread_mutex_unlock(&db->mu);
}

void stor_unpin(stor_db *db, const uint8_t *id, size_t len)
{
	if (check_id(id, len, NULL) != STOR_OK)
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

void stor_get_stats(stor_db *db, stor_stats *out)
{
	pthread_mutex_lock(&db->mu);
	out->bytes = db->bytes;
	out->max_bytes = db->max_bytes;
	out->entries = db->stored_entries;
	out->files = db->files;
	out->indexes = db->indexes;
	out->evictions = db->evictions;
	out->pinned = db->pinned;
	pthread_mutex_unlock(&db->mu);
}

stor_errc stor_foreach(stor_db *db,
		       bool (*fn)(void *arg, const uint8_t *id, size_t id_len, const stor_meta *m),
		       void *arg, stor_error *err)
{
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[CF_META]);
	stor_errc rc = STOR_OK;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		if (klen < 1 || klen > STOR_ID_MAX) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: metadata key of %zu bytes", klen);
			break;
		}
		if ((rc = stor_meta_decode((const uint8_t *)v, vlen, &m, err)) != STOR_OK)
			break;
		if (!fn(arg, (const uint8_t *)k, klen, &m))
			break;
	}
	char *rerr = NULL;
	rocksdb_iter_get_error(it, &rerr);
	if (rerr && rc == STOR_OK)
		rc = rocks_err(err, rerr, "iterating metadata");
	else
		rocksdb_free(rerr);
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	rocksdb_release_snapshot(db->db, snap);
	return rc;
}

stor_errc stor_flush_access(stor_db *db, stor_error *err)
{
	pthread_mutex_lock(&db->mu);
	for (stor_entry *e = db->lru_head; e; e = e->next)
		if (!e->busy && e->last_access > e->persisted_access)
			persist_access(db, e);
	pthread_mutex_unlock(&db->mu);
	(void)err;
	return STOR_OK;
}

/* Hex of a key for messages. */
static void key_hex(const char *k, size_t len, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t n = len < STOR_ID_MAX ? len : STOR_ID_MAX;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[(uint8_t)k[i] >> 4];
		out[2 * i + 1] = d[(uint8_t)k[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Every key of column family cf must have a meta record whose size field agrees. */
static stor_errc verify_cf(stor_db *db, const rocksdb_readoptions_t *ro, int cf, stor_error *err)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[cf]);
	stor_errc rc = STOR_OK;
	char hex[2 * STOR_ID_MAX + 1];
	for (rocksdb_iter_seek_to_first(it); rc == STOR_OK && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		rocksdb_iter_value(it, &vlen);
		key_hex(k, klen, hex);
		stor_meta m;
		if (klen < 1 || klen > STOR_ID_MAX) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s key of %zu bytes", cf_names[cf], klen);
		} else if (read_meta(db, ro, (const uint8_t *)k, klen, &m, err) != STOR_OK) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s has no readable metadata",
				     cf_names[cf], hex);
		} else if (m.state != STOR_STATE_PRESENT) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s held for a %s entry",
				     cf_names[cf], hex, stor_state_name(m.state));
		} else if (vlen != (cf == CF_DEBUGINFO ? m.size : m.index_size)) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s is %zu bytes, metadata says %llu",
				     cf_names[cf], hex, vlen,
				     (unsigned long long)(cf == CF_DEBUGINFO ? m.size : m.index_size));
		}
	}
	char *rerr = NULL;
	rocksdb_iter_get_error(it, &rerr);
	if (rerr && rc == STOR_OK)
		rc = rocks_err(err, rerr, "verifying");
	else
		rocksdb_free(rerr);
	rocksdb_iter_destroy(it);
	return rc;
}

stor_errc stor_verify(stor_db *db, stor_error *err)
{
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	rocksdb_readoptions_set_verify_checksums(ro, 1);
	stor_errc rc = verify_cf(db, ro, CF_DEBUGINFO, err);
	if (rc == STOR_OK)
		rc = verify_cf(db, ro, CF_INDEX, err);
	/* And the other way: metadata promising a file or index must have it. */
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[CF_META]);
	char hex[2 * STOR_ID_MAX + 1];
	for (rocksdb_iter_seek_to_first(it); rc == STOR_OK && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		key_hex(k, klen, hex);
		if (klen < 1 || klen > STOR_ID_MAX || stor_meta_decode((const uint8_t *)v, vlen, &m, err)) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: metadata of %s unreadable", hex);
			break;
		}
		for (int cf = CF_DEBUGINFO; cf <= CF_INDEX && rc == STOR_OK; cf++) {
			bool want = cf == CF_DEBUGINFO ? m.state == STOR_STATE_PRESENT : m.index_size > 0;
			char *rerr = NULL;
			size_t n = 0;
			char *val = rocksdb_get_cf(db->db, ro, db->cf[cf], k, klen, &n, &rerr);
			if (rerr)
				rc = rocks_err(err, rerr, "verifying");
			else if (want && !val)
				rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s of %s missing", cf_names[cf], hex);
			rocksdb_free(val);
		}
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	rocksdb_release_snapshot(db->db, snap);
	return rc;
}
