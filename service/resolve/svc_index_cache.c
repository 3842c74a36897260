/*
 * svc_index_cache: refcounted LRU of loaded indexes (svc_index_cache.h).
 * A chained hash table by build ID and a doubly linked LRU list.
 */
#include "service/resolve/svc_index_cache.h"

#include <stdlib.h>
#include <string.h>

struct svc_index_cache {
	svc_index_entry **buckets;
	size_t n_buckets;            /* power of two */
	svc_index_entry *lru_head;   /* least recently used */
	svc_index_entry *lru_tail;   /* most recently used */
	size_t max_bytes;
	svc_index_cache_stats st;
};

static size_t hash_id(const sym_build_id *id)
{
	return (size_t)sym_build_id_hash(id);
}

svc_index_cache *svc_index_cache_create(size_t max_bytes)
{
	svc_index_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->n_buckets = 256;
	c->buckets = calloc(c->n_buckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	c->max_bytes = max_bytes;
	c->st.max_bytes = max_bytes;
	return c;
}

static void entry_free(svc_index_entry *e)
{
	sym_index_destroy(e->index);
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
	svc_index_entry **pp = &c->buckets[hash_id(&e->id) & (c->n_buckets - 1)];
	while (*pp && *pp != e)
		pp = &(*pp)->hnext_;
	if (*pp)
		*pp = e->hnext_;
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
	free(c->buckets);
	free(c);
}

static svc_index_entry *find(const svc_index_cache *c, const sym_build_id *id)
{
	svc_index_entry *e = c->buckets[hash_id(id) & (c->n_buckets - 1)];
	while (e && !sym_build_id_equal(&e->id, id))
		e = e->hnext_;
	return e;
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

static void grow(svc_index_cache *c)
{
	size_t n = c->n_buckets * 2;
	svc_index_entry **b = calloc(n, sizeof(*b));
	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < c->n_buckets; i++) {
		svc_index_entry *e = c->buckets[i];
		while (e) {
			svc_index_entry *next = e->hnext_;
			size_t h = hash_id(&e->id) & (n - 1);
			e->hnext_ = b[h];
			b[h] = e;
			e = next;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->n_buckets = n;
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

svc_index_entry *svc_index_cache_put(svc_index_cache *c, const sym_build_id *id, void *blob,
				     size_t blob_size, void (*free_blob)(void *), sym_index *index)
{
	svc_index_entry *e = calloc(1, sizeof(*e));
	if (!e) {
		sym_index_destroy(index);
		if (free_blob)
			free_blob(blob);
		return NULL;
	}
	e->id = *id;
	e->index = index;
	sym_index_get_info(index, &e->info);
	e->blob_ = blob;
	e->free_blob_ = free_blob;
	e->bytes = blob_size + sizeof(*e);
	e->refs_ = 1;
	c->st.inserts++;
	if (c->max_bytes && e->bytes > c->max_bytes)
		return e; /* served to this caller, never kept */
	svc_index_entry *old = find(c, id);
	if (old)
		detach(c, old);
	if (c->st.entries + 1 > c->n_buckets)
		grow(c);
	size_t h = hash_id(id) & (c->n_buckets - 1);
	e->hnext_ = c->buckets[h];
	c->buckets[h] = e;
	lru_append(c, e);
	e->in_cache_ = true;
	c->st.bytes += e->bytes;
	c->st.entries++;
	evict(c);
	return e;
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
