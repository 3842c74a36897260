// SPDX-License-Identifier: Apache-2.0
/*
 * svc_response: the SymbolizeResponse builder and encoder (svc_response.h).
 */
#include "service/symbolize/svc_response.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_wire.h"
#include "base/base_hash.h"
#include "base/base_vec.h"

/* Tables that grew past this in a call are freed, not kept for the next. */
#define RETAIN_BYTES ((size_t)4 << 20)

/* ---- open addressing, two 64-bit keys, emptied by a generation stamp ---- */

struct slot {
	uint64_t k1, k2;
	uint32_t gen;   /* the slot is in use in generation gen only */
	uint32_t val;
};

struct table {
	struct slot *slots;
	size_t cap, n;  /* cap: 0 or a power of two */
};

struct rstring {
	const char *s;
	size_t len;
};

/* Encoded bytes of one repeated field of the response, in order: a base_vec
 * of bytes (section_init). */

/* A Line is at most 2 + 3 x 6 bytes; a location has at most this many. */
#define LOC_BODY_MAX (SVC_RESPONSE_MAX_LINES * 20 + 11)

struct svc_response_tables {
	uint32_t gen;
	struct table entries, funcs, by_ptr, by_content;
	base_vec strings;           /* struct rstring: the string table, for matching by content */
	size_t n_funcs;
	base_vec string_table, functions, locations;  /* sections: bytes */
	uint8_t loc_body[LOC_BODY_MAX]; /* the LocationResult being built */
	size_t loc_len;
	unsigned loc_lines;
	size_t bytes;      /* everything allocated above */
	svc_response_tables *next;
};

struct svc_response_pool {
	pthread_mutex_t mu;
	svc_response_tables *free;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (b + 0x632be59bd9b4e019ull) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

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
		size_t j = mix(o->k1, o->k2) & (cap - 1);
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
 * claim with table_claim(). NULL when out of budget.
 */
static struct slot *table_find(svc_response *r, struct table *tb, uint64_t k1, uint64_t k2)
{
	if ((tb->n + 1) * 2 > tb->cap && !table_grow(r, tb))
		return NULL;
	uint32_t gen = r->t->gen;
	size_t j = mix(k1, k2) & (tb->cap - 1);
	for (;;) {
		struct slot *s = &tb->slots[j];
		if (s->gen != gen || (s->k1 == k1 && s->k2 == k2))
			return s;
		j = (j + 1) & (tb->cap - 1);
	}
}

static void table_claim(svc_response *r, struct table *tb, struct slot *s, uint64_t k1,
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
static bool reserve_slow(svc_response *r, base_vec *v, size_t need)
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

/* Makes room for need elements in v. */
static inline bool reserve(svc_response *r, base_vec *v, size_t need)
{
	return need <= v->cap || reserve_slow(r, v, need);
}

/* Room for more bytes at the end of a section. */
static inline bool section_reserve(svc_response *r, base_vec *sec, size_t more)
{
	return reserve(r, sec, sec->len + more);
}

/* The end of a section's bytes, where the next field goes. */
static inline uint8_t *section_end(const base_vec *sec)
{
	return (uint8_t *)sec->data + sec->len;
}

/* The section's bytes now end at w. */
static inline void section_set_end(base_vec *sec, const uint8_t *w)
{
	sec->len = (size_t)(w - (const uint8_t *)sec->data);
}

static inline struct rstring *string_at(const svc_response_tables *t, size_t i)
{
	return &BASE_VEC_AT(&t->strings, struct rstring, i);
}

#define TAG(field, type) ((uint8_t)SVC_WIRE_TAG(field, type))

/* ---- the pool ---- */

static void tables_free(svc_response_tables *t)
{
	free(t->entries.slots);
	free(t->funcs.slots);
	free(t->by_ptr.slots);
	free(t->by_content.slots);
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

/* ---- encoding (proto3: zero values are left out) ---- */

static size_t varint_field_size(uint64_t v)
{
	return v ? 1 + svc_wire_varint_size(v) : 0;
}

static size_t len_field_size(size_t body)
{
	return 1 + svc_wire_varint_size(body) + body;
}

static uint8_t *put_varint_field(uint8_t *p, uint8_t tag, uint64_t v)
{
	if (!v)
		return p;
	*p++ = tag;
	return svc_wire_put_varint(p, v);
}

static uint8_t *put_len_header(uint8_t *p, uint8_t tag, size_t body)
{
	*p++ = tag;
	return svc_wire_put_varint(p, body);
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
		t->gen = 1;
	}
	t->entries.n = t->funcs.n = t->by_ptr.n = t->by_content.n = 0;
	t->strings.len = t->n_funcs = 0;
	t->string_table.len = t->functions.len = t->locations.len = 0;
	t->loc_len = 0;
	t->loc_lines = 0;
}

bool svc_response_begin(svc_response *r, svc_response_pool *pool, size_t n_locations,
			bool no_demangle, size_t budget)
{
	memset(r, 0, sizeof(*r));
	r->pool = pool;
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
		base_vec_init(&r->t->string_table, 1, SIZE_MAX);
		base_vec_init(&r->t->functions, 1, SIZE_MAX);
		base_vec_init(&r->t->locations, 1, SIZE_MAX);
	}
	svc_response_tables *t = r->t;
	t->next = NULL;
	next_generation(t);
	/* string_table[0] is "". */
	if (!reserve(r, &t->strings, 1) || !section_reserve(r, &t->string_table, 2))
		return false;
	*string_at(t, t->strings.len++) = (struct rstring){"", 0};
	uint8_t *w = section_end(&t->string_table);
	w[0] = TAG(1, SVC_WIRE_LEN);
	w[1] = 0;
	section_set_end(&t->string_table, w + 2);
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

uint32_t svc_response_entry(svc_response *r, const void *entry)
{
	struct slot *s = table_find(r, &r->t->entries, (uintptr_t)entry, 0);
	if (!s)
		return 0;
	if (s->gen == r->t->gen)
		return s->val;
	table_claim(r, &r->t->entries, s, (uintptr_t)entry, 0, r->n_entries);
	return r->n_entries++;
}

/*
 * The string-table index of s. A string of an index blob is there once, so
 * its address names it within the blob; with several blobs in the call, equal
 * strings at different addresses are matched by content too.
 */
static uint32_t string_index(svc_response *r, const char *s)
{
	svc_response_tables *t = r->t;
	if (!s || !*s)
		return 0;
	struct slot *p = table_find(r, &t->by_ptr, (uintptr_t)s, 0);
	if (!p)
		return 0;
	if (p->gen == t->gen)
		return p->val;
	size_t len = strlen(s);
	struct slot *c = NULL;
	uint64_t h = 0, k = 0;
	if (r->n_entries > 1) {
		h = base_hash_bytes(s, len);
		for (;; k++) {
			c = table_find(r, &t->by_content, h, k);
			if (!c)
				return 0;
			if (c->gen != t->gen)
				break;
			const struct rstring *o = string_at(t, c->val);
			if (o->len == len && memcmp(o->s, s, len) == 0) {
				table_claim(r, &t->by_ptr, p, (uintptr_t)s, 0, c->val);
				return c->val;
			}
		}
	}
	if (!reserve(r, &t->strings, t->strings.len + 1) ||
	    !section_reserve(r, &t->string_table, 11 + len))
		return 0;
	uint32_t idx = (uint32_t)t->strings.len;
	*string_at(t, t->strings.len++) = (struct rstring){s, len};
	base_vec *st = &t->string_table;
	uint8_t *w = put_len_header(section_end(st), TAG(1, SVC_WIRE_LEN), len);
	memcpy(w, s, len);
	section_set_end(st, w + len);
	table_claim(r, &t->by_ptr, p, (uintptr_t)s, 0, idx);
	if (c)
		table_claim(r, &t->by_content, c, h, k, idx);
	return idx;
}

/* A Function's keys in the funcs table (k1: its file, "" as 0; k2: function, index). */
static inline void function_key(uint32_t entry, const sym_frame *fn, const char *file,
				uint64_t *k1, uint64_t *k2)
{
	*k1 = *file ? (uintptr_t)file : 0;
	*k2 = (uint64_t)fn->function_id << 32 | entry;
}

/* A Function's system name (the linkage name, else the name) and name. */
static inline void function_names(const svc_response *r, const sym_frame *fn,
				  const char **system, const char **name)
{
	*system = fn->linkage_name[0] ? fn->linkage_name : fn->name;
	*name = r->no_demangle ? *system : fn->display_name;
}

static inline void slot_prefetch(const struct table *tb, uint64_t k1, uint64_t k2)
{
	if (tb->cap)
		__builtin_prefetch(&tb->slots[mix(k1, k2) & (tb->cap - 1)]);
}

void svc_response_prefetch(const svc_response *r, uint32_t entry, const sym_frame *fn,
			   const char *file)
{
	const svc_response_tables *t = r->t;
	uint64_t k1, k2;
	function_key(entry, fn, file, &k1, &k2);
	slot_prefetch(&t->funcs, k1, k2);
	const char *system, *name;
	function_names(r, fn, &system, &name);
	slot_prefetch(&t->by_ptr, (uintptr_t)name, 0);
	if (system != name)
		slot_prefetch(&t->by_ptr, (uintptr_t)system, 0);
	slot_prefetch(&t->by_ptr, (uintptr_t)file, 0);
}

uint32_t svc_response_function(svc_response *r, uint32_t entry, const sym_frame *fn,
			       const char *file)
{
	svc_response_tables *t = r->t;
	uint64_t k1, k2;
	function_key(entry, fn, file, &k1, &k2);
	struct slot *s = table_find(r, &t->funcs, k1, k2);
	if (!s)
		return 0;
	if (s->gen == t->gen)
		return s->val;
	/* Function { name = 1; system_name = 2; filename = 3; start_line = 4; }: <= 44 bytes. */
	if (!section_reserve(r, &t->functions, 2 + 44))
		return 0;
	const char *system, *name;
	function_names(r, fn, &system, &name);
	uint32_t name_i = string_index(r, name);
	uint32_t system_i = system == name ? name_i : string_index(r, system);
	uint32_t file_i = string_index(r, file);
	uint8_t body[44];
	uint8_t *w = put_varint_field(body, TAG(1, SVC_WIRE_VARINT), name_i);
	w = put_varint_field(w, TAG(2, SVC_WIRE_VARINT), system_i);
	w = put_varint_field(w, TAG(3, SVC_WIRE_VARINT), file_i);
	w = put_varint_field(w, TAG(4, SVC_WIRE_VARINT), fn->decl_line);
	base_vec *fs = &t->functions;
	uint8_t *o = put_len_header(section_end(fs), TAG(2, SVC_WIRE_LEN), (size_t)(w - body));
	memcpy(o, body, (size_t)(w - body));
	section_set_end(fs, o + (w - body));
	uint32_t idx = (uint32_t)t->n_funcs++;
	table_claim(r, &t->funcs, s, k1, k2, idx);
	return idx;
}

void svc_response_line(svc_response *r, uint32_t function, uint32_t line, uint32_t column)
{
	svc_response_tables *t = r->t;
	if (t->loc_lines >= SVC_RESPONSE_MAX_LINES) {
		r->oom = true;
		return;
	}
	/* LocationResult.lines = 1: Line { function_index = 1; line = 2; column = 3; } */
	uint8_t *start = t->loc_body + t->loc_len;
	uint8_t *w = put_varint_field(start + 2, TAG(1, SVC_WIRE_VARINT), function);
	w = put_varint_field(w, TAG(2, SVC_WIRE_VARINT), line);
	w = put_varint_field(w, TAG(3, SVC_WIRE_VARINT), column);
	start[0] = TAG(1, SVC_WIRE_LEN);
	start[1] = (uint8_t)(w - start - 2);  /* at most 18 */
	t->loc_len = (size_t)(w - t->loc_body);
	t->loc_lines++;
}

void svc_response_location(svc_response *r, uint64_t address)
{
	svc_response_tables *t = r->t;
	if (r->next_location >= r->n_locations)
		return;
	uint8_t *w = put_varint_field(t->loc_body + t->loc_len, TAG(2, SVC_WIRE_VARINT), address);
	size_t body = (size_t)(w - t->loc_body);
	base_vec *ls = &t->locations;
	if (section_reserve(r, ls, 1 + 10 + body)) {
		uint8_t *o = put_len_header(section_end(ls), TAG(3, SVC_WIRE_LEN), body);
		memcpy(o, t->loc_body, body);
		section_set_end(ls, o + body);
	}
	r->next_location++;
	t->loc_len = 0;
	t->loc_lines = 0;
}

/* ---- the whole response (fields in number order) ---- */

static size_t error_size(const char *error)
{
	size_t n = error ? strlen(error) : 0;
	return n ? len_field_size(n) : 0;
}

static size_t mapping_size(const svc_response_mapping *m)
{
	return varint_field_size((uint64_t)(int64_t)m->status) + error_size(m->error) +
	       varint_field_size(m->retry_after_ms) +
	       2 * (size_t)(!!(m->flags & SYM_INDEX_HAS_FUNCTIONS) +
			    !!(m->flags & SYM_INDEX_HAS_FILENAMES) +
			    !!(m->flags & SYM_INDEX_HAS_LINE_NUMBERS) +
			    !!(m->flags & SYM_INDEX_HAS_INLINE_FRAMES));
}

size_t svc_response_size(svc_response *r, const svc_response_mapping *maps, size_t n_maps)
{
	svc_response_tables *t = r->t;
	while (r->next_location < r->n_locations && !r->oom)
		svc_response_location(r, 0);
	size_t total = t->string_table.len + t->functions.len + t->locations.len;
	for (size_t i = 0; i < n_maps; i++)
		total += len_field_size(mapping_size(&maps[i]));
	return total;
}

void svc_response_write(const svc_response *r, const svc_response_mapping *maps, size_t n_maps,
			uint8_t *p)
{
	const svc_response_tables *t = r->t;
	const base_vec *secs[] = {&t->string_table, &t->functions, &t->locations};
	for (size_t i = 0; i < 3; i++) {
		if (secs[i]->len)
			memcpy(p, secs[i]->data, secs[i]->len);
		p += secs[i]->len;
	}
	for (size_t i = 0; i < n_maps; i++) {
		const svc_response_mapping *m = &maps[i];
		p = put_len_header(p, TAG(4, SVC_WIRE_LEN), mapping_size(m));
		p = put_varint_field(p, TAG(1, SVC_WIRE_VARINT), (uint64_t)(int64_t)m->status);
		size_t n = m->error ? strlen(m->error) : 0;
		if (n) {
			p = put_len_header(p, TAG(2, SVC_WIRE_LEN), n);
			memcpy(p, m->error, n);
			p += n;
		}
		p = put_varint_field(p, TAG(3, SVC_WIRE_VARINT), m->retry_after_ms);
		p = put_varint_field(p, TAG(4, SVC_WIRE_VARINT), !!(m->flags & SYM_INDEX_HAS_FUNCTIONS));
		p = put_varint_field(p, TAG(5, SVC_WIRE_VARINT), !!(m->flags & SYM_INDEX_HAS_FILENAMES));
		p = put_varint_field(p, TAG(6, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_LINE_NUMBERS));
		p = put_varint_field(p, TAG(7, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_INLINE_FRAMES));
	}
}
