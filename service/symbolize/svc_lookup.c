// SPDX-License-Identifier: Apache-2.0
/*
 * svc_lookup: lookups and the response of a Symbolize call (svc_lookup.h).
 * The tables and the encoding of the response are svc_response's.
 */
#include "service/symbolize/svc_lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/core/svc_evbuffer.h"
#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_index.h"

#define MAX_FRAMES SVC_RESPONSE_MAX_LINES

/* ---- normalization ---- */

#define ET_EXEC_TYPE 2
#define ET_REL_TYPE 1

/*
 * pprof's kernelBase (internal/elfexec): the slide of a kernel image from its
 * mapping, with the first executable PT_LOAD as the text segment and _stext
 * (else _text) as the relocation symbol; false when no rule matches.
 */
static bool kernel_base(const sym_index_info *info, const Symbolizer__V1__Mapping *m,
			uint64_t *base)
{
	const uint64_t page = 4096, ppc64_page_offset = 0xc000000000000000ull;
	uint64_t start = m->memory_start, limit = m->memory_limit, offset = m->file_offset;
	uint64_t stext = info->kernel_stext ? info->kernel_stext : info->kernel_text;
	const sym_elf_load *seg = NULL;
	for (uint32_t i = 0; i < info->n_loads && !seg; i++)
		if (info->loads[i].flags & 1)
			seg = &info->loads[i];
	if (start == 0 && offset == 0 && (limit == 0 || limit == UINT64_MAX)) {
		*base = 0;   /* a mapping of the whole space: addresses already adjusted */
		return true;
	}
	if (!seg)
		return false;
	if (seg->vaddr == start - offset) {
		*base = offset;
		return true;
	}
	if (start == 0 && limit != 0 && stext) {
		*base = start - stext;
		return true;
	}
	if (start >= (1ull << 63) && limit > start &&
	    (offset == 0 || offset == ppc64_page_offset || offset == start)) {
		/* perf's mapping starts at _stext; else at the text segment. */
		*base = stext && start % page == stext % page ? start - stext : start - seg->vaddr;
		return true;
	}
	if (start % page != 0 && stext && stext % page == start % page) {
		*base = start - stext;
		return true;
	}
	return false;
}

bool svc_normalize_address(const sym_index_info *info, const Symbolizer__V1__Mapping *m,
			   uint64_t address, uint64_t *vaddr)
{
	uint64_t off, base;
	switch (m->address_kind) {
	case SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF:
		*vaddr = address;
		return true;
	case SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME:
		if (address < m->memory_start || (m->memory_limit && address >= m->memory_limit))
			return false;
		if (info->elf_type == ET_EXEC_TYPE &&
		    (info->kernel_stext || info->kernel_text || m->memory_start >= (1ull << 63)) &&
		    kernel_base(info, m, &base)) {
			*vaddr = address - base;
			return true;
		}
		off = address - m->memory_start + m->file_offset;
		if (off < m->file_offset)
			return false; /* wrapped */
		break;
	case SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_FILE_OFFSET:
		off = address;
		break;
	default:
		return false;
	}
	if (info->n_loads == 0)
		return false;
	/* A separate debug file zeroes p_offset/p_filesz: rebuild GNU ld's layout. */
	bool stripped = true;
	for (uint32_t i = 0; i < info->n_loads; i++)
		if (info->loads[i].filesz != 0 && info->loads[i].flags & 1)
			stripped = false;
	uint64_t first_page = info->loads[0].vaddr & ~(uint64_t)0xfff;
	for (uint32_t i = 0; i < info->n_loads; i++) {
		const sym_elf_load *l = &info->loads[i];
		uint64_t l_off = stripped ? l->vaddr - first_page : l->offset;
		uint64_t l_size = stripped ? l->memsz : l->filesz;
		if (off >= l_off && off - l_off < l_size) {
			*vaddr = off - l_off + l->vaddr;
			return true;
		}
	}
	return false;
}

bool svc_section_address(const Symbolizer__V1__Mapping *m, uint64_t sec_addr,
			 uint64_t sec_size, uint64_t address, uint64_t *vaddr)
{
	uint64_t off = address;
	if (m->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME) {
		if (address < m->memory_start || (m->memory_limit && address >= m->memory_limit))
			return false;
		off = address - m->memory_start;
	}
	if (off >= sec_size)
		return false;
	*vaddr = sec_addr + off;
	return true;
}

const char *svc_mapping_section(const Symbolizer__V1__Mapping *m, const sym_index_info *info)
{
	bool by_section =
		m->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_SECTION ||
		(m->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME &&
		 info->elf_type == ET_REL_TYPE);
	if (!by_section)
		return NULL;
	return m->section && *m->section ? m->section : ".text";
}

bool svc_lookup_frames(const svc_lookup_mapping *m, uint64_t address, bool is_return_address,
		       sym_frame *frames, size_t max, size_t *n, uint64_t *vaddr)
{
	*n = 0;
	if (!m->entry || !svc_normalize_address(&m->entry->info, m->pb, address, vaddr))
		return false;
	uint64_t a = is_return_address && *vaddr > 0 ? *vaddr - 1 : *vaddr;
	*n = sym_index_lookup(m->entry->index, a, frames, max);
	if (*n > max)
		*n = max;
	return true;
}

/* ---- the response ---- */

void svc_lookup_result_init(svc_lookup_result *r)
{
	memset(r, 0, sizeof(*r));
}

/* A mapping's section (for ADDRESS_KIND_SECTION, or RUNTIME on an ET_REL file). */
struct sec {
	const char *name;   /* NULL: addresses are not section offsets */
	uint64_t addr, size;
};

/* Finds m's section in its index; false (the mapping made INVALID in *rm) when missing. */
static bool find_section(const svc_lookup_mapping *m, base_arena *arena, struct sec *s,
			 svc_response_mapping *rm)
{
	memset(s, 0, sizeof(*s));
	s->name = svc_mapping_section(m->pb, &m->entry->info);
	if (!s->name || sym_index_section(m->entry->index, s->name, &s->addr, &s->size))
		return true;
	char *msg = base_arena_alloc(arena, SYM_ERROR_MSG_MAX);
	if (msg)
		snprintf(msg, SYM_ERROR_MSG_MAX, "the file has no allocated section \"%.64s\"",
			 s->name);
	rm->status = SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_INVALID;
	rm->error = msg ? msg : "the file has no such section";
	rm->flags = 0;
	return false;
}

/* The response's bytes appended to body, by reference (no copy). False
 * when out of budget (r->oom) or memory. */
static bool pack(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
		 struct evbuffer *body)
{
	svc_response_piece pieces[SVC_RESPONSE_PIECES];
	size_t n = svc_response_take(r, maps, n_maps, pieces);
	bool ok = n > 0;
	for (size_t i = 0; i < n; i++)
		if (!(ok = ok && svc_evbuffer_give(body, pieces[i].data, pieces[i].len)))
			free(pieces[i].data);
	return ok;
}

/*
 * A batch's lookups overlap their cache misses: each location's address is
 * normalized first; each run of locations on one index is then searched at
 * once (sym_index_find_batch: every bucket fetched first, then the searches
 * with the starts and rows of the ones ahead fetched); then the frames are
 * read as numbers in groups of up to GROUP locations on one index
 * (sym_index_frame_ids_batch: a group's reads overlap their misses, 6%
 * faster than a location at a time; its scope rows are fetched first),
 * whose Lines are then added (svc_response_frames_batch, which fetches the
 * group's function and file slots and records first). Fetching them a group
 * ahead, or the names behind the records too, cost more than it saved
 * (libc, 1,000 random addresses a call).
 */
#define GROUP 8
#define GROUP_FRAMES (2 * MAX_FRAMES)

struct group {
	sym_frame_ids frames[GROUP_FRAMES];
	uint32_t first[GROUP], n[GROUP];
	size_t count;
};

/*
 * What normalize_all finds for each location i, read by every later step: its
 * ELF address vaddr[i], the address it is looked up at look[i] (a return
 * address: the call, not the instruction after it), the index it is looked
 * up in idx[i] (NULL: none, a location without an answer) and that index's
 * entry number in the response ent[i].
 */
struct located {
	uint64_t *vaddr, *look;
	const sym_index **idx;
	uint32_t *ent, *hits;   /* hits: search_all's handles */
};

/* How a mapping's locations become ELF addresses (plan_of). */
enum how {
	HOW_NONE,       /* no lookups: no index, or no such section */
	HOW_ELF,        /* ADDRESS_KIND_ELF: the address is one already */
	HOW_SECTION,    /* an offset in a section (struct sec) */
	HOW_NORMALIZE,  /* svc_normalize_address */
};

/* What each location of one mapping needs, found once a mapping. */
struct plan {
	const svc_lookup_mapping *m;
	const sym_index *idx;   /* NULL for HOW_NONE */
	uint32_t ent;           /* the index's entry number in the response */
	enum how how;
};

/* m's plan, from its entry number and its section (find_section's, read
 * only when m has an index). */
static struct plan plan_of(const svc_lookup_mapping *m, uint32_t entry_no, const struct sec *sec)
{
	struct plan p = {.m = m, .ent = entry_no, .how = HOW_NONE};
	if (!m->entry || entry_no == UINT32_MAX)
		return p;
	p.idx = m->entry->index;
	p.how = sec->name ? HOW_SECTION
		: m->pb->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF
			? HOW_ELF
			: HOW_NORMALIZE;
	return p;
}

static void normalize_all(const svc_request_locations *locs, const struct plan *plans,
			  const struct sec *secs, const struct located *at)
{
	for (size_t i = 0; i < locs->n; i++) {
		uint32_t mi = locs->mapping_index[i];
		const struct plan *p = &plans[mi];
		uint64_t a = locs->address[i], v = a;
		bool ok = p->how == HOW_ELF ||
			  (p->how == HOW_SECTION &&
			   svc_section_address(p->m->pb, secs[mi].addr, secs[mi].size, a, &v)) ||
			  (p->how == HOW_NORMALIZE &&
			   svc_normalize_address(&p->m->entry->info, p->m->pb, a, &v));
		at->vaddr[i] = ok ? v : 0;
		at->look[i] = ok ? v - (locs->is_return[i] & (v > 0)) : 0;
		at->idx[i] = ok ? p->idx : NULL;
		at->ent[i] = p->ent;
	}
}

/* hits[i]: the covering range of each location (sym_index_find_batch's
 * handle; 0 for none), searched a run of locations on one index at a time. */
static void search_all(size_t nl, const struct located *at)
{
	for (size_t i = 0; i < nl;) {
		const sym_index *idx = at->idx[i];
		size_t j = i + 1;
		while (j < nl && at->idx[j] == idx)
			j++;
		if (idx)
			sym_index_find_batch(idx, at->look + i, j - i, at->hits + i);
		else
			memset(at->hits + i, 0, (j - i) * sizeof(*at->hits));
		i = j;
	}
}

/* Reads the frames of the locations from i into g, as many as it holds of
 * those on i's index (or without one, as i is); returns g->count. */
static size_t group_lookup(size_t nl, const struct located *at, size_t i, struct group *g)
{
	const sym_index *idx = at->idx[i];
	size_t end = i + 1;
	while (end < nl && end - i < GROUP && at->idx[end] == idx)
		end++;
	g->count = end - i;
	if (!idx) {
		memset(g->n, 0, g->count * sizeof(g->n[0]));
		memset(g->first, 0, g->count * sizeof(g->first[0]));
		return g->count;
	}
	g->count = sym_index_frame_ids_batch(idx, at->hits + i, end - i, MAX_FRAMES, g->frames,
					     GROUP_FRAMES, g->first, g->n);
	for (size_t k = 0; k < g->count; k++)
		if (g->n[k] > MAX_FRAMES)
			g->n[k] = MAX_FRAMES;
	return g->count;
}

/* Adds the LocationResults of the group of locations from i (a location
 * without an index has no frames, and its vaddr is 0). */
static void group_add(svc_response *r, const struct located *at, size_t i, const struct group *g,
		      bool no_inline, svc_lookup_result *out)
{
	svc_response_frames_batch(r, g->count, at->ent + i, g->frames, g->first, g->n, no_inline,
				  at->vaddr + i);
	for (size_t k = 0; k < g->count; k++) {
		size_t nlines = g->n[k] == 0 ? 0 : no_inline ? 1 : g->n[k];
		out->frames += nlines;
		out->symbolized += nlines != 0;
	}
}

void svc_lookup_run(const Symbolizer__V1__SymbolizeRequest *req,
		    const svc_request_locations *locs, svc_lookup_mapping *maps, base_arena *arena,
		    svc_response_pool *pool, const svc_rpc_json *json, struct evbuffer *body,
		    svc_lookup_result *out)
{
	bool no_inline = req->options && req->options->no_inline;
	bool no_demangle = req->options && req->options->no_demangle;
	size_t nl = locs->n, nm = req->n_mappings;
	uint32_t *entry_no = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*entry_no));
	struct plan *plans = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*plans));
	svc_response_mapping *rm = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*rm));
	struct sec *secs = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*secs));
	size_t nl1 = nl ? nl : 1;
	struct located at = {
		.vaddr = base_arena_alloc(arena, nl1 * sizeof(*at.vaddr)),
		.look = base_arena_alloc(arena, nl1 * sizeof(*at.look)),
		.idx = base_arena_alloc(arena, nl1 * sizeof(*at.idx)),
		.ent = base_arena_alloc(arena, nl1 * sizeof(*at.ent)),
		.hits = base_arena_alloc(arena, nl1 * sizeof(*at.hits)),
	};
	/* The response's tables share the call's memory cap with its arena. */
	size_t budget = SIZE_MAX;
	if (arena->cap)
		budget = arena->used < arena->cap ? arena->cap - arena->used : 0;
	/* JSON's text, about three times the wire's bytes, was not charged when
	 * the RPC layer transcoded the wire: a JSON call may take as much. */
	if (json)
		budget = budget > SIZE_MAX / 3 ? SIZE_MAX : budget * 3;
	svc_response r;
	if (!svc_response_begin(&r, pool, nl, no_demangle, json, budget) || !entry_no || !plans ||
	    !rm || !secs || !at.vaddr || !at.look || !at.idx || !at.ent || !at.hits) {
		svc_error_set(&out->err, SVC_E_NOMEM, "out of memory building the response");
		goto done;
	}
	for (size_t i = 0; i < nm; i++) {
		const svc_lookup_mapping *m = &maps[i];
		rm[i].status = m->status;
		rm[i].error = m->error;
		rm[i].retry_after_ms = m->retry_after_ms;
		rm[i].flags = m->entry ? m->entry->info.flags : 0;
		entry_no[i] = m->entry ? svc_response_entry(&r, m->entry, m->entry->index,
							     &m->entry->strings,
							     m->entry->info.n_functions)
				       : 0;
		if (m->entry && !find_section(m, arena, &secs[i], &rm[i]))
			entry_no[i] = UINT32_MAX;   /* no such section: no lookups */
		plans[i] = plan_of(m, entry_no[i], &secs[i]);
	}
	normalize_all(locs, plans, secs, &at);
	search_all(nl, &at);
	struct group g;
	for (size_t i = 0; i < nl && !r.oom; i += g.count) {
		group_lookup(nl, &at, i, &g);
		group_add(&r, &at, i, &g, no_inline, out);
	}
	if (!pack(&r, rm, nm, body)) {
		if (r.oom)
			svc_error_set(&out->err, SVC_E_TOO_LARGE,
				      "response too large (the call's memory cap)");
		else
			svc_error_set(&out->err, SVC_E_NOMEM, "out of memory packing the response");
		goto done;
	}
	out->err.code = SVC_OK;
done:
	svc_response_end(&r);
}
