// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_perf_profile: perf.data's stacks as a pprof profile (ctl_perf_profile.h),
 * built as protobuf-c messages in one arena, packed and gzipped.
 */
#include "cmd/symbolctl/ctl_perf_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base_arena.h"
#include "base/base_hash.h"
#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "proto/perftools/profiles/profile.pb-c.h"

typedef struct loc_key {
	uint64_t ip;
	uint32_t map;
} loc_key;

typedef const char *str_key;   /* the macro writes "const key_type *" */

static uint64_t str_hash(const str_key *s)
{
	return base_hash_bytes(*s, strlen(*s));
}

static bool str_eq(const str_key *a, const str_key *b)
{
	return !strcmp(*a, *b);
}

static uint64_t loc_hash(const loc_key *k)
{
	return base_hash_bytes(&k->ip, 8) ^ ((uint64_t)k->map * 0x9e3779b97f4a7c15ull);
}

static bool loc_eq(const loc_key *a, const loc_key *b)
{
	return a->ip == b->ip && a->map == b->map;
}

BASE_HASH_MAP(str_table, str_key, int64_t, str_hash, str_eq)
BASE_HASH_MAP(loc_table, loc_key, uint64_t, loc_hash, loc_eq)
BASE_VEC_DEFINE(str_vec, char *)
BASE_VEC_DEFINE(loc_vec, Perftools__Profiles__Location *)

typedef struct builder {
	base_arena arena;
	str_table strs;
	str_vec str_list;
	loc_table locs;
	loc_vec loc_list;
	bool oom;
} builder;

/* The index of s in the string table (s must outlive the builder). */
static int64_t intern(builder *b, const char *s)
{
	bool fresh;
	int64_t *v = str_table_put(&b->strs, &s, &fresh);
	if (!v || (fresh && str_vec_append(&b->str_list, (char *)s))) {
		b->oom = true;
		return 0;
	}
	if (fresh)
		*v = (int64_t)str_vec_len(&b->str_list) - 1;
	return *v;
}

static Perftools__Profiles__ValueType *value_type(builder *b, const char *type, const char *unit)
{
	Perftools__Profiles__ValueType *v = base_arena_alloc(&b->arena, sizeof(*v));
	if (!v) {
		b->oom = true;
		return NULL;
	}
	perftools__profiles__value_type__init(v);
	v->type = intern(b, type);
	v->unit = intern(b, unit);
	return v;
}

/* Mappings of the used perf mappings; ids[i] the pprof id of d->maps[i] (0 unused). */
static void add_mappings(builder *b, const ctl_perf_data *d, Perftools__Profiles__Profile *p,
			 uint64_t *ids)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n_maps; i++)
		n += d->maps[i].used;
	p->mapping = base_arena_calloc(&b->arena, n ? n : 1, sizeof(*p->mapping));
	Perftools__Profiles__Mapping *ms = base_arena_calloc(&b->arena, n ? n : 1, sizeof(*ms));
	if (!p->mapping || !ms) {
		b->oom = true;
		return;
	}
	for (size_t i = 0; i < d->n_maps; i++) {
		const ctl_perf_map *pm = &d->maps[i];
		if (!pm->used)
			continue;
		Perftools__Profiles__Mapping *m = &ms[p->n_mapping];
		perftools__profiles__mapping__init(m);
		m->id = ids[i] = ++p->n_mapping;
		m->memory_start = pm->start;
		m->memory_limit = pm->limit;
		m->file_offset = pm->pgoff;
		m->filename = intern(b, pm->file);
		if (pm->build_id_len) {
			char *hex = base_arena_alloc(&b->arena, 2u * pm->build_id_len + 1);
			if (!hex) {
				b->oom = true;
				return;
			}
			for (size_t k = 0; k < pm->build_id_len; k++)
				snprintf(hex + 2 * k, 3, "%02x", pm->build_id[k]);
			m->build_id = intern(b, hex);
		}
		p->mapping[m->id - 1] = m;
	}
}

/* The id of the location of frame f (new or seen before). */
static uint64_t location(builder *b, const ctl_perf_frame *f, const uint64_t *map_ids)
{
	loc_key k = {f->ip, f->map};
	bool fresh;
	uint64_t *id = loc_table_put(&b->locs, &k, &fresh);
	if (!id) {
		b->oom = true;
		return 0;
	}
	if (!fresh)
		return *id;
	Perftools__Profiles__Location *l = base_arena_alloc(&b->arena, sizeof(*l));
	if (!l || loc_vec_append(&b->loc_list, l)) {
		loc_table_remove(&b->locs, &k);
		b->oom = true;
		return 0;
	}
	perftools__profiles__location__init(l);
	l->id = *id = loc_vec_len(&b->loc_list);
	l->mapping_id = f->map ? map_ids[f->map - 1] : 0;
	l->address = f->ip;
	return *id;
}

static Perftools__Profiles__Sample *sample(builder *b, const ctl_perf_data *d,
					   const ctl_perf_stack *s, const uint64_t *map_ids)
{
	Perftools__Profiles__Sample *out = base_arena_alloc(&b->arena, sizeof(*out));
	Perftools__Profiles__Label *lab = base_arena_calloc(&b->arena, 2, sizeof(*lab));
	Perftools__Profiles__Label **labs = base_arena_calloc(&b->arena, 2, sizeof(*labs));
	uint64_t *ids = base_arena_calloc(&b->arena, s->n, sizeof(*ids));
	int64_t *vals = base_arena_calloc(&b->arena, 2, sizeof(*vals));
	if (!out || !lab || !labs || !ids || !vals) {
		b->oom = true;
		return NULL;
	}
	perftools__profiles__sample__init(out);
	for (size_t i = 0; i < s->n; i++)
		ids[i] = location(b, &d->frames[s->first + i], map_ids);
	out->location_id = ids;
	out->n_location_id = s->n;
	vals[0] = (int64_t)s->count;
	vals[1] = (int64_t)s->period;
	out->value = vals;
	out->n_value = d->has_period ? 2 : 1;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__label__init(&lab[i]);
		labs[i] = &lab[i];
	}
	lab[0].key = intern(b, "pid");
	lab[0].num = s->pid;
	out->label = labs;
	out->n_label = 1;
	if (s->comm) {
		lab[1].key = intern(b, "comm");
		lab[1].str = intern(b, s->comm);
		out->n_label = 2;
	}
	return out;
}

static void build(builder *b, const ctl_perf_data *d, Perftools__Profiles__Profile *p)
{
	intern(b, "");
	const ctl_perf_attr *a = d->n_attrs ? &d->attrs[0] : NULL;
	bool clock = a && a->type == 1 /* PERF_TYPE_SOFTWARE */ && a->config <= 1;
	p->sample_type = base_arena_calloc(&b->arena, 2, sizeof(*p->sample_type));
	if (!p->sample_type) {
		b->oom = true;
		return;
	}
	p->sample_type[0] = value_type(b, "samples", "count");
	p->sample_type[1] = clock ? value_type(b, "cpu", "nanoseconds") : value_type(b, "events", "count");
	p->n_sample_type = d->has_period ? 2 : 1;
	p->period_type = p->sample_type[p->n_sample_type - 1];
	p->period = a && !a->freq && d->has_period ? (int64_t)a->sample_period : 0;
	uint64_t *map_ids = calloc(d->n_maps ? d->n_maps : 1, sizeof(*map_ids));
	if (!map_ids) {
		b->oom = true;
		return;
	}
	add_mappings(b, d, p, map_ids);
	p->sample = base_arena_calloc(&b->arena, d->n_stacks ? d->n_stacks : 1, sizeof(*p->sample));
	if (!p->sample)
		b->oom = true;
	for (size_t i = 0; !b->oom && i < d->n_stacks; i++)
		p->sample[p->n_sample++] = sample(b, d, &d->stacks[i], map_ids);
	free(map_ids);
	p->location = loc_vec_data(&b->loc_list);
	p->n_location = loc_vec_len(&b->loc_list);
	p->string_table = str_vec_data(&b->str_list);
	p->n_string_table = str_vec_len(&b->str_list);
}

bool ctl_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	if (len > UINT32_MAX / 2 ||
	    deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	size_t cap = deflateBound(&z, (uLong)len) + 32;
	*out = malloc(cap);
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	bool ok = *out && deflate(&z, Z_FINISH) == Z_STREAM_END;
	*out_len = z.total_out;
	deflateEnd(&z);
	if (!ok) {
		free(*out);
		*out = NULL;
	}
	return ok;
}

bool ctl_perf_profile(const ctl_perf_data *d, uint8_t **out, size_t *out_len, char *why,
		      size_t why_size)
{
	builder b = {.oom = false};
	base_arena_init(&b.arena, 0);
	str_table_init(&b.strs);
	str_vec_init(&b.str_list, SIZE_MAX / 16);
	loc_table_init(&b.locs);
	loc_vec_init(&b.loc_list, SIZE_MAX / 16);
	Perftools__Profiles__Profile p;
	perftools__profiles__profile__init(&p);
	build(&b, d, &p);
	uint8_t *packed = NULL;
	size_t len = 0;
	if (!b.oom) {
		len = perftools__profiles__profile__get_packed_size(&p);
		packed = malloc(len ? len : 1);
		if (packed)
			perftools__profiles__profile__pack(&p, packed);
	}
	bool ok = packed && ctl_gzip(packed, len, out, out_len);
	if (!ok)
		snprintf(why, why_size, "%s", b.oom || !packed ? "out of memory building the profile"
							       : "profile too large to gzip");
	free(packed);
	str_table_deinit(&b.strs);
	str_vec_deinit(&b.str_list);
	loc_table_deinit(&b.locs);
	loc_vec_deinit(&b.loc_list);
	base_arena_deinit(&b.arena);
	return ok;
}
