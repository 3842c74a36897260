// SPDX-License-Identifier: Apache-2.0
/*
 * sym_gopclntab_collect: pclntab functions into a sym_collect (see
 * sym_gopclntab_collect.h).
 *
 * What runtime.CallersFrames reports for a PC is reproduced by the index's
 * own lookup: the innermost scope at the PC is the inline-tree node of
 * PCDATA_InlTreeIndex there (its function the node's name), the frame's
 * file:line the file and line tables at the PC; each enclosing frame is the
 * node at the node's parentPc (-1: the function itself), called from the file
 * and line at parentPc. Nodes are made parents first, so a parent's scope id
 * is below its children's; a cycle among nodes (hostile input) ends at the
 * function's scope, and chains are at most MAX_INLINE_DEPTH deep.
 */
#include "symbolizer/sym_gopclntab_collect_impl.h"
#include "symbolizer/sym_goname_impl.h"
#include "symbolizer/sym_map64_impl.h"

#include <string.h>

#define MAX_INLINE_DEPTH 256
#define NAME_MAX_BYTES 4096
#define IN_PROGRESS (UINT32_MAX - 1)
/* Work cap: pc-value steps per byte of the pc tables, plus a floor (Go's own
 * compiler reads 4.8 per byte, terraform 2.5). */
#define WORK_PER_PC_BYTE 64
#define WORK_MIN ((uint64_t)1 << 20)

struct gc {
	const sym_gopcln *t;
	sym_collect *out;
	sym_map64 funcs;      /* nameoff -> function id */
	sym_map64 files;      /* cu_offset << 32 | fileno -> string offset */
	sym_map64 nodes;      /* inline node (function i, ix) -> scope id */
	base_vec depths;      /* uint32_t per scope id */
	uint64_t spent, budget;  /* pc-value steps read, and the most allowed */
	uint32_t order;
	char buf[NAME_MAX_BYTES];
};

static uint32_t function_of(struct gc *g, uint32_t nameoff)
{
	uint32_t id = sym_map64_lookup(&g->funcs, nameoff);
	if (id != UINT32_MAX)
		return id;
	const char *raw = sym_gopcln_name(g->t, nameoff);
	if (!raw)
		raw = "?";
	struct sym_ix_func f = {0};
	bool shortened = sym_goname_print(raw, g->buf, sizeof(g->buf));
	f.name = f.display = sym_strtab_add_cstr(&g->out->strs, shortened ? g->buf : raw);
	/* The symbol's own spelling stays the linkage name where it differs. */
	f.linkage = shortened ? sym_strtab_add_cstr(&g->out->strs, raw) : 0;
	if (f.name == SYM_STR_NONE || f.linkage == SYM_STR_NONE)
		return UINT32_MAX;
	id = (uint32_t)g->out->funcs.len;
	struct sym_ix_func *slot = base_vec_push(&g->out->funcs);
	if (!slot || !sym_map64_set(&g->funcs, nameoff, id))
		return UINT32_MAX;
	*slot = f;
	return id;
}

/* String offset of f's file fileno; 0 unknown, SYM_STR_NONE out of memory. */
static uint32_t file_of(struct gc *g, const sym_gopcln_func *f, int32_t fileno)
{
	if (fileno < 0)
		return 0;
	uint64_t key = (uint64_t)f->cu_offset << 32 | (uint32_t)fileno;
	uint32_t s = sym_map64_lookup(&g->files, key);
	if (s != UINT32_MAX)
		return s;
	const char *name = sym_gopcln_file(g->t, f, fileno);
	s = name ? sym_strtab_add_cstr(&g->out->strs, name) : 0;
	if (s == SYM_STR_NONE || !sym_map64_set(&g->files, key, s))
		return SYM_STR_NONE;
	if (s) {
		uint32_t *u = base_vec_push(&g->out->unit_files);
		if (!u)
			return SYM_STR_NONE;
		*u = s;
	}
	return s;
}

static uint32_t push_scope(struct gc *g, const struct sym_ix_scope *sc, uint32_t depth)
{
	uint32_t id = (uint32_t)g->out->scopes.len;
	struct sym_ix_scope *slot = base_vec_push(&g->out->scopes);
	uint32_t *d = base_vec_push(&g->depths);
	if (!slot || !d)
		return UINT32_MAX;
	*slot = *sc;
	*d = depth;
	return id;
}

/*
 * The scope of inline node ix of function fi (root: the function's own
 * scope), made with its parents first. UINT32_MAX when out of memory.
 */
static uint32_t node_scope(struct gc *g, uint64_t fi, const sym_gopcln_func *f, uint32_t root,
			   uint32_t inl_off, int32_t ix, unsigned level)
{
	uint64_t key = fi << 21 | (uint32_t)ix;
	uint32_t id = sym_map64_lookup(&g->nodes, key);
	if (id == IN_PROGRESS)
		return root;   /* a cycle: end the chain at the function */
	if (id != UINT32_MAX)
		return id;
	sym_gopcln_inl inl;
	if (level >= MAX_INLINE_DEPTH || g->spent > g->budget || !sym_gopcln_inl_at(g->t, f, ix, &inl))
		return root;
	if (!sym_map64_set(&g->nodes, key, IN_PROGRESS))
		return UINT32_MAX;
	uint32_t parent = root;
	uint64_t call_pc = f->entry + (uint64_t)(int64_t)inl.parent_pc;
	bool in_func = inl.parent_pc >= 0 && call_pc < f->end;
	if (in_func) {
		int32_t pix = sym_gopcln_pcvalue(g->t, inl_off, f, call_pc, &g->spent);
		if (pix >= 0 && pix < SYM_GOPCLN_MAX_INL_INDEX)
			parent = node_scope(g, fi, f, root, inl_off, pix, level + 1);
		if (parent == UINT32_MAX)
			return UINT32_MAX;
	}
	struct sym_ix_scope sc = {.parent = parent};
	sc.func = function_of(g, inl.nameoff);
	if (sc.func == UINT32_MAX)
		return UINT32_MAX;
	if (in_func) {
		sc.call_file = file_of(g, f, sym_gopcln_pcvalue(g->t, f->pcfile, f, call_pc, &g->spent));
		int32_t line = sym_gopcln_pcvalue(g->t, f->pcln, f, call_pc, &g->spent);
		sc.call_line = line > 0 ? (uint32_t)line : 0;
		if (sc.call_file == SYM_STR_NONE)
			return UINT32_MAX;
	}
	uint32_t depth = BASE_VEC_AT(&g->depths, uint32_t, parent) + 1;
	id = push_scope(g, &sc, depth);
	if (id == UINT32_MAX || !sym_map64_set(&g->nodes, key, id))
		return UINT32_MAX;
	return id;
}

static bool push_span(base_vec *v, uint64_t lo, uint64_t hi, uint32_t a, uint32_t b, uint32_t order)
{
	sym_span *s = base_vec_push(v);
	if (!s)
		return false;
	*s = (sym_span){.lo = lo, .hi = hi, .a = a, .b = b, .order = order};
	return true;
}

/* Line spans where both the file and the line table hold one value. */
static bool collect_lines(struct gc *g, const sym_gopcln_func *f)
{
	sym_gopcln_pcv fi, li;
	sym_gopcln_pcv_init(&fi, g->t, f->pcfile, f);
	sym_gopcln_pcv_init(&li, g->t, f->pcln, f);
	uint64_t flo, fhi, llo, lhi;
	int32_t fv, lv;
	int fr = sym_gopcln_pcv_next(&fi, &flo, &fhi, &fv);
	int lr = sym_gopcln_pcv_next(&li, &llo, &lhi, &lv);
	while (fr == 1 && lr == 1) {
		uint64_t lo = flo > llo ? flo : llo, hi = fhi < lhi ? fhi : lhi;
		if (lo < hi && lv >= 0) {
			uint32_t file = file_of(g, f, fv);
			if (file == SYM_STR_NONE ||
			    !push_span(&g->out->line_spans, lo, hi, file, (uint32_t)lv, 0))
				return false;
		}
		if (fhi <= lhi)
			fr = sym_gopcln_pcv_next(&fi, &flo, &fhi, &fv);
		else
			lr = sym_gopcln_pcv_next(&li, &llo, &lhi, &lv);
	}
	g->spent += fi.steps + li.steps;
	return true;
}

/* One function; false only when out of memory. */
static bool collect_func(struct gc *g, uint64_t i, const sym_gopcln_func *f)
{
	struct sym_ix_scope root_sc = {.parent = SYM_IX_NONE};
	root_sc.func = function_of(g, f->nameoff);
	if (root_sc.func == UINT32_MAX)
		return false;
	uint32_t root = push_scope(g, &root_sc, 0);
	if (root == UINT32_MAX || !push_span(&g->out->scope_spans, f->entry, f->end, root, 0,
					     g->order++))
		return false;
	if (!collect_lines(g, f))
		return false;
	uint32_t inl_off = sym_gopcln_inl_pcdata(g->t, f);
	if (!inl_off || !sym_gopcln_has_inltree(g->t, f))
		return true;
	sym_gopcln_pcv it;
	sym_gopcln_pcv_init(&it, g->t, inl_off, f);
	uint64_t lo, hi;
	int32_t ix;
	while (sym_gopcln_pcv_next(&it, &lo, &hi, &ix) == 1) {
		if (ix < 0 || ix >= SYM_GOPCLN_MAX_INL_INDEX)
			continue;
		uint32_t sc = node_scope(g, i, f, root, inl_off, ix, 0);
		if (sc == UINT32_MAX)
			return false;
		if (sc != root && !push_span(&g->out->scope_spans, lo, hi, sc,
					      BASE_VEC_AT(&g->depths, uint32_t, sc), g->order++))
			return false;
	}
	g->spent += it.steps;
	return true;
}

sym_errc sym_gopcln_collect(const sym_gopcln *t, sym_collect *out, sym_error *err)
{
	struct gc g = {.t = t, .out = out};
	sym_map64_init(&g.funcs);
	sym_map64_init(&g.files);
	sym_map64_init(&g.nodes);
	base_vec_init(&g.depths, sizeof(uint32_t), SYM_MAX_SCOPES);
	/* Scope ids in depths are those of out->scopes: start where it stands. */
	sym_errc rc = SYM_OK;
	uint64_t good = 0;
	sym_error first = {0};
	if (out->scopes.len && base_vec_reserve(&g.depths, out->scopes.len))
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory reading the pclntab");
	for (size_t k = 0; !rc && k < out->scopes.len; k++)
		*(uint32_t *)base_vec_push(&g.depths) = 0;
	/*
	 * Functions may share pc-value tables and inline nodes look values up
	 * again: what the walks may read in all is capped, so a hostile table
	 * costs time in proportion to its size, not to its square.
	 */
	g.budget = WORK_PER_PC_BYTE * (t->pc_end - t->pc_off) + WORK_MIN;
	for (uint64_t i = 0; !rc && i < t->nfunc; i++) {
		sym_gopcln_func f;
		if (sym_gopcln_func_at(t, i, &f, first.code ? NULL : &first))
			continue;
		if (!collect_func(&g, i, &f))
			rc = sym_error_set(err, SYM_E_NOMEM, "out of memory reading the pclntab");
		else if (g.spent > g.budget)
			rc = sym_error_set(err, SYM_E_TOO_LARGE, "pclntab: its pc-value tables read "
					   "more than %llu steps (%llu bytes of them)",
					   (unsigned long long)g.budget,
					   (unsigned long long)(t->pc_end - t->pc_off));
		good++;
	}
	if (!rc && !good) {
		rc = first.code ? first.code : SYM_E_NO_SYMBOLS;
		if (err)
			*err = first;
		sym_error_prefix(err, "pclntab: no readable function");
	}
	sym_map64_deinit(&g.funcs);
	sym_map64_deinit(&g.files);
	sym_map64_deinit(&g.nodes);
	base_vec_deinit(&g.depths);
	return rc;
}
