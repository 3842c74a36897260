// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index_write: from collected spans to disjoint ranges, then to the blob
 * (sym_index_pack.c; see sym_index_write_impl.h and sym_index_format_impl.h).
 */
#include "symbolizer/sym_index_write_impl.h"
#include "symbolizer/sym_flatten_impl.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_index_format_impl.h"
#include "symbolizer/sym_index_pack_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

static int push_range(base_vec *ranges, uint64_t start, const struct sym_ix_rec *rec)
{
	if (ranges->len) {
		sym_ix_range *last = &BASE_VEC_AT(ranges, sym_ix_range, ranges->len - 1);
		if (!memcmp(&last->rec, rec, sizeof(*rec)))
			return 0;
		if (last->start == start) {
			last->rec = *rec;
			return 0;
		}
	}
	sym_ix_range *r = base_vec_push(ranges);
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
	return &BASE_VEC_AT(&in->c->scopes, struct sym_ix_scope, id);
}

static sym_errc sweep(const sym_index_input *in, struct cursor *cs, struct cursor *cy,
		      struct cursor *cl, base_vec *ranges, sym_error *err)
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
				rec.file = BASE_VEC_AT(&in->c->funcs, struct sym_ix_func, sc->func).decl_file;
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

/* One of the three flattenings, runnable on a thread of its own. */
struct flatten_job {
	base_vec *spans, *segs;
	bool by_depth;
	sym_errc rc;
	sym_error err;
};

static void *flatten_job_run(void *arg)
{
	struct flatten_job *j = arg;
	j->rc = sym_flatten(j->spans->data, j->spans->len, j->by_depth, j->segs, &j->err);
	return NULL;
}

/* Scopes are flattened on a second thread while symbols and lines are on this one
 * (their sorts are the build's longest serial step). */
enum { SPAN_MANY = 1 << 16 };

sym_errc sym_index_write(sym_index_input *in, void **blob, size_t *size, sym_error *err)
{
	base_vec segs[3], ranges;
	base_vec *spans[3] = {&in->c->scope_spans, in->symbol_spans, &in->c->line_spans};
	struct cursor cur[3];
	struct flatten_job jobs[3];
	sym_errc rc = SYM_OK;
	base_vec_init(&ranges, sizeof(sym_ix_range), (size_t)UINT32_MAX - 1);
	for (int k = 0; k < 3; k++) {
		base_vec_init(&segs[k], sizeof(sym_seg), SYM_MAX_SPANS * 2);
		jobs[k] = (struct flatten_job){spans[k], &segs[k], k < 2, SYM_OK, {0}};
	}
	pthread_t tid;
	bool threaded = spans[0]->len + spans[2]->len >= SPAN_MANY &&
			pthread_create(&tid, NULL, flatten_job_run, &jobs[0]) == 0;
	for (int k = threaded ? 1 : 0; k < 3; k++)
		flatten_job_run(&jobs[k]);
	if (threaded)
		pthread_join(tid, NULL);
	for (int k = 0; k < 3; k++) {
		if (jobs[k].rc && !rc) {
			rc = jobs[k].rc;
			if (err)
				*err = jobs[k].err;
		}
		cur[k] = (struct cursor){segs[k].data, segs[k].len, 0, spans[k]->data};
	}
	if (!rc)
		rc = sweep(in, &cur[0], &cur[1], &cur[2], &ranges, err);
	if (!rc && ranges.len > UINT32_MAX - 1)
		rc = sym_error_set(err, SYM_E_TOO_LARGE, "too many ranges for one index");
	if (!rc)
		rc = sym_index_pack(in, ranges.data, ranges.len, blob, size, err);
	for (int k = 0; k < 3; k++)
		base_vec_deinit(&segs[k]);
	base_vec_deinit(&ranges);
	return rc;
}
