// SPDX-License-Identifier: Apache-2.0
/*
 * svc_response_tables: the memory of the response tables (svc_response.h,
 * svc_response_impl.h): hash tables emptied by a generation stamp, the dense
 * slots of an index, the budget they are charged to, the pool.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "service/resolve/svc_string_rank.h"
#include "service/symbolize/svc_response_impl.h"
#include "service/symbolize/svc_response_json.h"

/* Room for bytes more in this call's budget (sets oom when there is none). */
static bool charge(svc_response *r, size_t bytes)
{
	if (r->t->bytes + bytes > r->budget) {
		r->oom = true;
		return false;
	}
	r->t->bytes += bytes;
	return true;
}

static bool table_grow(svc_response *r, struct table *tb)
{
	uint32_t gen = r->t->gen;
	size_t cap = tb->cap ? tb->cap * 2 : 1024;
	if (!charge(r, (cap - tb->cap) * sizeof(struct slot)))
		return false;
	struct slot *s = calloc(cap, sizeof(*s));
	if (!s) {
		r->oom = true;
		return false;
	}
	for (size_t i = 0; i < tb->cap; i++) {
		const struct slot *o = &tb->slots[i];
		if (o->gen != gen)
			continue;
		size_t j = svc_response_mix(o->k1, o->k2) & (cap - 1);
		while (s[j].gen == gen)
			j = (j + 1) & (cap - 1);
		s[j] = *o;
	}
	free(tb->slots);
	tb->slots = s;
	tb->cap = cap;
	return true;
}

/*
 * The slot of (k1, k2): in use (gen current) when present; else the one to
 * claim with svc_response_table_claim(). NULL when out of budget.
 */
struct slot *svc_response_table_find(svc_response *r, struct table *tb, uint64_t k1, uint64_t k2)
{
	if ((tb->n + 1) * 2 > tb->cap && !table_grow(r, tb))
		return NULL;
	uint32_t gen = r->t->gen;
	size_t j = svc_response_mix(k1, k2) & (tb->cap - 1);
	for (;;) {
		struct slot *s = &tb->slots[j];
		if (s->gen != gen || (s->k1 == k1 && s->k2 == k2))
			return s;
		j = (j + 1) & (tb->cap - 1);
	}
}

void svc_response_table_claim(svc_response *r, struct table *tb, struct slot *s, uint64_t k1,
			uint64_t k2, uint32_t val)
{
	s->k1 = k1;
	s->k2 = k2;
	s->gen = r->t->gen;
	s->val = val;
	tb->n++;
}

/* Grows v to hold need elements: refused when even the growth it needs is
 * over the call's budget, else charged with the growth made. */
bool svc_response_reserve_slow(svc_response *r, base_vec *v, size_t need)
{
	size_t old = v->cap;
	if (r->t->bytes + (need - old) * v->elem > r->budget) {
		r->oom = true;
		return false;
	}
	if (base_vec_reserve(v, need - v->len) != 0) {
		r->oom = true;
		return false;
	}
	return charge(r, (v->cap - old) * v->elem);
}

svc_response_piece svc_response_section_take(svc_response *r, base_vec *sec)
{
	size_t cap = sec->cap;
	svc_response_piece p;
	p.data = base_vec_take(sec, &p.len);
	/* The next call's section, allocated now: growing it again from
	 * nothing would copy it at each doubling. */
	r->t->bytes -= cap;
	if (r->pool && r->t->bytes <= RETAIN_BYTES && base_vec_reserve(sec, cap) == 0)
		r->t->bytes += sec->cap;
	return p;
}

/* ---- the pool ---- */

static void tables_free(svc_response_tables *t)
{
	free(t->entries.slots);
	free(t->funcs.slots);
	free(t->by_ptr.slots);
	free(t->by_content.slots);
	for (size_t i = 0; i < t->n_dense; i++) {
		free(t->dense[i].funcs);
		free(t->dense[i].strs);
		free(t->dense[i].files);
	}
	free(t->dense);
	base_vec_deinit(&t->indexes);
	base_vec_deinit(&t->strings);
	base_vec_deinit(&t->string_table);
	base_vec_deinit(&t->functions);
	base_vec_deinit(&t->locations);
	free(t);
}

svc_response_pool *svc_response_pool_create(void)
{
	svc_response_pool *p = calloc(1, sizeof(*p));
	if (p && pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

void svc_response_pool_destroy(svc_response_pool *p)
{
	if (!p)
		return;
	while (p->free) {
		svc_response_tables *t = p->free;
		p->free = t->next;
		tables_free(t);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* ---- building ---- */

static void next_generation(svc_response_tables *t)
{
	if (++t->gen == 0) {
		/* Wrapped: stamps of 2^32 calls ago would look current. */
		struct table *all[] = {&t->entries, &t->funcs, &t->by_ptr, &t->by_content};
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if (all[i]->slots)
				memset(all[i]->slots, 0, all[i]->cap * sizeof(struct slot));
		for (size_t i = 0; i < t->n_dense; i++) {
			struct dense *d = &t->dense[i];
			if (d->funcs)
				memset(d->funcs, 0, d->fcap * sizeof(*d->funcs));
			if (d->strs)
				memset(d->strs, 0, d->scap * sizeof(*d->strs));
			if (d->files)
				memset(d->files, 0, d->flcap * sizeof(*d->files));
		}
		t->gen = 1;
	}
	t->entries.n = t->funcs.n = t->by_ptr.n = t->by_content.n = 0;
	for (size_t i = 0; i < t->n_dense; i++)
		t->dense[i].strings = NULL;
	t->n_strings = t->strings.len = t->n_funcs = t->indexes.len = 0;
	t->string_table.len = t->functions.len = t->locations.len = 0;
}

bool svc_response_begin(svc_response *r, svc_response_pool *pool, size_t n_locations,
			bool no_demangle, const svc_rpc_json *json, size_t budget)
{
	memset(r, 0, sizeof(*r));
	r->pool = pool;
	r->json = json;
	r->budget = budget;
	r->n_locations = n_locations;
	r->no_demangle = no_demangle;
	if (pool) {
		pthread_mutex_lock(&pool->mu);
		r->t = pool->free;
		if (r->t)
			pool->free = r->t->next;
		pthread_mutex_unlock(&pool->mu);
	}
	if (!r->t) {
		r->t = calloc(1, sizeof(*r->t));
		if (!r->t)
			return false;
		base_vec_init(&r->t->strings, sizeof(struct rstring), SIZE_MAX / sizeof(struct rstring));
		base_vec_init(&r->t->indexes, sizeof(const sym_index *),
			      SIZE_MAX / sizeof(const sym_index *));
		base_vec_init(&r->t->string_table, 1, SIZE_MAX);
		base_vec_init(&r->t->functions, 1, SIZE_MAX);
		base_vec_init(&r->t->locations, 1, SIZE_MAX);
	}
	svc_response_tables *t = r->t;
	t->next = NULL;
	next_generation(t);
	/* string_table[0] is "" (never matched by content: looked up as 0). */
	static const uint8_t wire[] = {TAG(1, SVC_WIRE_LEN), 0};
	const void *first = json ? (const void *)RJ_STRING_TABLE : wire;
	size_t n = json ? sizeof(RJ_STRING_TABLE) - 1 : sizeof(wire);
	if (!section_reserve(r, &t->string_table, n))
		return false;
	t->n_strings = 1;
	memcpy(section_end(&t->string_table), first, n);
	t->string_table.len += n;
	return true;
}

void svc_response_end(svc_response *r)
{
	svc_response_tables *t = r->t;
	if (!t)
		return;
	r->t = NULL;
	if (!r->pool || t->bytes > RETAIN_BYTES) {
		tables_free(t);
		return;
	}
	pthread_mutex_lock(&r->pool->mu);
	t->next = r->pool->free;
	r->pool->free = t;
	pthread_mutex_unlock(&r->pool->mu);
}

/*
 * Dense slots are taken for an index when they come to at most
 * DENSE_ANY_BYTES, or to at most DENSE_PER_LOCATION bytes for each location
 * of the call (a large index's slots pay off over a large batch only).
 */
#define DENSE_ANY_BYTES ((size_t)1 << 20)
#define DENSE_PER_LOCATION 256

/* Makes *slots hold n of size each (zeroed when new); false: over budget or no memory. */
static bool dense_reserve(svc_response *r, void **slots, size_t *cap, size_t n, size_t size)
{
	if (*cap >= n)
		return true;
	svc_response_tables *t = r->t;
	if (t->bytes + (n - *cap) * size > r->budget)
		return false;
	free(*slots);
	*slots = calloc(n, size);
	if (!*slots) {
		t->bytes -= *cap * size;
		*cap = 0;
		return false;
	}
	t->bytes += (n - *cap) * size;
	*cap = n;
	return true;
}

/* Gives entry number e dense slots, when its index has string ordinals and they are worth it. */
static void dense_setup(svc_response *r, uint32_t e, const svc_string_rank *strings,
			uint32_t n_functions)
{
	svc_response_tables *t = r->t;
	if (!strings || !strings->base)
		return;
	size_t nf = n_functions, ns = strings->n_strings, nfl = strings->n_files;
	size_t want = nf * sizeof(struct fslot) + (ns + nfl) * sizeof(struct sslot);
	if (want > DENSE_ANY_BYTES && want / DENSE_PER_LOCATION > r->n_locations)
		return;
	if (e >= t->n_dense) {
		struct dense *nd = realloc(t->dense, ((size_t)e + 1) * sizeof(*nd));
		if (!nd)
			return;
		memset(nd + t->n_dense, 0, ((size_t)e + 1 - t->n_dense) * sizeof(*nd));
		t->bytes += ((size_t)e + 1 - t->n_dense) * sizeof(*nd);
		t->dense = nd;
		t->n_dense = (size_t)e + 1;
	}
	struct dense *d = &t->dense[e];
	if (!dense_reserve(r, (void **)&d->funcs, &d->fcap, nf, sizeof(struct fslot)) ||
	    !dense_reserve(r, (void **)&d->strs, &d->scap, ns, sizeof(struct sslot)) ||
	    !dense_reserve(r, (void **)&d->files, &d->flcap, nfl, sizeof(struct sslot)))
		return;
	d->n_funcs = n_functions;
	d->strings = strings;
	d->copy_end = strings->base + strings->size;
}

uint32_t svc_response_entry(svc_response *r, const void *entry, const sym_index *index,
			    const svc_string_rank *strings, uint32_t n_functions)
{
	svc_response_tables *t = r->t;
	struct slot *s = svc_response_table_find(r, &t->entries, (uintptr_t)entry, 0);
	if (!s)
		return 0;
	if (s->gen == t->gen)
		return s->val;
	if (!reserve(r, &t->indexes, t->indexes.len + 1))
		return 0;
	((const sym_index **)t->indexes.data)[t->indexes.len++] = index;
	svc_response_table_claim(r, &t->entries, s, (uintptr_t)entry, 0, r->n_entries);
	dense_setup(r, r->n_entries, strings, n_functions);
	return r->n_entries++;
}

