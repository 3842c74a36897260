/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_response_impl.h: the response tables, shared by svc_response.c (the
 * building and encoding) and svc_response_tables.c (the tables' memory, the
 * pool, the dense slots of an index). Internal to service/symbolize.
 */
#ifndef SVC_RESPONSE_IMPL_H
#define SVC_RESPONSE_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_vec.h"
#include "service/rpc/svc_wire.h"
#include "service/symbolize/svc_response.h"

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

/* Dense slots of one index: by function ordinal (its function_id; the last
 * one for "no function"), by string ordinal (svc_string_rank), and by file
 * id (the string-table index of the file's name). */
struct fslot {
	uint32_t gen, val;
	uint32_t file;      /* the file id of the Function entry val */
};

struct sslot {
	uint32_t gen, val;
};

struct dense {
	const svc_string_rank *strings;   /* NULL: this index's keys are hashed */
	const char *copy_end;             /* the end of its string table */
	uint32_t n_funcs;                 /* functions + 1 */
	struct fslot *funcs;
	struct sslot *strs, *files;
	size_t fcap, scap, flcap;         /* allocated slots (kept across calls) */
};

/* Encoded bytes of one repeated field of the response, in order: a base_vec
 * of bytes (section_init). */

struct svc_response_tables {
	uint32_t gen;
	struct table entries, funcs, by_ptr, by_content;
	struct dense *dense;        /* by entry number: dense[0, n_dense) allocated */
	size_t n_dense;
	base_vec indexes;           /* const sym_index *, by entry number */
	size_t n_strings;           /* entries of the string table */
	base_vec strings;           /* struct rstring: entries made while the call had several
				     * indexes (string_new's matches by content), at their index;
				     * the others' places are not read */
	size_t n_funcs;
	base_vec string_table, functions, locations;  /* sections: bytes */
	size_t bytes;      /* everything allocated above */
	svc_response_tables *next;
};

struct svc_response_pool {
	pthread_mutex_t mu;
	svc_response_tables *free;
};

static inline uint64_t svc_response_mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (b + 0x632be59bd9b4e019ull) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

/*
 * The slot of (k1, k2): in use (gen current) when present; else the one to
 * claim with svc_response_table_claim(). NULL when out of budget.
 */
struct slot *svc_response_table_find(svc_response *r, struct table *tb, uint64_t k1, uint64_t k2);
void svc_response_table_claim(svc_response *r, struct table *tb, struct slot *s, uint64_t k1,
			      uint64_t k2, uint32_t val);

/* Grows v to hold need elements: refused when even the growth it needs is
 * over the call's budget, else charged with the growth made. */
bool svc_response_reserve_slow(svc_response *r, base_vec *v, size_t need);

/* The bytes of section sec, handed over; sec takes a new allocation as
 * large (counted in the tables' bytes as the old one was) when the tables
 * go back to a pool and are not over RETAIN_BYTES. */
svc_response_piece svc_response_section_take(svc_response *r, base_vec *sec);

/* Makes room for need elements in v. */
static inline bool reserve(svc_response *r, base_vec *v, size_t need)
{
	return need <= v->cap || svc_response_reserve_slow(r, v, need);
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

/* ---- encoding (proto3: zero values are left out) ---- */

static inline size_t varint_field_size(uint64_t v)
{
	return v ? 1 + svc_wire_varint_size(v) : 0;
}

static inline size_t len_field_size(size_t body)
{
	return 1 + svc_wire_varint_size(body) + body;
}

static inline uint8_t *put_varint_field(uint8_t *p, uint8_t tag, uint64_t v)
{
	if (!v)
		return p;
	*p++ = tag;
	return svc_wire_put_varint(p, v);
}

static inline uint8_t *put_len_header(uint8_t *p, uint8_t tag, size_t body)
{
	*p++ = tag;
	return svc_wire_put_varint(p, body);
}

#endif
