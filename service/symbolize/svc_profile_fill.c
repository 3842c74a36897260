// SPDX-License-Identifier: Apache-2.0
/*
 * svc_profile_fill: lines, functions and strings added to a profile
 * (svc_profile_fill.h).
 */
#include "service/symbolize/svc_profile_fill.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_hash.h"
#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "service/symbolize/svc_frame_cache.h"
#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_index.h"

#define STATUS_OK SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK

typedef const char *str_key;
static uint64_t str_hash(const str_key *k)
{
	return base_hash_bytes(*k, strlen(*k));
}
static bool str_eq(const str_key *a, const str_key *b)
{
	return strcmp(*a, *b) == 0;
}
BASE_HASH_MAP(str_map, str_key, int64_t, str_hash, str_eq)

typedef struct fn_key {
	int64_t name, system_name, filename, start_line;
} fn_key;
static uint64_t fn_hash(const fn_key *k)
{
	return base_hash_bytes(k, sizeof(*k));
}
static bool fn_eq(const fn_key *a, const fn_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}
BASE_HASH_MAP(fn_map, fn_key, uint64_t, fn_hash, fn_eq)

struct tables {
	Perftools__Profiles__Profile *p;
	str_map strs;
	fn_map fns;
	svc_frame_cache frames;
	base_vec new_strs;   /* const char *, after the profile's own */
	base_vec new_fns;    /* fn_key, ids max_function_id + 1 on */
	uint64_t next_id;
	bool oom;
};

static int64_t intern_str(struct tables *t, const char *s)
{
	bool inserted;
	int64_t *v = str_map_put(&t->strs, &s, &inserted);
	if (!v) {
		t->oom = true;
		return 0;
	}
	if (inserted) {
		const char **slot = base_vec_push(&t->new_strs);
		if (!slot) {
			t->oom = true;
			return 0;
		}
		*slot = s;
		*v = (int64_t)(t->p->n_string_table + t->new_strs.len - 1);
	}
	return *v;
}

/* The id of the function of a frame, as Symbolize names it (svc_response). */
static uint64_t intern_fn(struct tables *t, const sym_frame *fn, const char *file,
			  bool no_demangle)
{
	const char *system = fn->linkage_name[0] ? fn->linkage_name : fn->name;
	const char *name = no_demangle ? system : fn->display_name;
	svc_frame_key fk = {name, system, file, fn->decl_line};
	bool added;
	int64_t *cached = svc_frame_cache_put(&t->frames, &fk, &added);
	if (cached && !added)
		return (uint64_t)*cached;
	fn_key k = {intern_str(t, name), intern_str(t, system), intern_str(t, file),
		    fn->decl_line};
	bool inserted;
	uint64_t *v = fn_map_put(&t->fns, &k, &inserted);
	if (!v) {
		t->oom = true;
		return 0;
	}
	if (inserted) {
		fn_key *slot = base_vec_push(&t->new_fns);
		if (!slot) {
			t->oom = true;
			return 0;
		}
		*slot = k;
		*v = t->next_id++;
	}
	if (cached)
		*cached = (int64_t)*v;
	return *v;
}

static bool tables_init(struct tables *t, svc_profile_doc *d)
{
	Perftools__Profiles__Profile *p = d->p;
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->next_id = d->max_function_id + 1;
	str_map_init(&t->strs);
	fn_map_init(&t->fns);
	svc_frame_cache_init(&t->frames);
	base_vec_init(&t->new_strs, sizeof(const char *), SIZE_MAX / 16);
	base_vec_init(&t->new_fns, sizeof(fn_key), SIZE_MAX / 64);
	if (p->n_string_table == 0)
		intern_str(t, "");
	for (size_t i = 0; i < p->n_string_table; i++) {
		bool inserted;
		int64_t *v = str_map_put(&t->strs, (str_key *)&p->string_table[i], &inserted);
		if (!v)
			return false;
		if (inserted)
			*v = (int64_t)i;
	}
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		fn_key k = {f->name, f->system_name, f->filename, f->start_line};
		bool inserted;
		uint64_t *v = fn_map_put(&t->fns, &k, &inserted);
		if (!v)
			return false;
		if (inserted)
			*v = f->id;
	}
	return !t->oom;
}

static void tables_deinit(struct tables *t)
{
	str_map_deinit(&t->strs);
	fn_map_deinit(&t->fns);
	svc_frame_cache_deinit(&t->frames);
	base_vec_deinit(&t->new_strs);
	base_vec_deinit(&t->new_fns);
}

/* The new strings and functions appended to the profile's tables. */
static bool tables_commit(struct tables *t, base_arena *arena)
{
	Perftools__Profiles__Profile *p = t->p;
	size_t ns = p->n_string_table + t->new_strs.len, nf = p->n_function + t->new_fns.len;
	char **strs = base_arena_alloc(arena, (ns ? ns : 1) * sizeof(*strs));
	Perftools__Profiles__Function **fns = base_arena_alloc(arena, (nf ? nf : 1) * sizeof(*fns));
	Perftools__Profiles__Function *nfn =
		base_arena_alloc(arena, (t->new_fns.len ? t->new_fns.len : 1) * sizeof(*nfn));
	if (!strs || !fns || !nfn)
		return false;
	/* Empty tables may be NULL: memcpy wants a pointer even for 0 bytes. */
	if (p->n_string_table)
		memcpy(strs, p->string_table, p->n_string_table * sizeof(*strs));
	if (t->new_strs.len)
		memcpy(strs + p->n_string_table, t->new_strs.data, t->new_strs.len * sizeof(*strs));
	if (p->n_function)
		memcpy(fns, p->function, p->n_function * sizeof(*fns));
	const fn_key *keys = t->new_fns.data;
	for (size_t i = 0; i < t->new_fns.len; i++) {
		perftools__profiles__function__init(&nfn[i]);
		nfn[i].id = t->next_id - t->new_fns.len + i;
		nfn[i].name = keys[i].name;
		nfn[i].system_name = keys[i].system_name;
		nfn[i].filename = keys[i].filename;
		nfn[i].start_line = keys[i].start_line;
		fns[p->n_function + i] = &nfn[i];
	}
	p->string_table = strs;
	p->n_string_table = ns;
	p->function = fns;
	p->n_function = nf;
	return true;
}

/* The lines of one location from its frames; false out of memory. */
static bool add_lines(struct tables *t, Perftools__Profiles__Location *l, const sym_frame *frames,
		      size_t n, bool no_inline, bool no_demangle, base_arena *arena)
{
	size_t nlines = no_inline ? 1 : n;
	Perftools__Profiles__Line *lines = base_arena_alloc(arena, nlines * sizeof(*lines));
	Perftools__Profiles__Line **ptrs = base_arena_alloc(arena, nlines * sizeof(*ptrs));
	if (!lines || !ptrs)
		return false;
	for (size_t j = 0; j < nlines; j++) {
		/* --no-inlines: the function the code belongs to, at the address's line. */
		const sym_frame *fn = no_inline ? &frames[n - 1] : &frames[j];
		perftools__profiles__line__init(&lines[j]);
		lines[j].function_id = intern_fn(t, fn, frames[j].file, no_demangle);
		lines[j].line = frames[j].line;
		lines[j].column = frames[j].column;
		ptrs[j] = &lines[j];
	}
	l->line = ptrs;
	l->n_line = nlines;
	l->is_folded = false;
	return !t->oom;
}

static void set_flags(Perftools__Profiles__Profile *p, const svc_lookup_mapping *maps)
{
	for (size_t i = 0; i < p->n_mapping; i++) {
		if (maps[i].status != STATUS_OK || !maps[i].entry)
			continue;
		uint32_t f = maps[i].entry->info.flags;
		Perftools__Profiles__Mapping *m = p->mapping[i];
		m->has_functions |= (f & SYM_INDEX_HAS_FUNCTIONS) != 0;
		m->has_filenames |= (f & SYM_INDEX_HAS_FILENAMES) != 0;
		m->has_line_numbers |= (f & SYM_INDEX_HAS_LINE_NUMBERS) != 0;
		m->has_inline_frames |= (f & SYM_INDEX_HAS_INLINE_FRAMES) != 0;
	}
}

bool svc_profile_fill(svc_profile_doc *d, const svc_lookup_mapping *maps, bool no_inline,
		      bool no_demangle, base_arena *arena, svc_profile_fill_stats *st,
		      svc_error *err)
{
	Perftools__Profiles__Profile *p = d->p;
	struct tables t;
	bool ok = tables_init(&t, d);
	sym_frame frames[SVC_RESPONSE_MAX_LINES];
	for (size_t i = 0; ok && i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		if (l->n_line)
			continue;  /* symbolized already */
		size_t n = 0;
		uint64_t vaddr;
		uint32_t mi = d->loc_mapping[i];
		if (mi && maps[mi - 1].status == STATUS_OK)
			svc_lookup_frames(&maps[mi - 1], l->address, d->loc_return[i], frames,
					  SVC_RESPONSE_MAX_LINES, &n, &vaddr);
		if (n == 0) {
			st->unsymbolized++;
			continue;
		}
		ok = add_lines(&t, l, frames, n, no_inline, no_demangle, arena);
		st->symbolized++;
		st->frames += l->n_line;
	}
	ok = ok && tables_commit(&t, arena);
	tables_deinit(&t);
	if (!ok)
		return svc_error_set(err, SVC_E_TOO_LARGE,
				     "profile too large to symbolize (the call's memory cap)"), false;
	set_flags(p, maps);
	return true;
}
