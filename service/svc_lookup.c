/*
 * svc_lookup: lookups and the response of a Symbolize call (svc_lookup.h).
 *
 * Deduplication: a function entry is keyed by (index, function id, file of
 * the line, naming mode), so the lines of one function in one file share it;
 * strings are found first by address (strings of one index blob are unique)
 * and then by content, so equal names from two indexes are sent once.
 */
#include "service/svc_lookup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "symbolizer/sym_index.h"

#define MAX_FRAMES 128
#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

/* ---- an open-addressing map from three 64-bit keys to a 32-bit value ---- */

struct slot {
	uint64_t a, b, c;
	uint32_t v;
	uint32_t used;
};

struct map {
	struct slot *slots;
	size_t cap, n;     /* cap: power of two */
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) ^
		     (c * 0xff51afd7ed558ccdull);
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 29;
	return h;
}

static bool map_grow(struct map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].used)
			continue;
		size_t j = mix(m->slots[i].a, m->slots[i].b, m->slots[i].c) & (cap - 1);
		while (s[j].used)
			j = (j + 1) & (cap - 1);
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return true;
}

/* Finds (a, b, c); when absent, the slot to fill (then set its keys, v, used
 * and count it in n). NULL only when out of memory. */
static struct slot *map_find(struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	if ((m->n + 1) * 2 > m->cap && !map_grow(m))
		return NULL;
	size_t j = mix(a, b, c) & (m->cap - 1);
	while (m->slots[j].used &&
	       (m->slots[j].a != a || m->slots[j].b != b || m->slots[j].c != c))
		j = (j + 1) & (m->cap - 1);
	return &m->slots[j];
}

/* ---- the tables of the response ---- */

struct tables {
	char **strings;
	size_t n_strings, cap_strings;
	Symbolizer__V1__Function *funcs;
	size_t n_funcs, cap_funcs;
	struct map by_ptr;      /* string address -> index */
	struct map by_content;  /* (hash, n-th string with that hash) -> index */
	struct map func_ids;    /* (entry, function id and mode, file address) -> index */
	bool oom;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint32_t string_index(struct tables *t, const char *s)
{
	if (!s || !*s)
		return 0;
	struct slot *p = map_find(&t->by_ptr, (uintptr_t)s, 0, 0);
	if (!p) {
		t->oom = true;
		return 0;
	}
	if (p->used)
		return p->v;
	uint64_t h = hash_str(s);
	uint32_t idx = 0;
	for (uint64_t k = 0;; k++) {
		struct slot *c = map_find(&t->by_content, h, k, 0);
		if (!c) {
			t->oom = true;
			return 0;
		}
		if (c->used) {
			if (strcmp(t->strings[c->v], s) == 0) {
				idx = c->v;
				break;
			}
			continue;
		}
		if (t->n_strings == t->cap_strings) {
			size_t cap = t->cap_strings * 2;
			char **ns = realloc(t->strings, cap * sizeof(*ns));
			if (!ns) {
				t->oom = true;
				return 0;
			}
			t->strings = ns;
			t->cap_strings = cap;
		}
		idx = (uint32_t)t->n_strings;
		t->strings[t->n_strings++] = (char *)s;
		c->a = h;
		c->b = k;
		c->c = 0;
		c->v = idx;
		c->used = 1;
		t->by_content.n++;
		break;
	}
	if (!p->used) {
		p->a = (uintptr_t)s;
		p->b = 0;
		p->c = 0;
		p->v = idx;
		p->used = 1;
		t->by_ptr.n++;
	}
	return idx;
}

static uint32_t function_index(struct tables *t, const svc_index_entry *e, const sym_frame *fn,
			       const char *file, bool no_demangle)
{
	uint64_t a = (uintptr_t)e;
	uint64_t b = ((uint64_t)fn->function_id << 1) | no_demangle;
	uint64_t c = (uintptr_t)file;
	struct slot *p = map_find(&t->func_ids, a, b, c);
	if (!p) {
		t->oom = true;
		return 0;
	}
	if (p->used)
		return p->v;
	if (t->n_funcs == t->cap_funcs) {
		size_t cap = t->cap_funcs ? t->cap_funcs * 2 : 256;
		Symbolizer__V1__Function *nf = realloc(t->funcs, cap * sizeof(*nf));
		if (!nf) {
			t->oom = true;
			return 0;
		}
		t->funcs = nf;
		t->cap_funcs = cap;
	}
	uint32_t idx = (uint32_t)t->n_funcs;
	p->a = a;
	p->b = b;
	p->c = c;
	p->v = idx;
	p->used = 1;
	t->func_ids.n++;
	const char *system = fn->linkage_name[0] ? fn->linkage_name : fn->name;
	const char *name = no_demangle ? system : fn->display_name;
	Symbolizer__V1__Function f = SYMBOLIZER__V1__FUNCTION__INIT;
	f.name = string_index(t, name);
	f.system_name = string_index(t, system);
	f.filename = string_index(t, file);
	f.start_line = fn->decl_line;
	t->funcs[t->n_funcs++] = f;
	return idx;
}

static void tables_free(struct tables *t)
{
	free(t->strings);
	free(t->funcs);
	free(t->by_ptr.slots);
	free(t->by_content.slots);
	free(t->func_ids.slots);
}

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

/* ---- the response ---- */

void svc_lookup_result_init(svc_lookup_result *r)
{
	memset(r, 0, sizeof(*r));
}

void svc_lookup_result_deinit(svc_lookup_result *r)
{
	if (r->body)
		evbuffer_free(r->body);
	r->body = NULL;
}

static void set_error(svc_lookup_result *out, svc_connect_code code, const char *msg)
{
	out->code = code;
	snprintf(out->error, sizeof(out->error), "%s", msg);
}

static bool pack(Symbolizer__V1__SymbolizeResponse *resp, bool gzip, svc_lookup_result *out)
{
	size_t size = symbolizer__v1__symbolize_response__get_packed_size(resp);
	out->body = evbuffer_new();
	if (!out->body)
		return false;
	if (gzip && size >= 1024) {
		uint8_t *tmp = malloc(size);
		if (!tmp)
			return false;
		symbolizer__v1__symbolize_response__pack(resp, tmp);
		bool ok = svc_gzip(tmp, size, out->body);
		free(tmp);
		out->gzipped = ok;
		return ok;
	}
	if (size == 0)
		return true;
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(out->body, (ev_ssize_t)size, &v, 1) != 1)
		return false;
	symbolizer__v1__symbolize_response__pack(resp, v.iov_base);
	v.iov_len = size;
	return evbuffer_commit_space(out->body, &v, 1) == 0;
}

void svc_lookup_run(const Symbolizer__V1__SymbolizeRequest *req, svc_lookup_mapping *maps,
		    svc_arena *arena, bool gzip, svc_lookup_result *out)
{
	bool no_inline = req->options && req->options->no_inline;
	bool no_demangle = req->options && req->options->no_demangle;
	struct tables t = {0};
	t.cap_strings = 256;
	t.strings = malloc(t.cap_strings * sizeof(*t.strings));
	Symbolizer__V1__SymbolizeResponse resp = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
	size_t nl = req->n_locations, nm = req->n_mappings;
	Symbolizer__V1__LocationResult *lrs = svc_arena_alloc(arena, (nl ? nl : 1) * sizeof(*lrs));
	Symbolizer__V1__LocationResult **lrp = svc_arena_alloc(arena, (nl ? nl : 1) * sizeof(*lrp));
	Symbolizer__V1__MappingResult *mrs = svc_arena_alloc(arena, (nm ? nm : 1) * sizeof(*mrs));
	Symbolizer__V1__MappingResult **mrp = svc_arena_alloc(arena, (nm ? nm : 1) * sizeof(*mrp));
	if (!t.strings || !lrs || !lrp || !mrs || !mrp) {
		set_error(out, SVC_CONNECT_RESOURCE_EXHAUSTED, "out of memory building the response");
		goto done;
	}
	t.strings[t.n_strings++] = (char *)"";

	for (size_t i = 0; i < nm; i++) {
		const svc_lookup_mapping *m = &maps[i];
		Symbolizer__V1__MappingResult r = SYMBOLIZER__V1__MAPPING_RESULT__INIT;
		r.status = m->status;
		r.error = (char *)m->error;
		r.retry_after_ms = m->retry_after_ms;
		if (m->entry) {
			uint32_t f = m->entry->info.flags;
			r.has_functions = !!(f & SYM_INDEX_HAS_FUNCTIONS);
			r.has_filenames = !!(f & SYM_INDEX_HAS_FILENAMES);
			r.has_line_numbers = !!(f & SYM_INDEX_HAS_LINE_NUMBERS);
			r.has_inline_frames = !!(f & SYM_INDEX_HAS_INLINE_FRAMES);
		}
		mrs[i] = r;
		mrp[i] = &mrs[i];
	}

	sym_frame frames[MAX_FRAMES];
	for (size_t i = 0; i < nl; i++) {
		const Symbolizer__V1__Location *loc = req->locations[i];
		Symbolizer__V1__LocationResult lr = SYMBOLIZER__V1__LOCATION_RESULT__INIT;
		lrs[i] = lr;
		lrp[i] = &lrs[i];
		const svc_lookup_mapping *m = &maps[loc->mapping_index];
		if (!m->entry)
			continue;
		uint64_t vaddr;
		if (!svc_normalize_address(&m->entry->info, m->pb, loc->address, &vaddr))
			continue;
		lrs[i].normalized_address = vaddr;
		uint64_t a = loc->is_return_address && vaddr > 0 ? vaddr - 1 : vaddr;
		size_t n = sym_index_lookup(m->entry->index, a, frames, MAX_FRAMES);
		if (n > MAX_FRAMES)
			n = MAX_FRAMES;
		if (n == 0)
			continue;
		size_t nlines = no_inline ? 1 : n;
		Symbolizer__V1__Line *lines = svc_arena_alloc(arena, nlines * sizeof(*lines));
		Symbolizer__V1__Line **lp = svc_arena_alloc(arena, nlines * sizeof(*lp));
		if (!lines || !lp) {
			set_error(out, SVC_CONNECT_RESOURCE_EXHAUSTED,
				  "response too large (the call's memory cap)");
			goto done;
		}
		for (size_t j = 0; j < nlines; j++) {
			/* --no-inlines: the function the code belongs to, at the address's line. */
			const sym_frame *fn = no_inline ? &frames[n - 1] : &frames[j];
			const sym_frame *at = &frames[j];
			Symbolizer__V1__Line l = SYMBOLIZER__V1__LINE__INIT;
			l.function_index = function_index(&t, m->entry, fn, at->file, no_demangle);
			l.line = at->line;
			l.column = at->column;
			lines[j] = l;
			lp[j] = &lines[j];
		}
		lrs[i].n_lines = nlines;
		lrs[i].lines = lp;
		out->frames += nlines;
		out->symbolized++;
	}
	if (t.oom) {
		set_error(out, SVC_CONNECT_RESOURCE_EXHAUSTED, "out of memory building the response");
		goto done;
	}

	Symbolizer__V1__Function **fp = svc_arena_alloc(arena, (t.n_funcs ? t.n_funcs : 1) *
								      sizeof(*fp));
	if (!fp) {
		set_error(out, SVC_CONNECT_RESOURCE_EXHAUSTED, "out of memory building the response");
		goto done;
	}
	for (size_t i = 0; i < t.n_funcs; i++)
		fp[i] = &t.funcs[i];
	resp.n_string_table = t.n_strings;
	resp.string_table = t.strings;
	resp.n_functions = t.n_funcs;
	resp.functions = fp;
	resp.n_locations = nl;
	resp.locations = lrp;
	resp.n_mappings = nm;
	resp.mappings = mrp;
	if (!pack(&resp, gzip, out)) {
		svc_lookup_result_deinit(out);
		set_error(out, SVC_CONNECT_RESOURCE_EXHAUSTED, "out of memory packing the response");
		goto done;
	}
	out->code = SVC_CONNECT_OK;
done:
	tables_free(&t);
}
