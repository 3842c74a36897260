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

#include "service/symbolize/svc_response.h"
#include "symbolizer/sym_index.h"

#define MAX_FRAMES SVC_RESPONSE_MAX_LINES

/* ---- normalization ---- */

bool svc_normalize_address(const sym_index_info *info, const Symbolizer__V1__Mapping *m,
			   uint64_t address, uint64_t *vaddr)
{
	uint64_t off;
	switch (m->address_kind) {
	case SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF:
		*vaddr = address;
		return true;
	case SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME:
		if (address < m->memory_start || (m->memory_limit && address >= m->memory_limit))
			return false;
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

/* The response's bytes appended to body. */
static bool pack(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
		 struct evbuffer *body)
{
	size_t size = svc_response_size(r, maps, n_maps);
	if (size == 0)
		return true;
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(body, (ev_ssize_t)size, &v, 1) != 1)
		return false;
	svc_response_write(r, maps, n_maps, v.iov_base);
	v.iov_len = size;
	return evbuffer_commit_space(body, &v, 1) == 0;
}

void svc_lookup_run(const Symbolizer__V1__SymbolizeRequest *req, svc_lookup_mapping *maps,
		    base_arena *arena, svc_response_pool *pool, struct evbuffer *body,
		    svc_lookup_result *out)
{
	bool no_inline = req->options && req->options->no_inline;
	bool no_demangle = req->options && req->options->no_demangle;
	size_t nl = req->n_locations, nm = req->n_mappings;
	/* The response's tables share the call's memory cap with its arena. */
	size_t budget = SIZE_MAX;
	if (arena->cap)
		budget = arena->used < arena->cap ? arena->cap - arena->used : 0;
	svc_response r;
	uint32_t *entry_no = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*entry_no));
	svc_response_mapping *rm = base_arena_alloc(arena, (nm ? nm : 1) * sizeof(*rm));
	if (!svc_response_begin(&r, pool, nl, no_demangle, budget) || !entry_no || !rm) {
		svc_error_set(&out->err, SVC_E_NOMEM, "out of memory building the response");
		goto done;
	}
	for (size_t i = 0; i < nm; i++) {
		const svc_lookup_mapping *m = &maps[i];
		rm[i].status = m->status;
		rm[i].error = m->error;
		rm[i].retry_after_ms = m->retry_after_ms;
		rm[i].flags = m->entry ? m->entry->info.flags : 0;
		entry_no[i] = m->entry ? svc_response_entry(&r, m->entry) : 0;
	}

	sym_frame frames[MAX_FRAMES];
	for (size_t i = 0; i < nl && !r.oom; i++) {
		const Symbolizer__V1__Location *loc = req->locations[i];
		uint32_t mi = loc->mapping_index;
		const svc_lookup_mapping *m = &maps[mi];
		uint64_t vaddr;
		size_t n;
		if (!svc_lookup_frames(m, loc->address, loc->is_return_address, frames, MAX_FRAMES,
				       &n, &vaddr)) {
			svc_response_location(&r, 0);
			continue;
		}
		size_t nlines = n == 0 ? 0 : no_inline ? 1 : n;
		for (size_t j = 0; j < nlines; j++) {
			/* --no-inlines: the function the code belongs to, at the address's line. */
			const sym_frame *fn = no_inline ? &frames[n - 1] : &frames[j];
			const sym_frame *at = &frames[j];
			uint32_t f = svc_response_function(&r, entry_no[mi], fn, at->file);
			svc_response_line(&r, f, at->line, at->column);
		}
		svc_response_location(&r, vaddr);
		out->frames += nlines;
		out->symbolized += nlines != 0;
	}
	if (r.oom) {
		svc_error_set(&out->err, SVC_E_TOO_LARGE,
			      "response too large (the call's memory cap)");
		goto done;
	}
	if (!pack(&r, rm, nm, body)) {
		svc_error_set(&out->err, SVC_E_NOMEM, "out of memory packing the response");
		goto done;
	}
	out->err.code = SVC_OK;
done:
	svc_response_end(&r);
}
