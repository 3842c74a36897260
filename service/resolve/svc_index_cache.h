/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_index_cache: the loaded indexes, in memory, by build ID, least recently
 * used first out, bounded by bytes (--index-cache-bytes). The resolver keeps
 * one for each kind of derived artifact (svc_artifact_kind): the symbol
 * indexes in this one, the layout indexes in one of their own.
 *
 * An entry owns its blob and the sym_index over it. Calls take a reference
 * (svc_index_cache_get / _put) while they look addresses up, on the loop or
 * on a worker, and give it back on the loop with svc_index_entry_release();
 * an entry is freed only when it is out of the cache and nobody holds it, so
 * eviction never pulls an index from under a running lookup. Loop thread only
 * (references are counted there; workers only read the index).
 */
#ifndef SVC_INDEX_CACHE_H
#define SVC_INDEX_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/resolve/svc_string_rank.h"
#include "symbolizer/sym_index.h"

typedef struct svc_index_cache svc_index_cache;

typedef struct svc_index_entry {
	sym_build_id id;
	sym_index *index;
	sym_index_info info;
	svc_string_rank strings;  /* the index's string ordinals (base NULL: none) */
	size_t bytes;             /* the blob's size: what the cache bound counts */
	/*
	 * Set by svc_resolver for an index built from an executable alone
	 * (symbols, no debug info): when it next looks for debug info (monotonic
	 * ms); 0 for an index with debug info. Loop thread only.
	 */
	int64_t recheck_ms;
	/* Another kind of derived artifact than a symbol index (index NULL):
	 * its object (svc_index_cache_put_artifact). */
	void *artifact;
	unsigned kind;            /* the owner's tag (svc_resolver: the svc_artifact_kind) */
	/* private */
	void (*free_artifact_)(void *artifact);
	void *blob_;
	void (*free_blob_)(void *blob);
	unsigned refs_;
	bool in_cache_;
	struct svc_index_entry *prev_, *next_;
} svc_index_entry;

typedef struct svc_index_cache_stats {
	uint64_t hits, misses, inserts, evictions;
	size_t bytes, entries, max_bytes;
} svc_index_cache_stats;

svc_index_cache *svc_index_cache_create(size_t max_bytes);
/* Entries still referenced are freed too: release every reference first. */
void svc_index_cache_destroy(svc_index_cache *c);

/* A referenced entry (most recently used now), or NULL (counted as a miss). */
svc_index_entry *svc_index_cache_get(svc_index_cache *c, const sym_build_id *id);

/* The entry of id without using it (no reference, no recency, not counted;
 * valid until the cache next changes), or NULL. For status pages. */
const svc_index_entry *svc_index_cache_peek(const svc_index_cache *c, const sym_build_id *id);

/*
 * Adds a loaded index (taking ownership of blob, freed with free_blob, and of
 * index; blob_size is what the bound counts) and returns it referenced. When
 * the build ID is present already, the new entry replaces it (the old one
 * lives on while referenced). An index larger than the whole bound is returned
 * referenced but not kept. NULL only when out of memory (blob and index are
 * freed then).
 */
svc_index_entry *svc_index_cache_put(svc_index_cache *c, const sym_build_id *id, void *blob,
				     size_t blob_size, void (*free_blob)(void *), sym_index *index);
/* The same with the index's string ordinals numbered already (on the worker
 * that loaded or built it, not on the loop): *strings is moved into the entry
 * (zeroed here); an empty one leaves the entry's responses to hash. */
svc_index_entry *svc_index_cache_put_ranked(svc_index_cache *c, const sym_build_id *id,
					    void *blob, size_t blob_size,
					    void (*free_blob)(void *), sym_index *index,
					    svc_string_rank *strings);

/*
 * The same for an artifact of another kind than a symbol index (index NULL):
 * artifact, freed with free_artifact, over blob.
 */
svc_index_entry *svc_index_cache_put_artifact(svc_index_cache *c, const sym_build_id *id,
					      void *blob, size_t blob_size,
					      void (*free_blob)(void *), void *artifact,
					      void (*free_artifact)(void *));

/* One more reference to an entry already held. */
void svc_index_entry_ref(svc_index_entry *e);
void svc_index_entry_release(svc_index_cache *c, svc_index_entry *e);

/* Drops the build ID from the cache (it lives on while referenced). */
void svc_index_cache_remove(svc_index_cache *c, const sym_build_id *id);

void svc_index_cache_get_stats(const svc_index_cache *c, svc_index_cache_stats *out);

/* Appends the cache's families to the /metrics exposition: symbolizer_index_cache_bytes,
 * _max_bytes, _entries and _evictions_total. */
void svc_index_cache_metrics_render(const svc_index_cache *c, base_buf *out);

#endif
