/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_db: the object store of the service, embedded RocksDB under a data dir.
 *
 * One entry per build ID (raw bytes, 1..64), made of
 *   - a file: the debug info of that build ID, or only its executable when no
 *     source had debug info ("debuginfo" column family, values in RocksDB blob
 *     files, zstd-compressed);
 *   - an index blob built from that file ("index" column family);
 *   - metadata ("meta" column family, stor_meta below): state, kind, source,
 *     sizes, times, negative-cache expiry, last error, dwz supplementary ID.
 * A file and its metadata are written in one write batch (the stale index is
 * deleted in the same batch), and an index and the metadata that accounts for
 * it likewise, so a crash (kill -9) leaves every entry whole or absent.
 *
 * Size bound: the sum of the logical sizes (file + index + metadata record) of
 * all entries is kept under stor_options.max_bytes; when a put would go over,
 * least recently used entries are deleted first, never one that is pinned
 * (stor_pin: an in-flight request is using it) nor the one being written.
 * Recency is kept in memory, persisted in metadata at a coarse granularity, and
 * rebuilt from the metadata when the store is opened. Negative records are
 * bounded by count too (stor_options.max_negative, least recently used out),
 * so a flood of unknown build IDs cannot grow the store or its opening time.
 *
 * Thread safety: every function may be called from any thread. Reads go to
 * RocksDB without a lock; writes and the in-memory LRU are serialized by one
 * mutex. A blob write with sync_writes syncs the WAL, so it blocks: call puts
 * from worker threads, not from an event loop, when the blobs are large.
 *
 * Build IDs here are raw bytes; this module includes nothing from symbolizer/.
 */
#ifndef STOR_DB_H
#define STOR_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"

#define STOR_ID_MAX 66          /* bytes of an identity's key (sym_build_id_key) */
#define STOR_GNU_ID_MAX 64      /* a GNU build ID's key: its bytes */

/* A key length the store takes: 1..64 (a GNU build ID's bytes) or 66 (any
 * other identity kind's key, docs/internals/identities.md). */
static inline bool stor_id_len_ok(size_t len)
{
	return (len >= 1 && len <= STOR_GNU_ID_MAX) || len == STOR_ID_MAX;
}
#define STOR_SOURCE_MAX 512     /* bytes of a source name, NUL included */
#define STOR_ERROR_MAX 256      /* bytes of an error text, NUL included */

typedef enum stor_errc {
	STOR_OK = 0,
	STOR_E_NOMEM,      /* allocation failed */
	STOR_E_INVALID,    /* bad argument (build ID length, sizes, state) */
	STOR_E_IO,         /* RocksDB or the file system failed */
	STOR_E_NOT_FOUND,  /* no such entry (or no such part of it) */
	STOR_E_CORRUPT,    /* a stored record fails its checks */
	STOR_E_TOO_LARGE,  /* larger than the store's whole size bound */
	STOR_E_EXISTS,     /* refused: the store holds a better file already */
	STOR_E_NOSPACE,    /* this write does not fit on the disk (others still may) */
	STOR_E_STALE,      /* a derived blob built from a file the store no longer holds */
} stor_errc;

typedef struct stor_error {
	stor_errc code;
	char msg[256];
} stor_error;

/* A short stable name for a code: "io", "not_found", ... */
const char *stor_errc_name(stor_errc code);

typedef enum stor_state {
	STOR_STATE_NONE = 0,      /* nothing known (never stored on its own) */
	STOR_STATE_PRESENT,       /* a file is held (see stor_meta.kind) */
	STOR_STATE_NOT_FOUND,     /* no source had it (negative cache until neg_expiry) */
	STOR_STATE_ERROR,         /* sources failed (negative cache, shorter) */
	STOR_STATE_TOO_LARGE,     /* over the size cap (negative cache) */
} stor_state;

typedef enum stor_kind {
	STOR_KIND_NONE = 0,
	STOR_KIND_DEBUGINFO,      /* a file with DWARF (separate debug file or unstripped) */
	STOR_KIND_EXECUTABLE,     /* only the executable: .symtab/.dynsym symbolization */
} stor_kind;

const char *stor_state_name(stor_state s);  /* "present", "not_found", ... */
const char *stor_kind_name(stor_kind k);    /* "debuginfo", "executable", "none" */

/*
 * The metadata of one build ID. Times are Unix milliseconds.
 * For a PRESENT entry of kind EXECUTABLE, neg_expiry/last_error describe the
 * search for debug info that failed: once neg_expiry has passed, a fetcher looks
 * again, and a debuginfo put replaces the executable (and its index).
 */
typedef struct stor_meta {
	stor_state state;
	stor_kind kind;
	uint64_t size;            /* bytes of the file held (0 when none) */
	uint64_t index_size;      /* bytes of the index blob (0 when none) */
	uint64_t layout_size;     /* bytes of the type-layout blob (0 when none) */
	int64_t fetch_time;       /* when the file (or the negative result) was stored */
	int64_t last_access;      /* last read (persisted at a coarse granularity) */
	int64_t neg_expiry;       /* until then, do not ask the sources again */
	uint8_t alt_len;          /* dwz supplementary build ID (0: none) */
	uint8_t alt_id[STOR_ID_MAX];
	char source[STOR_SOURCE_MAX];     /* directory or upstream URL it came from */
	char last_error[STOR_ERROR_MAX];  /* text of the last failure ("" none) */
} stor_meta;

typedef struct stor_options {
	const char *path;        /* data dir; created if missing */
	uint64_t max_bytes;      /* bound on the logical size of all entries; 0 = none */
	/* Bound on the negative entries (NOT_FOUND, ERROR, TOO_LARGE records
	 * without a file); past it the least recently used go. 0 = none. */
	uint64_t max_negative;
	bool sync_writes;        /* fsync the WAL on each file/index write (default true) */
	int64_t (*now_ms)(void); /* clock for metadata times; NULL = the real time */
} stor_options;

typedef struct stor_stats {
	uint64_t bytes;          /* logical size of all entries */
	uint64_t max_bytes;
	uint64_t entries;        /* entries with a record in the store */
	uint64_t files;          /* PRESENT entries */
	uint64_t indexes;        /* entries with an index */
	uint64_t evictions;      /* entries evicted since open */
	uint64_t pinned;         /* build IDs pinned right now */
	uint64_t negatives;      /* entries with a negative record (no file) */
	uint64_t max_negative;
} stor_stats;

/* A value read from the store; release with stor_blob_release(). */
typedef struct stor_blob {
	const void *data;
	size_t size;
	void *handle_;           /* private */
} stor_blob;

typedef struct stor_db stor_db;

void stor_options_init(stor_options *opts);

/* Opens (creating if needed) the store under opts->path. */
stor_errc stor_open(const stor_options *opts, stor_db **out, stor_error *err);

/* Persists pending access times and closes. NULL is a no-op. */
void stor_close(stor_db *db);

/* Metadata of a build ID; STOR_E_NOT_FOUND when the store knows nothing of it. */
stor_errc stor_get_meta(stor_db *db, const uint8_t *id, size_t id_len, stor_meta *out,
			stor_error *err);

/*
 * Stores a file and its metadata in one batch, deleting any older index.
 * From *meta the call takes kind (DEBUGINFO or EXECUTABLE), source, alt_len/alt_id,
 * neg_expiry and last_error; it sets state PRESENT, size, fetch_time, last_access.
 * An EXECUTABLE never replaces a held DEBUGINFO: that returns STOR_E_EXISTS and
 * changes nothing. May evict other entries to stay under max_bytes.
 */
stor_errc stor_put_file(stor_db *db, const uint8_t *id, size_t id_len, const stor_meta *meta,
			const void *data, size_t size, stor_error *err);

/*
 * Records a negative result (state NOT_FOUND, ERROR or TOO_LARGE) valid until
 * expiry_ms. When a file is held, the file stays: only neg_expiry and last_error
 * of its metadata change (the search for something better failed).
 */
stor_errc stor_put_negative(stor_db *db, const uint8_t *id, size_t id_len, stor_state state,
			    const char *source, const char *error_text, int64_t expiry_ms,
			    stor_error *err);

/* Reads the file and the metadata that goes with it, from one snapshot.
 * meta may be NULL. Counts as an access. */
stor_errc stor_get_file(stor_db *db, const uint8_t *id, size_t id_len, stor_blob *out,
			stor_meta *meta, stor_error *err);

/* Stores the index of a PRESENT entry (STOR_E_NOT_FOUND otherwise), updating the
 * metadata in the same batch. May evict other entries. */
stor_errc stor_put_index(stor_db *db, const uint8_t *id, size_t id_len, const void *data,
			 size_t size, stor_error *err);

/*
 * The same, for an index built from the file whose stor_meta.fetch_time was
 * file_time (read with it: stor_get_file's meta): STOR_E_STALE, nothing
 * written, when the store holds another file now (replaced while the index
 * was built). Every file put gets a fetch_time later than the one it
 * replaces, so the time names the exact file.
 */
stor_errc stor_put_index_of(stor_db *db, const uint8_t *id, size_t id_len, int64_t file_time,
			    const void *data, size_t size, stor_error *err);

/* Reads the index blob. Counts as an access. */
stor_errc stor_get_index(stor_db *db, const uint8_t *id, size_t id_len, stor_blob *out,
			 stor_error *err);

/* Deletes everything stored for a build ID (no error when nothing was). */
/* The type-layout blob of a PRESENT entry (its own column family), like the index;
 * replaced with the file, kept when the index is deleted. */
stor_errc stor_put_layout(stor_db *db, const uint8_t *id, size_t id_len, const void *data,
			  size_t size, stor_error *err);
stor_errc stor_get_layout(stor_db *db, const uint8_t *id, size_t id_len, stor_blob *out,
			  stor_error *err);
/* The layouts built from the file of fetch_time file_time (stor_put_index_of). */
stor_errc stor_put_layout_of(stor_db *db, const uint8_t *id, size_t id_len, int64_t file_time,
			     const void *data, size_t size, stor_error *err);

stor_errc stor_delete(stor_db *db, const uint8_t *id, size_t id_len, stor_error *err);

/* Deletes only the index (e.g. one of an older version), keeping the file. */
stor_errc stor_delete_index(stor_db *db, const uint8_t *id, size_t id_len, stor_error *err);

/*
 * Pins protect a build ID from eviction while something uses it (a fetch in
 * flight, an index build, a response being sent). Pins nest; every stor_pin
 * needs one stor_unpin. Pinning a build ID the store does not hold yet is fine.
 */
void stor_pin(stor_db *db, const uint8_t *id, size_t id_len);
void stor_unpin(stor_db *db, const uint8_t *id, size_t id_len);

void stor_blob_release(stor_blob *blob);

void stor_get_stats(stor_db *db, stor_stats *out);

/*
 * Appends the store's families to a /metrics exposition (Prometheus text):
 * symbolizer_store_bytes, _max_bytes, _entries, _indexes, _evictions_total.
 * Any thread (takes the store's mutex, like stor_get_stats).
 */
void stor_db_metrics_render(stor_db *db, base_buf *out);

/*
 * Calls fn for each stored entry's metadata, in key order, from one snapshot;
 * fn returns false to stop. For tools and tests (it reads every record).
 */
stor_errc stor_foreach(stor_db *db,
		       bool (*fn)(void *arg, const uint8_t *id, size_t id_len, const stor_meta *m),
		       void *arg, stor_error *err);

/*
 * Checks the store's invariants by reading everything: each file and index has
 * its metadata, sizes agree, a PRESENT entry has its file, a negative one has
 * none. STOR_E_CORRUPT with a message naming the first violation. For tests and
 * operators (it is slow on a big store).
 */
stor_errc stor_verify(stor_db *db, stor_error *err);

/* Writes access times that are only in memory yet (also done by stor_close). */
stor_errc stor_flush_access(stor_db *db, stor_error *err);

#endif
