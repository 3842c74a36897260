// SPDX-License-Identifier: Apache-2.0
/*
 * sym_collect_units: the DWARF shards' records back in unit order (see
 * sym_collect_merge_units in sym_collect_impl.h), for a blob that does not
 * depend on how many threads walked the file.
 *
 * Each shard's records of one unit are contiguous and end at the unit's
 * mark; the shard's maps (string offset, function and scope index -> dst's)
 * grow as its units are taken, smallest unit number first across shards.
 */
#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_map64_impl.h"

#include <string.h>

struct shard_pos {
	sym_collect *c;
	size_t unit;                   /* next mark */
	size_t str, func, scope, sspan, lspan, ufile;
	uint32_t *str_map, *func_map, *scope_map;
};

static int take_strings(sym_collect *dst, struct shard_pos *p, size_t end)
{
	for (; p->str < end;) {
		const char *s = p->c->strs.bytes + p->str;
		size_t len = strlen(s);
		p->str_map[p->str] = sym_strtab_add(&dst->strs, s, len);
		if (p->str_map[p->str] == SYM_STR_NONE)
			return -1;
		p->str += len + 1;
	}
	return 0;
}

static int take_funcs(sym_collect *dst, sym_map64 *keys, struct shard_pos *p, size_t end)
{
	for (; p->func < end; p->func++) {
		uint64_t key = BASE_VEC_AT(&p->c->func_keys, uint64_t, p->func);
		uint32_t id = sym_map64_lookup(keys, key);
		if (id == UINT32_MAX) {
			struct sym_ix_func f = BASE_VEC_AT(&p->c->funcs, struct sym_ix_func, p->func);
			f.name = p->str_map[f.name];
			f.linkage = p->str_map[f.linkage];
			f.display = p->str_map[f.display];
			f.decl_file = p->str_map[f.decl_file];
			id = (uint32_t)dst->funcs.len;
			if (base_vec_append(&dst->funcs, &f) || !sym_map64_set(keys, key, id))
				return -1;
		}
		p->func_map[p->func] = id;
	}
	return 0;
}

/* The records of the unit at p's next mark, appended to dst. */
static int take_unit(sym_collect *dst, sym_map64 *keys, struct shard_pos *p)
{
	const struct sym_collect_unit *m =
		&BASE_VEC_AT(&p->c->units, struct sym_collect_unit, p->unit++);
	if (take_strings(dst, p, m->strs) || take_funcs(dst, keys, p, m->funcs))
		return -1;
	for (; p->scope < m->scopes; p->scope++) {
		struct sym_ix_scope s = BASE_VEC_AT(&p->c->scopes, struct sym_ix_scope, p->scope);
		s.func = p->func_map[s.func];
		if (s.parent != SYM_IX_NONE)
			s.parent = p->scope_map[s.parent];
		s.call_file = p->str_map[s.call_file];
		p->scope_map[p->scope] = (uint32_t)dst->scopes.len;
		if (base_vec_append(&dst->scopes, &s))
			return -1;
	}
	for (; p->sspan < m->scope_spans; p->sspan++) {
		sym_span s = BASE_VEC_AT(&p->c->scope_spans, sym_span, p->sspan);
		s.a = p->scope_map[s.a];
		s.order = (uint32_t)dst->scope_spans.len; /* one walk numbers spans as it adds them */
		if (base_vec_append(&dst->scope_spans, &s))
			return -1;
	}
	for (; p->lspan < m->line_spans; p->lspan++) {
		sym_span s = BASE_VEC_AT(&p->c->line_spans, sym_span, p->lspan);
		s.a = p->str_map[s.a];
		if (base_vec_append(&dst->line_spans, &s))
			return -1;
	}
	for (; p->ufile < m->unit_files; p->ufile++) {
		uint32_t f = p->str_map[BASE_VEC_AT(&p->c->unit_files, uint32_t, p->ufile)];
		if (base_vec_append(&dst->unit_files, &f))
			return -1;
	}
	return 0;
}

/* The shard whose next unit comes first, or NULL when all are taken. */
static struct shard_pos *next_shard(struct shard_pos *pos, unsigned n)
{
	struct shard_pos *best = NULL;
	uint32_t best_unit = 0;
	for (unsigned i = 0; i < n; i++) {
		if (pos[i].unit >= pos[i].c->units.len)
			continue;
		uint32_t u = BASE_VEC_AT(&pos[i].c->units, struct sym_collect_unit, pos[i].unit).unit;
		if (!best || u < best_unit) {
			best = &pos[i];
			best_unit = u;
		}
	}
	return best;
}

static int reserve_all(sym_collect *dst, sym_collect *shards, unsigned n)
{
	size_t f = 0, sc = 0, ss = 0, ls = 0, uf = 0;
	for (unsigned i = 0; i < n; i++) {
		f += shards[i].funcs.len;
		sc += shards[i].scopes.len;
		ss += shards[i].scope_spans.len;
		ls += shards[i].line_spans.len;
		uf += shards[i].unit_files.len;
	}
	return base_vec_reserve(&dst->funcs, f) || base_vec_reserve(&dst->scopes, sc) ||
	       base_vec_reserve(&dst->scope_spans, ss) || base_vec_reserve(&dst->line_spans, ls) ||
	       base_vec_reserve(&dst->unit_files, uf);
}

int sym_collect_merge_units(sym_collect *dst, sym_collect *shards, unsigned n)
{
	if (n == 1 && dst->strs.size <= 1 && !dst->funcs.len && !dst->scopes.len &&
	    !dst->scope_spans.len && !dst->line_spans.len && !dst->unit_files.len) {
		/* One walk's records are already in unit order: take them as they are. */
		sym_collect empty = *dst;
		uint64_t min_code = dst->min_code_addr;
		*dst = shards[0];
		dst->min_code_addr = min_code;
		shards[0] = empty;
		return 0;
	}
	int rc = -1;
	sym_map64 keys;
	sym_map64_init(&keys);
	struct shard_pos *pos = calloc(n, sizeof(*pos));
	if (!pos || reserve_all(dst, shards, n))
		goto out;
	for (unsigned i = 0; i < n; i++) {
		pos[i].c = &shards[i];
		pos[i].str_map = malloc((shards[i].strs.size + 1) * sizeof(uint32_t));
		pos[i].func_map = malloc((shards[i].funcs.len + 1) * sizeof(uint32_t));
		pos[i].scope_map = malloc((shards[i].scopes.len + 1) * sizeof(uint32_t));
		if (!pos[i].str_map || !pos[i].func_map || !pos[i].scope_map)
			goto out;
	}
	struct shard_pos *p;
	while ((p = next_shard(pos, n)) != NULL)
		if (take_unit(dst, &keys, p))
			goto out;
	rc = 0;
out:
	for (unsigned i = 0; pos && i < n; i++) {
		free(pos[i].str_map);
		free(pos[i].func_map);
		free(pos[i].scope_map);
	}
	free(pos);
	sym_map64_deinit(&keys);
	return rc;
}
