/*
 * sym_index_write: from collected spans to the blob (see sym_index_write.h and
 * sym_index_format.h for the layout).
 */
#include "symbolizer/sym_index_write.h"
#include "symbolizer/sym_flatten.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_index_format.h"

#include <stdlib.h>
#include <string.h>

struct range {
	uint64_t start;
	struct sym_ix_rec rec;
};

/* One list of disjoint segments and a cursor over it. */
struct cursor {
	const sym_seg *seg;
	size_t n, i;
	const sym_span *spans;
};

static const sym_seg *active(struct cursor *c, uint64_t pos)
{
	while (c->i < c->n && c->seg[c->i].hi <= pos)
		c->i++;
	if (c->i < c->n && c->seg[c->i].lo <= pos)
		return &c->seg[c->i];
	return NULL;
}

static uint64_t next_edge(const struct cursor *c, uint64_t pos, uint64_t best)
{
	if (c->i >= c->n)
		return best;
	uint64_t e = c->seg[c->i].lo > pos ? c->seg[c->i].lo : c->seg[c->i].hi;
	return e < best ? e : best;
}

static int push_range(sym_vec *ranges, uint64_t start, const struct sym_ix_rec *rec)
{
	if (ranges->len) {
		struct range *last = &SYM_VEC_AT(ranges, struct range, ranges->len - 1);
		if (!memcmp(&last->rec, rec, sizeof(*rec)))
			return 0;
		if (last->start == start) {
			last->rec = *rec;
			return 0;
		}
	}
	struct range *r = sym_vec_push(ranges);
	if (!r)
		return -1;
	r->start = start;
	r->rec = *rec;
	return 0;
}

static const struct sym_ix_rec gap_rec = {.scope = SYM_IX_NONE};

/* Merges the three segment lists into ranges: scopes from DWARF over symbols, line rows. */
static const struct sym_ix_scope *sym_vec_at_scope(const sym_index_input *in, uint32_t id)
{
	return &SYM_VEC_AT(&in->c->scopes, struct sym_ix_scope, id);
}

static sym_errc sweep(const sym_index_input *in, struct cursor *cs, struct cursor *cy,
		      struct cursor *cl, sym_vec *ranges, sym_error *err)
{
	uint64_t pos = UINT64_MAX;
	struct cursor *all[3] = {cs, cy, cl};
	for (int k = 0; k < 3; k++)
		if (all[k]->n && all[k]->seg[0].lo < pos)
			pos = all[k]->seg[0].lo;
	uint64_t covered_to = pos;
	while (pos != UINT64_MAX) {
		const sym_seg *s = active(cs, pos), *y = active(cy, pos), *l = active(cl, pos);
		uint64_t next = UINT64_MAX;
		for (int k = 0; k < 3; k++)
			next = next_edge(all[k], pos, next);
		if (s || y || l) {
			struct sym_ix_rec rec = gap_rec;
			if (s)
				rec.scope = cs->spans[s->span].a;
			else if (y)
				rec.scope = cy->spans[y->span].a;
			if (!s && !l && y) {
				/* Symbol only: its STT_FILE, if any, names the file. */
				const struct sym_ix_scope *sc = sym_vec_at_scope(in, rec.scope);
				rec.file = SYM_VEC_AT(&in->c->funcs, struct sym_ix_func, sc->func).decl_file;
			}
			if (l) {
				const sym_span *ls = &cl->spans[l->span];
				rec.file = ls->a;
				rec.line = ls->b;
				rec.column = ls->c;
			}
			if (covered_to < pos && push_range(ranges, covered_to, &gap_rec))
				goto nomem;
			if (push_range(ranges, pos, &rec))
				goto nomem;
			covered_to = next;
		}
		pos = next;
	}
	if (ranges->len && push_range(ranges, covered_to, &gap_rec))
		goto nomem;
	return SYM_OK;
nomem:
	return sym_error_set(err, SYM_E_NOMEM, "out of memory building ranges");
}

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~(uint64_t)7;
}

static uint32_t compute_flags(const sym_index_input *in, const sym_vec *ranges)
{
	uint32_t flags = in->from_dwarf ? SYM_INDEX_FROM_DWARF : 0;
	for (size_t i = 0; i < ranges->len; i++) {
		const struct sym_ix_rec *r = &SYM_VEC_AT(ranges, struct range, i).rec;
		if (r->scope != SYM_IX_NONE)
			flags |= SYM_INDEX_HAS_FUNCTIONS;
		if (r->file)
			flags |= SYM_INDEX_HAS_FILENAMES;
		if (r->line)
			flags |= SYM_INDEX_HAS_LINE_NUMBERS;
	}
	for (size_t i = 0; i < in->c->scopes.len; i++)
		if (SYM_VEC_AT(&in->c->scopes, struct sym_ix_scope, i).parent != SYM_IX_NONE)
			flags |= SYM_INDEX_HAS_INLINE_FRAMES;
	return flags;
}


static sym_errc layout(const sym_index_input *in, const sym_vec *ranges, void **blob,
		       size_t *size, sym_error *err)
{
	const sym_collect *c = in->c;
	size_t n = ranges->len;
	uint64_t base = n ? SYM_VEC_AT(ranges, struct range, 0).start : 0;
	/* Ranges beyond 4 GiB from the first are dropped (starts are 32-bit offsets). */
	while (n > 1 && SYM_VEC_AT(ranges, struct range, n - 1).start - base > UINT32_MAX)
		n--;
	uint64_t span = n ? SYM_VEC_AT(ranges, struct range, n - 1).start - base : 0;
	uint32_t shift = 4;
	while (shift < 32 && (span >> shift) > (n / 4 + 1))
		shift++;
	uint64_t n_buckets = (span >> shift) + 1;

	struct sym_ix_header h = {0};
	memcpy(h.magic, SYM_IX_MAGIC, 8);
	h.version = SYM_IX_VERSION;
	h.header_size = sizeof(h);
	h.base = base;
	h.flags = compute_flags(in, ranges);
	h.n_ranges = (uint32_t)n;
	h.n_scopes = (uint32_t)c->scopes.len;
	h.n_funcs = (uint32_t)c->funcs.len;
	h.n_buckets = (uint32_t)n_buckets;
	h.bucket_shift = shift;
	h.strtab_size = (uint32_t)c->strs.size;
	h.build_id_len = in->elf->build_id.len;
	memcpy(h.build_id, in->elf->build_id.bytes, in->elf->build_id.len);
	h.n_loads = in->elf->n_loads;
	for (uint32_t i = 0; i < in->elf->n_loads && i < SYM_IX_MAX_LOADS; i++) {
		const sym_elf_load *l = &in->elf->loads[i];
		h.loads[i] = (struct sym_ix_load){l->vaddr, l->offset, l->filesz, l->memsz, l->flags, 0};
	}
	uint64_t off = align8(sizeof(h));
	h.off_starts = off;
	off = align8(off + n * sizeof(uint32_t));
	h.off_recs = off;
	off = align8(off + n * sizeof(struct sym_ix_rec));
	h.off_scopes = off;
	off = align8(off + c->scopes.len * sizeof(struct sym_ix_scope));
	h.off_funcs = off;
	off = align8(off + c->funcs.len * sizeof(struct sym_ix_func));
	h.off_buckets = off;
	off = align8(off + (n_buckets + 1) * sizeof(uint32_t));
	h.off_strtab = off;
	off = align8(off + c->strs.size);
	h.blob_size = off;

	uint8_t *b = calloc(1, off);
	if (!b)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory for a %llu-byte index",
				     (unsigned long long)off);
	memcpy(b, &h, sizeof(h));
	uint32_t *starts = (uint32_t *)(b + h.off_starts);
	struct sym_ix_rec *recs = (struct sym_ix_rec *)(b + h.off_recs);
	for (size_t i = 0; i < n; i++) {
		const struct range *r = &SYM_VEC_AT(ranges, struct range, i);
		starts[i] = (uint32_t)(r->start - base);
		recs[i] = r->rec;
	}
	if (n)
		recs[n - 1] = gap_rec;
	if (c->scopes.len)
		memcpy(b + h.off_scopes, c->scopes.data, c->scopes.len * sizeof(struct sym_ix_scope));
	if (c->funcs.len)
		memcpy(b + h.off_funcs, c->funcs.data, c->funcs.len * sizeof(struct sym_ix_func));
	uint32_t *buckets = (uint32_t *)(b + h.off_buckets);
	size_t j = 0;
	for (uint64_t k = 0; k <= n_buckets; k++) {
		uint64_t target = k << shift;
		while (j + 1 < n && starts[j + 1] <= target)
			j++;
		buckets[k] = (uint32_t)j;
	}
	memcpy(b + h.off_strtab, c->strs.bytes, c->strs.size);
	*blob = b;
	*size = (size_t)off;
	return SYM_OK;
}

sym_errc sym_index_write(sym_index_input *in, void **blob, size_t *size, sym_error *err)
{
	sym_vec segs[3], ranges;
	sym_vec *spans[3] = {&in->c->scope_spans, in->symbol_spans, &in->c->line_spans};
	struct cursor cur[3];
	sym_errc rc = SYM_OK;
	sym_vec_init(&ranges, sizeof(struct range), (size_t)UINT32_MAX - 1);
	for (int k = 0; k < 3; k++)
		sym_vec_init(&segs[k], sizeof(sym_seg), SYM_MAX_SPANS * 2);
	for (int k = 0; k < 3 && !rc; k++) {
		rc = sym_flatten(spans[k]->data, spans[k]->len, k < 2, &segs[k], err);
		cur[k] = (struct cursor){segs[k].data, segs[k].len, 0, spans[k]->data};
	}
	if (!rc)
		rc = sweep(in, &cur[0], &cur[1], &cur[2], &ranges, err);
	if (!rc && ranges.len > UINT32_MAX - 1)
		rc = sym_error_set(err, SYM_E_TOO_LARGE, "too many ranges for one index");
	if (!rc)
		rc = layout(in, &ranges, blob, size, err);
	for (int k = 0; k < 3; k++)
		sym_vec_deinit(&segs[k]);
	sym_vec_deinit(&ranges);
	return rc;
}
