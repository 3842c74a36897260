// SPDX-License-Identifier: Apache-2.0
/*
 * svc_index_cache: refcounted LRU of loaded indexes (svc_index_cache.h).
 * A base_hash_map by build ID (the entries in the cache) and a doubly linked
 * LRU list. svc_index_cache_get runs once per mapping of every call.
 */
#include "service/resolve/svc_index_cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_expo.h"
#include "base/base_hash_map.h"

BASE_HASH_MAP(entry_map, sym_build_id, svc_index_entry *, sym_build_id_hash, sym_build_id_equal)

struct svc_index_cache {
	entry_map map;               /* the entries in the cache */
	svc_index_entry *lru_head;   /* least recently used */
	svc_index_entry *lru_tail;   /* most recently used */
	size_t max_bytes;
	svc_index_cache_stats st;
};

svc_index_cache *svc_index_cache_create(size_t max_bytes)
{
	svc_index_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	entry_map_init(&c->map);
	c->max_bytes = max_bytes;
	c->st.max_bytes = max_bytes;
	return c;
}

static void entry_free(svc_index_entry *e)
{
	sym_index_destroy(e->index);
	svc_string_rank_free(&e->strings);
	if (e->free_artifact_)
		e->free_artifact_(e->artifact);
	if (e->free_blob_)
		e->free_blob_(e->blob_);
	free(e);
}

static void lru_unlink(svc_index_cache *c, svc_index_entry *e)
{
	if (e->prev_)
		e->prev_->next_ = e->next_;
	else
		c->lru_head = e->next_;
	if (e->next_)
		e->next_->prev_ = e->prev_;
	else
		c->lru_tail = e->prev_;
	e->prev_ = e->next_ = NULL;
}

static void lru_append(svc_index_cache *c, svc_index_entry *e)
{
	e->next_ = NULL;
	e->prev_ = c->lru_tail;
	if (c->lru_tail)
		c->lru_tail->next_ = e;
	else
		c->lru_head = e;
	c->lru_tail = e;
}

/* Takes e out of the table and the list; frees it when nobody holds it. */
static void detach(svc_index_cache *c, svc_index_entry *e)
{
	entry_map_remove(&c->map, &e->id);
	lru_unlink(c, e);
	e->in_cache_ = false;
	c->st.bytes -= e->bytes;
	c->st.entries--;
	if (e->refs_ == 0)
		entry_free(e);
}

void svc_index_cache_destroy(svc_index_cache *c)
{
	if (!c)
		return;
	svc_index_entry *e = c->lru_head;
	while (e) {
		svc_index_entry *next = e->next_;
		entry_free(e);
		e = next;
	}
	entry_map_deinit(&c->map);
	free(c);
}

static svc_index_entry *find(const svc_index_cache *c, const sym_build_id *id)
{
	svc_index_entry *const *e = entry_map_get(&c->map, id);
	return e ? *e : NULL;
}

svc_index_entry *svc_index_cache_get(svc_index_cache *c, const sym_build_id *id)
{
	svc_index_entry *e = find(c, id);
	if (!e) {
		c->st.misses++;
		return NULL;
	}
	c->st.hits++;
	lru_unlink(c, e);
	lru_append(c, e);
	e->refs_++;
	return e;
}

const svc_index_entry *svc_index_cache_peek(const svc_index_cache *c, const sym_build_id *id)
{
	return find(c, id);
}

static void evict(svc_index_cache *c)
{
	svc_index_entry *e = c->lru_head;
	while (e && c->max_bytes && c->st.bytes > c->max_bytes) {
		svc_index_entry *next = e->next_;
		/* A referenced entry stays: it is in use and would not free memory. */
		if (e->refs_ == 0) {
			detach(c, e);
			c->st.evictions++;
		}
		e = next;
	}
}

/* Keeps e (referenced once) in the cache, in place of an entry of the same id. */
static svc_index_entry *insert(svc_index_cache *c, svc_index_entry *e)
{
	e->refs_ = 1;
	c->st.inserts++;
	if (c->max_bytes && e->bytes > c->max_bytes)
		return e; /* served to this caller, never kept */
	svc_index_entry *old = find(c, &e->id);
	if (old)
		detach(c, old);
	svc_index_entry **slot = entry_map_put(&c->map, &e->id, NULL);
	if (!slot) {
		entry_free(e);
		return NULL;
	}
	*slot = e;
	lru_append(c, e);
	e->in_cache_ = true;
	c->st.bytes += e->bytes;
	c->st.entries++;
	evict(c);
	return e;
}

svc_index_entry *svc_index_cache_put(svc_index_cache *c, const sym_build_id *id, void *blob,
				     size_t blob_size, void (*free_blob)(void *), sym_index *index)
{
	svc_string_rank strings;
	svc_string_rank_index(&strings, index);
	return svc_index_cache_put_ranked(c, id, blob, blob_size, free_blob, index, &strings);
}

svc_index_entry *svc_index_cache_put_ranked(svc_index_cache *c, const sym_build_id *id,
					    void *blob, size_t blob_size,
					    void (*free_blob)(void *), sym_index *index,
					    svc_string_rank *strings)
{
	svc_index_entry *e = calloc(1, sizeof(*e));
	if (!e) {
		svc_string_rank_free(strings);
		sym_index_destroy(index);
		if (free_blob)
			free_blob(blob);
		return NULL;
	}
	e->id = *id;
	e->index = index;
	sym_index_get_info(index, &e->info);
	e->strings = *strings;  /* none: responses hash instead */
	memset(strings, 0, sizeof(*strings));
	e->blob_ = blob;
	e->free_blob_ = free_blob;
	e->bytes = blob_size + sizeof(*e) + e->strings.bytes;
	return insert(c, e);
}

svc_index_entry *svc_index_cache_put_artifact(svc_index_cache *c, const sym_build_id *id,
					      void *blob, size_t blob_size,
					      void (*free_blob)(void *), void *artifact,
					      void (*free_artifact)(void *))
{
	svc_index_entry *e = calloc(1, sizeof(*e));
	if (!e) {
		if (free_artifact)
			free_artifact(artifact);
		if (free_blob)
			free_blob(blob);
		return NULL;
	}
	e->id = *id;
	e->artifact = artifact;
	e->free_artifact_ = free_artifact;
	e->blob_ = blob;
	e->free_blob_ = free_blob;
	e->bytes = blob_size + sizeof(*e);
	return insert(c, e);
}

void svc_index_entry_ref(svc_index_entry *e)
{
	e->refs_++;
}

void svc_index_entry_release(svc_index_cache *c, svc_index_entry *e)
{
	if (!e)
		return;
	e->refs_--;
	if (e->refs_ == 0 && !e->in_cache_)
		entry_free(e);
	else if (e->refs_ == 0)
		evict(c);
}

void svc_index_cache_remove(svc_index_cache *c, const sym_build_id *id)
{
	svc_index_entry *e = find(c, id);
	if (e)
		detach(c, e);
}

void svc_index_cache_get_stats(const svc_index_cache *c, svc_index_cache_stats *out)
{
	*out = c->st;
}

void svc_index_cache_metrics_render(const svc_index_cache *c, base_buf *out)
{
	const svc_index_cache_stats *cs = &c->st;
	base_expo_family(out, "symbolizer_index_cache_bytes", "gauge",
			 "Bytes of the loaded indexes in memory.");
	base_expo_u64(out, "symbolizer_index_cache_bytes", "", cs->bytes);
	base_expo_family(out, "symbolizer_index_cache_max_bytes", "gauge", "Bound of the index cache.");
	base_expo_u64(out, "symbolizer_index_cache_max_bytes", "", cs->max_bytes);
	base_expo_family(out, "symbolizer_index_cache_entries", "gauge", "Indexes loaded in memory.");
	base_expo_u64(out, "symbolizer_index_cache_entries", "", cs->entries);
	base_expo_family(out, "symbolizer_index_cache_evictions_total", "counter",
			 "Indexes dropped from memory to stay under the bound.");
	base_expo_u64(out, "symbolizer_index_cache_evictions_total", "", cs->evictions);
}
