// SPDX-License-Identifier: Apache-2.0
/*
 * svc_profile_decode: inflating, decoding and checking a pprof profile
 * (svc_profile_decode.h).
 */
#include "service/symbolize/svc_profile_decode.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/base_hash_map.h"
#include "base/base_vec.h"

BASE_HASH_MAP(id_map, uint64_t, uint32_t, base_hash_u64, base_eq_u64)

/* ---- protobuf-c's memory ---- */

enum { BIG_MIN = 64 * 1024 };

struct svc_profile_big {
	svc_profile_big *next, *prev;
	size_t size;
	size_t pad_;   /* keeps the block after it 16-byte aligned */
};

static void *pb_alloc(void *data, size_t size)
{
	svc_profile_doc *d = data;
	if (size < BIG_MIN)
		return base_arena_alloc(d->arena, size);
	size_t cap = d->arena->cap;
	if (cap && (size > cap || d->arena->used + d->big_bytes > cap - size))
		return NULL;
	svc_profile_big *b = malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->size = size;
	b->prev = NULL;
	b->next = d->big;
	if (d->big)
		d->big->prev = b;
	d->big = b;
	d->big_bytes += size;
	return b + 1;
}

/* Frees a big block (a small one stays in the arena till the end). */
static void pb_free(void *data, void *p)
{
	svc_profile_doc *d = data;
	for (svc_profile_big *b = d->big; b; b = b->next) {
		if (b + 1 != p)
			continue;
		if (b->prev)
			b->prev->next = b->next;
		else
			d->big = b->next;
		if (b->next)
			b->next->prev = b->prev;
		d->big_bytes -= b->size;
		free(b);
		return;
	}
}

void svc_profile_doc_release(svc_profile_doc *d)
{
	while (d->big) {
		svc_profile_big *next = d->big->next;
		free(d->big);
		d->big = next;
	}
	d->big_bytes = 0;
}

bool svc_profile_is_gzip(const uint8_t *buf, size_t len)
{
	return len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
}

/* The inflated bytes (malloc) in *out; false with *err. */
static bool inflate_all(const uint8_t *buf, size_t len, size_t max, uint8_t **out,
			size_t *out_len, svc_error *err)
{
	z_stream z = {0};
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory inflating the profile");
		return false;
	}
	/* Grows by doubling, to max + 1 bytes at most (one past: too large). */
	base_vec o;
	base_vec_init(&o, 1, max + 1);
	int rc = base_vec_reserve(&o, len * 4 < max ? len * 4 + 64 : max + 1) == 0 ? Z_OK
										   : Z_MEM_ERROR;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	while (rc == Z_OK) {
		if (o.len == o.cap) {
			if (o.cap > max) {
				rc = Z_BUF_ERROR;
				break;
			}
			if (base_vec_reserve(&o, 1) != 0) {
				rc = Z_MEM_ERROR;
				break;
			}
		}
		z.next_out = (uint8_t *)o.data + o.len;
		z.avail_out = (uInt)(o.cap - o.len);
		rc = inflate(&z, Z_NO_FLUSH);
		o.len = o.cap - z.avail_out;
		/* Several members in a row are one stream, as Go's gzip reader (and
		 * so pprof) reads them; anything else after a member is an error. */
		if (rc == Z_STREAM_END && z.avail_in > 0)
			rc = z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b &&
					     inflateReset(&z) == Z_OK
				     ? Z_OK
				     : Z_DATA_ERROR;
		if (rc == Z_BUF_ERROR && z.avail_in == 0)
			rc = Z_DATA_ERROR;  /* truncated */
		else if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	inflateEnd(&z);
	size_t n = o.len;
	if (rc == Z_STREAM_END && n <= max) {
		*out = o.data;
		*out_len = n;
		return true;
	}
	base_vec_deinit(&o);
	if (rc == Z_MEM_ERROR)
		svc_error_set(err, SVC_E_NOMEM, "out of memory inflating the profile");
	else if (n > max || rc == Z_BUF_ERROR)
		svc_error_set(err, SVC_E_TOO_LARGE, "profile over %zu bytes once inflated", max);
	else
		svc_error_set(err, SVC_E_INVALID, "profile is not valid gzip: %s",
			      z.msg ? z.msg : z.avail_in ? "bytes after a gzip member" : "truncated");
	return false;
}

/* ---- checks ---- */

/*
 * protobuf-c keeps an unknown field numbered 0 (an invalid tag) and would
 * pack it back as bytes nothing decodes: such a profile is refused.
 */
static bool unknown_fields_ok(const ProtobufCMessage *m, int depth)
{
	if (!m || depth > 8)
		return m == NULL;
	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return false;
	const ProtobufCMessageDescriptor *d = m->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		const char *at = (const char *)m + f->offset;
		if (f->label != PROTOBUF_C_LABEL_REPEATED) {
			if (!unknown_fields_ok(*(ProtobufCMessage *const *)at, depth + 1))
				return false;
			continue;
		}
		size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
		ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)at;
		for (size_t j = 0; j < n; j++)
			if (!unknown_fields_ok(items[j], depth + 1))
				return false;
	}
	return true;
}

#define BAD(...) (svc_error_set(err, SVC_E_INVALID, __VA_ARGS__), false)

static bool str_ok(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table;
}

static bool check_strings(const Perftools__Profiles__Profile *p, svc_error *err)
{
	if (p->n_string_table && p->string_table[0][0] != '\0')
		return BAD("profile string_table[0] must be \"\"");
	int64_t top[] = {p->drop_frames, p->keep_frames, p->default_sample_type, p->doc_url};
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (top[i] && !str_ok(p, top[i]))
			return BAD("profile string index %lld out of range", (long long)top[i]);
	for (size_t i = 0; i < p->n_comment; i++)
		if (!str_ok(p, p->comment[i]))
			return BAD("profile comment[%zu] out of range", i);
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!str_ok(p, p->sample_type[i]->type) || !str_ok(p, p->sample_type[i]->unit))
			return BAD("profile sample_type[%zu] string index out of range", i);
	if (p->period_type && (!str_ok(p, p->period_type->type) || !str_ok(p, p->period_type->unit)))
		return BAD("profile period_type string index out of range");
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		if (!str_ok(p, m->filename) || !str_ok(p, m->build_id))
			return BAD("profile mapping[%zu] string index out of range", i);
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		if (!str_ok(p, f->name) || !str_ok(p, f->system_name) || !str_ok(p, f->filename))
			return BAD("profile function[%zu] string index out of range", i);
	}
	for (size_t i = 0; i < p->n_sample; i++)
		for (size_t j = 0; j < p->sample[i]->n_label; j++) {
			const Perftools__Profiles__Label *l = p->sample[i]->label[j];
			if (!str_ok(p, l->key) || !str_ok(p, l->str) || !str_ok(p, l->num_unit))
				return BAD("profile sample[%zu].label[%zu] string index out of range",
					   i, j);
		}
	return true;
}

/* Indexes ids (ids[i] at index i) into m; false on a zero or repeated id. */
static bool index_ids(id_map *m, size_t n, uint64_t (*id_of)(const void *const *, size_t),
		      const void *const *items, const char *what, svc_error *err)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_of(items, i);
		if (id == 0)
			return BAD("profile %s[%zu] has id 0", what, i);
		bool inserted;
		uint32_t *v = id_map_put(m, &id, &inserted);
		if (!v)
			return svc_error_set(err, SVC_E_NOMEM, "out of memory"), false;
		if (!inserted)
			return BAD("profile %s id %llu given twice", what, (unsigned long long)id);
		*v = (uint32_t)i;
	}
	return true;
}

static uint64_t mapping_id(const void *const *a, size_t i)
{
	return ((const Perftools__Profiles__Mapping *const *)a)[i]->id;
}
static uint64_t location_id(const void *const *a, size_t i)
{
	return ((const Perftools__Profiles__Location *const *)a)[i]->id;
}
static uint64_t function_id(const void *const *a, size_t i)
{
	return ((const Perftools__Profiles__Function *const *)a)[i]->id;
}

/* Locations: their mapping, their lines' functions. */
static bool check_locations(svc_profile_doc *d, id_map *maps, id_map *funcs, svc_error *err)
{
	const Perftools__Profiles__Profile *p = d->p;
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		if (l->mapping_id) {
			const uint32_t *mi = id_map_get(maps, &l->mapping_id);
			if (!mi)
				return BAD("profile location id %llu names mapping id %llu, which "
					   "does not exist", (unsigned long long)l->id,
					   (unsigned long long)l->mapping_id);
			d->loc_mapping[i] = *mi + 1;
		}
		for (size_t j = 0; j < l->n_line; j++)
			if (!id_map_get(funcs, &l->line[j]->function_id))
				return BAD("profile location id %llu names function id %llu, "
					   "which does not exist", (unsigned long long)l->id,
					   (unsigned long long)l->line[j]->function_id);
	}
	return true;
}

/* Samples: their locations, and which are only ever non-leaf frames. */
static bool check_samples(svc_profile_doc *d, id_map *locs, uint8_t *role, svc_error *err)
{
	const Perftools__Profiles__Profile *p = d->p;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		for (size_t j = 0; j < s->n_location_id; j++) {
			const uint32_t *li = id_map_get(locs, &s->location_id[j]);
			if (!li)
				return BAD("profile sample[%zu] names location id %llu, which does "
					   "not exist", i, (unsigned long long)s->location_id[j]);
			role[*li] |= j == 0 ? 1 : 2;
		}
	}
	for (size_t i = 0; i < p->n_location; i++)
		d->loc_return[i] = role[i] == 2;
	return true;
}

static bool check(svc_profile_doc *d, base_arena *arena, svc_error *err)
{
	Perftools__Profiles__Profile *p = d->p;
	if (!unknown_fields_ok(&p->base, 0))
		return BAD("profile has a field numbered 0");
	if (!check_strings(p, err))
		return false;
	size_t nl = p->n_location ? p->n_location : 1;
	d->loc_mapping = base_arena_calloc(arena, nl, sizeof(*d->loc_mapping));
	d->loc_return = base_arena_calloc(arena, nl, sizeof(*d->loc_return));
	uint8_t *role = calloc(nl, 1);
	id_map maps, locs, funcs;
	id_map_init(&maps);
	id_map_init(&locs);
	id_map_init(&funcs);
	bool ok = d->loc_mapping && d->loc_return && role;
	if (!ok)
		svc_error_set(err, SVC_E_TOO_LARGE, "profile too large to decode");
	ok = ok && index_ids(&maps, p->n_mapping, mapping_id, (const void *const *)p->mapping,
			     "mapping", err);
	ok = ok && index_ids(&locs, p->n_location, location_id,
			     (const void *const *)p->location, "location", err);
	ok = ok && index_ids(&funcs, p->n_function, function_id,
			     (const void *const *)p->function, "function", err);
	ok = ok && check_locations(d, &maps, &funcs, err) && check_samples(d, &locs, role, err);
	for (size_t i = 0; ok && i < p->n_function; i++)
		if (p->function[i]->id > d->max_function_id)
			d->max_function_id = p->function[i]->id;
	id_map_deinit(&maps);
	id_map_deinit(&locs);
	id_map_deinit(&funcs);
	free(role);
	return ok;
}

bool svc_profile_decode(const uint8_t *buf, size_t len, const svc_profile_limits *lim,
			base_arena *arena, svc_profile_doc *d, svc_error *err)
{
	memset(d, 0, sizeof(*d));
	uint8_t *plain = NULL;
	if (svc_profile_is_gzip(buf, len)) {
		if (!inflate_all(buf, len, lim->max_bytes, &plain, &len, err))
			return false;
		buf = plain;
		d->gzipped = true;
	} else if (len > lim->max_bytes) {
		return svc_error_set(err, SVC_E_TOO_LARGE, "profile over %zu bytes",
				     lim->max_bytes), false;
	}
	/* The decoded profile and what the call adds live in the arena; its cap bounds both. */
	base_arena_init(arena, SVC_PROFILE_ARENA_BASE + SVC_PROFILE_ARENA_PER_BYTE * len);
	d->arena = arena;
	ProtobufCAllocator pb = {.alloc = pb_alloc, .free = pb_free, .allocator_data = d};
	d->p = perftools__profiles__profile__unpack(&pb, len, buf);
	free(plain);
	if (!d->p) {
		if (arena->cap && (arena->used + d->big_bytes) * 2 > arena->cap)
			svc_error_set(err, SVC_E_TOO_LARGE, "profile too large to decode");
		else
			svc_error_set(err, SVC_E_INVALID,
				      "profile is not a valid perftools.profiles.Profile");
		return false;
	}
	if (d->p->n_mapping > lim->max_mappings || d->p->n_location > lim->max_locations)
		return svc_error_set(err, SVC_E_TOO_LARGE,
				     "profile of %zu mappings and %zu locations is over the "
				     "limits (%zu, %zu)", d->p->n_mapping, d->p->n_location,
				     lim->max_mappings, lim->max_locations), false;
	return check(d, arena, err);
}
