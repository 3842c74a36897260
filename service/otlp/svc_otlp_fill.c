// SPDX-License-Identifier: Apache-2.0
/*
 * svc_otlp_fill: lines, functions and strings added to an OTLP profiles
 * dictionary (svc_otlp_impl.h), as svc_profile_fill does for pprof.
 */
#include "service/otlp/svc_otlp_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_arena.h"
#include "base/base_hash.h"
#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "service/symbolize/svc_frame_cache.h"
#include "service/symbolize/svc_lookup.h"
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

BASE_HASH_MAP(ostr_map, str_key, int32_t, str_hash, str_eq)

typedef struct fn_key {
	int32_t name, system_name, filename;
	int64_t start_line;
} fn_key;

static uint64_t fn_hash(const fn_key *k)
{
	return base_hash_bytes(k, sizeof(*k));
}

static bool fn_eq(const fn_key *a, const fn_key *b)
{
	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

BASE_HASH_MAP(ofn_map, fn_key, int32_t, fn_hash, fn_eq)

struct tables {
	otlp_dict *d;
	ostr_map strs;
	ofn_map fns;
	svc_frame_cache frames;
	base_vec new_strs;   /* const char * */
	base_vec new_fns;    /* fn_key */
	bool full;           /* an index past INT32_MAX, or out of memory */
};

static int32_t intern_str(struct tables *t, const char *s)
{
	bool inserted;
	int32_t *v = ostr_map_put(&t->strs, &s, &inserted);
	if (!v)
		return t->full = true, 0;
	if (inserted) {
		const char **slot = base_vec_push(&t->new_strs);
		size_t at = t->d->n_string_table + t->new_strs.len - 1;
		if (!slot || at > INT32_MAX)
			return t->full = true, 0;
		*slot = s;
		*v = (int32_t)at;
	}
	return *v;
}

static int32_t intern_fn(struct tables *t, const sym_frame *fn, const char *file)
{
	const char *system = fn->linkage_name[0] ? fn->linkage_name : fn->name;
	svc_frame_key fk = {fn->display_name, system, file, fn->decl_line};
	bool added;
	int64_t *cached = svc_frame_cache_put(&t->frames, &fk, &added);
	if (cached && !added)
		return (int32_t)*cached;
	fn_key k = {intern_str(t, fn->display_name), intern_str(t, system), intern_str(t, file),
		    fn->decl_line};
	bool inserted;
	int32_t *v = ofn_map_put(&t->fns, &k, &inserted);
	if (!v)
		return t->full = true, 0;
	if (inserted) {
		fn_key *slot = base_vec_push(&t->new_fns);
		size_t at = t->d->n_function_table + t->new_fns.len - 1;
		if (!slot || at > INT32_MAX)
			return t->full = true, 0;
		*slot = k;
		*v = (int32_t)at;
	}
	if (cached)
		*cached = *v;
	return *v;
}

static bool tables_init(struct tables *t, otlp_dict *d)
{
	memset(t, 0, sizeof(*t));
	t->d = d;
	ostr_map_init(&t->strs);
	ofn_map_init(&t->fns);
	svc_frame_cache_init(&t->frames);
	base_vec_init(&t->new_strs, sizeof(const char *), INT32_MAX);
	base_vec_init(&t->new_fns, sizeof(fn_key), INT32_MAX);
	/* string_table[0] is "" by the spec's rule: an empty table gets it. */
	if (d->n_string_table == 0)
		intern_str(t, "");
	for (size_t i = 0; i < d->n_string_table; i++) {
		bool inserted;
		int32_t *v = ostr_map_put(&t->strs, (str_key *)&d->string_table[i], &inserted);
		if (!v)
			return false;
		if (inserted)
			*v = (int32_t)i;
	}
	for (size_t i = 0; i < d->n_function_table; i++) {
		const otlp_function *f = d->function_table[i];
		fn_key k = {f->name_strindex, f->system_name_strindex, f->filename_strindex,
			    f->start_line};
		bool inserted;
		int32_t *v = ofn_map_put(&t->fns, &k, &inserted);
		if (!v)
			return false;
		if (inserted)
			*v = (int32_t)i;
	}
	return !t->full;
}

static void tables_deinit(struct tables *t)
{
	ostr_map_deinit(&t->strs);
	ofn_map_deinit(&t->fns);
	svc_frame_cache_deinit(&t->frames);
	base_vec_deinit(&t->new_strs);
	base_vec_deinit(&t->new_fns);
}

/* The new strings and functions after the dictionary's own (undo keeps those). */
static bool tables_commit(struct tables *t, base_arena *arena, svc_otlp_undo *undo)
{
	otlp_dict *d = t->d;
	size_t ns = d->n_string_table + t->new_strs.len, nf = d->n_function_table + t->new_fns.len;
	char **strs = base_arena_alloc(arena, (ns ? ns : 1) * sizeof(*strs));
	otlp_function **fns = base_arena_alloc(arena, (nf ? nf : 1) * sizeof(*fns));
	otlp_function *nfn =
		base_arena_alloc(arena, (t->new_fns.len ? t->new_fns.len : 1) * sizeof(*nfn));
	if (!strs || !fns || !nfn)
		return false;
	if (d->n_string_table)
		memcpy(strs, d->string_table, d->n_string_table * sizeof(*strs));
	if (t->new_strs.len)
		memcpy(strs + d->n_string_table, t->new_strs.data, t->new_strs.len * sizeof(*strs));
	if (d->n_function_table)
		memcpy(fns, d->function_table, d->n_function_table * sizeof(*fns));
	const fn_key *keys = t->new_fns.data;
	for (size_t i = 0; i < t->new_fns.len; i++) {
		opentelemetry__proto__profiles__v1development__function__init(&nfn[i]);
		nfn[i].name_strindex = keys[i].name;
		nfn[i].system_name_strindex = keys[i].system_name;
		nfn[i].filename_strindex = keys[i].filename;
		nfn[i].start_line = keys[i].start_line;
		fns[d->n_function_table + i] = &nfn[i];
	}
	undo->strings = d->string_table;
	undo->n_strings = d->n_string_table;
	undo->functions = d->function_table;
	undo->n_functions = d->n_function_table;
	d->string_table = strs;
	d->n_string_table = ns;
	d->function_table = fns;
	d->n_function_table = nf;
	undo->committed = true;
	return true;
}

/* The lines of one location from its frames; false out of memory. */
static bool add_lines(struct tables *t, otlp_location *l, const sym_frame *frames, size_t n,
		      base_arena *arena)
{
	otlp_line *lines = base_arena_alloc(arena, n * sizeof(*lines));
	otlp_line **ptrs = base_arena_alloc(arena, n * sizeof(*ptrs));
	if (!lines || !ptrs)
		return false;
	for (size_t j = 0; j < n; j++) {
		opentelemetry__proto__profiles__v1development__line__init(&lines[j]);
		lines[j].function_index = intern_fn(t, &frames[j], frames[j].file);
		lines[j].line = frames[j].line;
		lines[j].column = frames[j].column;
		ptrs[j] = &lines[j];
	}
	l->lines = ptrs;
	l->n_lines = n;
	return !t->full;
}

bool svc_otlp_fill(svc_otlp_doc *d, const svc_lookup_mapping *maps, base_arena *arena,
		   svc_otlp_fill_stats *st, svc_otlp_undo *undo, svc_error *err)
{
	memset(undo, 0, sizeof(*undo));
	if (!d->dict)
		return true;
	otlp_dict *dict = d->dict;
	struct tables t;
	bool ok = tables_init(&t, dict);
	undo->locs = base_arena_alloc(arena, (dict->n_location_table ? dict->n_location_table : 1) *
						     sizeof(*undo->locs));
	ok = ok && undo->locs;
	sym_frame frames[SVC_RESPONSE_MAX_LINES];
	for (size_t i = 0; ok && i < dict->n_location_table; i++) {
		otlp_location *l = dict->location_table[i];
		int32_t mi = l->mapping_index;
		if (l->n_lines || mi <= 0 || maps[mi].status != STATUS_OK)
			continue; /* symbolized already, interpreted, kernel by name, or unresolved */
		size_t n = 0;
		uint64_t vaddr;
		/* The eBPF profiler sends ELF virtual addresses, return addresses
		 * already moved into the call (address - 1). */
		svc_lookup_frames(&maps[mi], l->address, false, frames, SVC_RESPONSE_MAX_LINES, &n,
				  &vaddr);
		if (n > SVC_RESPONSE_MAX_LINES)
			n = SVC_RESPONSE_MAX_LINES;
		if (n == 0) {
			st->unsymbolized++;
			continue;
		}
		undo->locs[undo->n_locs++] = l;
		ok = add_lines(&t, l, frames, n, arena);
		st->symbolized++;
		st->frames += n;
	}
	ok = ok && tables_commit(&t, arena, undo);
	tables_deinit(&t);
	if (!ok)
		return svc_error_set(err, SVC_E_TOO_LARGE,
				     "profiles too large to symbolize (the call's memory cap)"), false;
	return true;
}

void svc_otlp_unfill(svc_otlp_doc *d, svc_otlp_undo *undo)
{
	if (!d->dict)
		return;
	for (size_t i = 0; i < undo->n_locs; i++) {
		undo->locs[i]->lines = NULL;  /* had none of protobuf-c's */
		undo->locs[i]->n_lines = 0;
	}
	undo->n_locs = 0;
	if (undo->committed) {
		d->dict->string_table = undo->strings;
		d->dict->n_string_table = undo->n_strings;
		d->dict->function_table = undo->functions;
		d->dict->n_function_table = undo->n_functions;
		undo->strings = NULL;
		undo->functions = NULL;
		undo->n_strings = undo->n_functions = 0;
		undo->committed = false;
	}
}
