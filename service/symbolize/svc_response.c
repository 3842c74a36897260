// SPDX-License-Identifier: Apache-2.0
/*
 * svc_response: the SymbolizeResponse builder and encoder (svc_response.h).
 */
#include "service/symbolize/svc_response.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_hash.h"
#include "service/resolve/svc_string_rank.h"
#include "service/symbolize/svc_response_impl.h"
#include "service/symbolize/svc_response_json.h"

/* Entry number entry's dense slots, or NULL when its keys are hashed. */
static inline const struct dense *dense_of(const svc_response_tables *t, uint32_t entry)
{
	return entry < t->n_dense && t->dense[entry].strings ? &t->dense[entry] : NULL;
}

/*
 * A varint field of a 32-bit value (none for 0). A value below 2^14 (every
 * index of a response's tables, nearly every line) takes one or two bytes,
 * chosen without a branch: lines and columns of either size come in random
 * order, and mispredicting them cost more than the third byte's store (so p
 * has 3 bytes of room even where the field is left out).
 */
static inline uint8_t *put_varint_field32(uint8_t *p, uint8_t tag, uint32_t v)
{
	if (v >= 0x4000) {
		p[0] = tag;
		return svc_wire_put_varint(p + 1, v);
	}
	uint32_t two = v >= 0x80;
	p[0] = tag;
	p[1] = (uint8_t)(v | two << 7);
	p[2] = (uint8_t)(v >> 7);
	return p + (v ? 2 + two : 0);
}

/* Bytes a string's copy moves a step, and may write past its end
 * (string_append): one step for nearly every C name and file name, so that
 * its loop's branch is seldom taken (a step of 16 mispredicted it for one
 * name in two; 32, for one string in six: 2% slower than 64; 128, 4%
 * slower than 64). */
#define COPY_CHUNK 64

/*
 * Appends s (len bytes) to the string table: its index, 0 when out of budget.
 * over: the COPY_CHUNK-rounded bytes from s are readable (inside an index's
 * string table), so it is copied in whole chunks without a call.
 */
static inline __attribute__((always_inline)) uint32_t string_append(svc_response *r,
								     const char *s, size_t len,
								     bool over, bool json)
{
	svc_response_tables *t = r->t;
	base_vec *st = &t->string_table;
	if (!section_reserve(r, st, 11 + len + COPY_CHUNK))
		return 0;
	uint32_t idx = (uint32_t)t->n_strings;
	if (r->n_entries > 1) {
		/* Only a call of several indexes matches strings by content. */
		if (!reserve(r, &t->strings, (size_t)idx + 1))
			return 0;
		t->strings.len = (size_t)idx + 1;
		*string_at(t, idx) = (struct rstring){s, len};
	}
	if (json && !rj_plain(s, len, over)) {
		if (!svc_response_json_string(r, s, len))
			return 0;
		t->n_strings++;
		return idx;
	}
	t->n_strings++;
	uint8_t *w = section_end(st);
	if (json) {
		w[0] = ',';
		w[1] = '"';
		w += 2;
	} else {
		*w++ = TAG(1, SVC_WIRE_LEN);
		if (len < 0x80)
			*w++ = (uint8_t)len;
		else
			w = svc_wire_put_varint(w, len);
	}
	if (over) {
		size_t i = 0;
		do {
			memcpy(w + i, s + i, COPY_CHUNK);
			i += COPY_CHUNK;
		} while (i < len);
	} else {
		memcpy(w, s, len);
	}
	w += len;
	if (json)
		*w++ = '"';
	section_set_end(st, w);
	return idx;
}

/*
 * A string not seen at its address in this call: with several indexes in the
 * call, the entry of an equal string of another; else a new entry of the
 * string table. 0 when out of budget.
 */
static uint32_t string_new(svc_response *r, const char *s, size_t len, bool over)
{
	svc_response_tables *t = r->t;
	if (r->n_entries <= 1)
		return string_append(r, s, len, over, r->json);
	struct slot *c = NULL;
	uint64_t h = base_hash_bytes(s, len), k = 0;
	for (;; k++) {
		c = svc_response_table_find(r, &t->by_content, h, k);
		if (!c)
			return 0;
		if (c->gen != t->gen)
			break;
		const struct rstring *o = string_at(t, c->val);
		if (o->len == len && memcmp(o->s, s, len) == 0)
			return c->val;
	}
	uint32_t idx = string_append(r, s, len, over, r->json);
	if (idx)
		svc_response_table_claim(r, &t->by_content, c, h, k, idx);
	return idx;
}

/* The string-table index of s, a string of d's index whose ordinal and
 * length (not 0) are known; fresh: it is known not to be in the table yet,
 * so its slot's stamp is not trusted. 0 when out of budget. */
static inline uint32_t string_index_ranked(svc_response *r, const struct dense *d, const char *s,
					   uint32_t ord, size_t len, bool fresh, bool json)
{
	svc_response_tables *t = r->t;
	struct sslot *ss = &d->strs[ord];
	/* Both tested without a short cut: whether a name is fresh depends on
	 * the data (in libc, two display names in three are named by several
	 * records), whether it was seen seldom does (1 in 50), and the slot is
	 * written next anyway. */
	if ((ss->gen == t->gen) & !fresh)
		return ss->val;
	bool over = (size_t)(d->copy_end - s) >= ((len + COPY_CHUNK - 1) & ~(size_t)(COPY_CHUNK - 1));
	uint32_t idx = r->n_entries <= 1 ? string_append(r, s, len, over, json)
					 : string_new(r, s, len, over);
	if (idx)
		*ss = (struct sslot){t->gen, idx};
	return idx;
}

/*
 * The string-table index of s (d: the dense slots of its index, or NULL). A
 * string of an index blob is there once, so its address names it within the
 * blob (as its ordinal in d, else as a key of by_ptr); with several blobs in
 * the call, equal strings at different addresses are matched by content too.
 */
static inline uint32_t string_index(svc_response *r, const struct dense *d, const char *s,
				    bool json)
{
	svc_response_tables *t = r->t;
	uint32_t ord, idx;
	size_t len;
	if (d && svc_string_rank_slice(d->strings, s, &ord, &len))
		return len ? string_index_ranked(r, d, s, ord, len, false, json) : 0;
	if (!s || !*s)
		return 0;
	struct slot *p = svc_response_table_find(r, &t->by_ptr, (uintptr_t)s, 0);
	if (!p)
		return 0;
	if (p->gen == t->gen)
		return p->val;
	idx = string_new(r, s, strlen(s), false);
	if (idx)
		svc_response_table_claim(r, &t->by_ptr, p, (uintptr_t)s, 0, idx);
	return idx;
}

/* The names of function id recorded when its index was ranked; NULL when none are. */
static inline const svc_string_rank_function *function_strings(const struct dense *d,
								uint32_t id)
{
	const svc_string_rank *rank = d ? d->strings : NULL;
	return rank && id < rank->n_functions ? &rank->functions[id] : NULL;
}

/* The string-table index of a function's or file's name s, recorded as (ord,
 * len); fresh: as string_index_ranked takes it. */
static inline uint32_t name_index(svc_response *r, const struct dense *d, const char *s,
				  uint32_t ord, uint16_t len, bool fresh, bool json)
{
	if (len == SVC_STRING_RANK_LONG)
		return string_index(r, d, s, json);
	return len ? string_index_ranked(r, d, s, ord, len, fresh, json) : 0;
}

/* The index of entry number e; NULL for none (a call out of budget). */
static inline const sym_index *index_of(const svc_response_tables *t, uint32_t e)
{
	return e < t->indexes.len ? ((const sym_index *const *)t->indexes.data)[e] : NULL;
}

/* The string-table index of file file_id's name (entry: its index's number;
 * d: the index's dense slots, or NULL): its slot when the file was met in
 * this call, else from its record, else ranked. */
static inline uint32_t file_index(svc_response *r, const struct dense *d, uint32_t entry,
				  uint32_t file_id, bool json)
{
	const svc_string_rank *rank = d ? d->strings : NULL;
	if (!rank || file_id >= rank->n_files) {
		const sym_index *idx = index_of(r->t, entry);
		return string_index(r, d, idx ? sym_index_file(idx, file_id) : "", json);
	}
	svc_response_tables *t = r->t;
	struct sslot *fl = &d->files[file_id];
	if (fl->gen == t->gen)
		return fl->val;
	const svc_string_rank_file *rf = &rank->files[file_id];
	uint32_t i = name_index(r, d, rank->base + rf->name_off, rf->name, rf->name_len,
				rf->only & SVC_STRING_RANK_ONLY_NAME, json);
	*fl = (struct sslot){t->gen, i};
	return i;
}

/* A Function's keys in the funcs table (k1: its file; k2: function, index). */
static inline void function_key(uint32_t entry, uint32_t function_id, uint32_t file_id,
				uint64_t *k1, uint64_t *k2)
{
	*k1 = file_id;
	*k2 = (uint64_t)function_id << 32 | entry;
}

/* Lines of a location whose lookup gave n frames (no_inline: one). */
static inline size_t lines_of(size_t n, bool no_inline)
{
	return n == 0 ? 0 : no_inline ? 1 : n;
}

/*
 * The string-table indexes of function_id's two names (d: its index's dense
 * slots, rf: its record) into *name_i and *system_i; first: the function's
 * first Function entry in this call, so a name its record says no other
 * record names is new to the table too.
 */
static inline void recorded_names(svc_response *r, const struct dense *d,
				  const svc_string_rank_function *rf, bool first, uint32_t *name_i,
				  uint32_t *system_i, bool json)
{
	const char *base = d->strings->base;
	const char *system = base + rf->system_off;
	bool fresh_system = first & !!(rf->only & SVC_STRING_RANK_ONLY_SYSTEM);
	if (r->no_demangle) {
		*name_i = *system_i = name_index(r, d, system, rf->system, rf->system_len,
						 fresh_system, json);
		return;
	}
	*name_i = name_index(r, d, base + rf->display_off, rf->display, rf->display_len,
			     first & !!(rf->only & SVC_STRING_RANK_ONLY_DISPLAY), json);
	*system_i = rf->system_off == rf->display_off
			    ? *name_i
			    : name_index(r, d, system, rf->system, rf->system_len, fresh_system,
					 json);
}

/* Appends the Function entry of function_id at file_id (of entry number
 * entry) to the function table, in JSON when json; its index. first: as
 * recorded_names takes it. Inlined into one function for each form, so that
 * neither tests the form. */
static inline __attribute__((always_inline)) uint32_t
function_add(svc_response *r, const struct dense *d, uint32_t entry, uint32_t function_id,
	     uint32_t file_id, bool first, bool json)
{
	svc_response_tables *t = r->t;
	/* Function { name = 1; system_name = 2; filename = 3; start_line = 4; }: <= 44 bytes. */
	if (!section_reserve(r, &t->functions,
			     json ? sizeof(RJ_FUNCTIONS) + RJ_FUNCTION_MAX : 2 + 44))
		return UINT32_MAX;
	/* The name first, then the system name: the string table's order. */
	const svc_string_rank_function *rf = function_strings(d, function_id);
	uint32_t name_i, system_i, decl_line = 0;
	if (rf) {
		recorded_names(r, d, rf, first, &name_i, &system_i, json);
		decl_line = rf->decl_line;
	} else {
		const char *display = "", *system = "";
		const sym_index *idx = index_of(t, entry);
		if (idx)
			sym_index_function_names(idx, function_id, &display, &system, &decl_line);
		const char *name = r->no_demangle ? system : display;
		name_i = string_index(r, d, name, json);
		system_i = system == name ? name_i : string_index(r, d, system, json);
	}
	uint32_t file_i = file_index(r, d, entry, file_id, json);
	base_vec *fs = &t->functions;
	if (json) {
		uint8_t *e = rj_element(fs, RJ_FUNCTIONS, sizeof(RJ_FUNCTIONS) - 1);
		section_set_end(fs, rj_function(e, name_i, system_i, file_i, decl_line));
		return (uint32_t)t->n_funcs++;
	}
	uint8_t *o = section_end(fs), *w = o + 2;
	w = put_varint_field32(w, TAG(1, SVC_WIRE_VARINT), name_i);
	w = put_varint_field32(w, TAG(2, SVC_WIRE_VARINT), system_i);
	w = put_varint_field32(w, TAG(3, SVC_WIRE_VARINT), file_i);
	w = put_varint_field32(w, TAG(4, SVC_WIRE_VARINT), decl_line);
	o[0] = TAG(2, SVC_WIRE_LEN);
	o[1] = (uint8_t)(w - o - 2);   /* at most 44: one byte */
	section_set_end(fs, w);
	return (uint32_t)t->n_funcs++;
}

static uint32_t function_add_wire(svc_response *r, const struct dense *d, uint32_t entry,
				  uint32_t function_id, uint32_t file_id, bool first)
{
	return function_add(r, d, entry, function_id, file_id, first, false);
}

static uint32_t function_add_json(svc_response *r, const struct dense *d, uint32_t entry,
				  uint32_t function_id, uint32_t file_id, bool first)
{
	return function_add(r, d, entry, function_id, file_id, first, true);
}

/* The function-table index of function_id at file_id (d: dense_of(entry)). */
static inline uint32_t function_index(svc_response *r, uint32_t entry, const struct dense *d,
				      uint32_t function_id, uint32_t file_id, bool json)
{
	svc_response_tables *t = r->t;
	struct fslot *fs = NULL;
	if (d && function_id < d->n_funcs) {
		fs = &d->funcs[function_id];
		if (fs->gen == t->gen) {
			if (fs->file == file_id)
				return fs->val;
			fs = NULL;   /* another file of the function: in the funcs table */
		}
	}
	struct slot *s = NULL;
	uint64_t k1 = 0, k2 = 0;
	if (!fs) {
		function_key(entry, function_id, file_id, &k1, &k2);
		s = svc_response_table_find(r, &t->funcs, k1, k2);
		if (!s)
			return 0;
		if (s->gen == t->gen)
			return s->val;
	}
	uint32_t idx = (json ? function_add_json : function_add_wire)(r, d, entry, function_id,
								     file_id, fs != NULL);
	if (idx == UINT32_MAX)
		return 0;
	if (fs)
		*fs = (struct fslot){t->gen, idx, file_id};
	else
		svc_response_table_claim(r, &t->funcs, s, k1, k2, idx);
	return idx;
}

/*
 * A LocationResult is built in place at the end of the locations section:
 * its tag, a one-byte length, then its body (its Lines, then the address); a
 * body of 128 bytes or more (many inline frames) moves one byte on for a
 * two-byte length when it ends.
 */
#define LOC_HEAD 2
/* A Line is at most 2 + 3 x 6 bytes; the address field at most 11. */
#define LINE_MAX_BYTES 20
#define ADDRESS_MAX_BYTES 11

/* Ends the LocationResult written at o (its body from o + LOC_HEAD up to w):
 * its length, in two bytes when the body needs them (a body is at most
 * 128 x 20 + 11 bytes), and the section's end. */
static inline void location_close(base_vec *ls, uint8_t *o, uint8_t *w)
{
	size_t body = (size_t)(w - o - LOC_HEAD);
	if (body >= 128) {
		memmove(o + LOC_HEAD + 1, o + LOC_HEAD, body);
		w++;
	}
	put_len_header(o, TAG(3, SVC_WIRE_LEN), body);
	section_set_end(ls, w);
}

/* location_add's LocationResult in JSON (its room reserved). */
static inline __attribute__((always_inline)) void location_json(svc_response *r, base_vec *ls,
								uint32_t entry,
								const struct dense *d,
								const sym_frame_ids *f, size_t n,
								size_t nlines, bool no_inline,
								uint64_t address)
{
	uint8_t *w = rj_element(ls, RJ_LOCATIONS, sizeof(RJ_LOCATIONS) - 1), *open = w;
	if (nlines) {
		memcpy(w, RJ_LINES, sizeof(RJ_LINES) - 1);
		w += sizeof(RJ_LINES) - 1;
		for (size_t j = 0; j < nlines; j++) {
			uint32_t fi = function_index(r, entry, d,
						     f[no_inline ? n - 1 : j].function_id,
						     f[j].file_id, true);
			w = rj_line(w, j == 0, fi, f[j].line, f[j].column);
		}
		*w++ = ']';
	}
	w = RJ_PUT(w, RJ_NORMALIZED_ADDRESS, address);
	section_set_end(ls, rj_close(open, w));
}

/* svc_response_frames (json: r->json, a constant where inlined), inlined
 * into each of its two entry points for each form (and in the batch's
 * protobuf form, for no_inline or not: the same instructions, 1.5% faster
 * on libc, the same on libstdc++). */
static inline __attribute__((always_inline)) void location_add(svc_response *r, uint32_t entry,
							       const sym_frame_ids *f, size_t n,
							       bool no_inline, uint64_t address,
							       bool json)
{
	svc_response_tables *t = r->t;
	if (r->next_location >= r->n_locations)
		return;
	size_t nlines = lines_of(n, no_inline);
	base_vec *ls = &t->locations;
	if (nlines > SVC_RESPONSE_MAX_LINES) {
		r->oom = true;
		return;
	}
	if (!section_reserve(r, ls,
			     json ? RJ_LOCATION_MAX + nlines * RJ_LINE_MAX
				     : LOC_HEAD + 1 + nlines * LINE_MAX_BYTES + ADDRESS_MAX_BYTES))
		return;
	/* The function calls below grow other sections only: o stays valid. */
	const struct dense *d = nlines ? dense_of(t, entry) : NULL;
	if (json) {
		location_json(r, ls, entry, d, f, n, nlines, no_inline, address);
		r->next_location++;
		return;
	}
	uint8_t *o = section_end(ls), *w = o + LOC_HEAD;
	for (size_t j = 0; j < nlines; j++) {
		uint32_t fi = function_index(r, entry, d, f[no_inline ? n - 1 : j].function_id,
					     f[j].file_id, false);
		uint8_t *start = w;
		w = put_varint_field32(start + 2, TAG(1, SVC_WIRE_VARINT), fi);
		w = put_varint_field32(w, TAG(2, SVC_WIRE_VARINT), f[j].line);
		w = put_varint_field32(w, TAG(3, SVC_WIRE_VARINT), f[j].column);
		start[0] = TAG(1, SVC_WIRE_LEN);
		start[1] = (uint8_t)(w - start - 2);
	}
	w = put_varint_field(w, TAG(2, SVC_WIRE_VARINT), address);
	location_close(ls, o, w);
	r->next_location++;
}

void svc_response_frames(svc_response *r, uint32_t entry, const sym_frame_ids *f, size_t n,
			 bool no_inline, uint64_t address)
{
	if (r->json)
		location_add(r, entry, f, n, no_inline, address, true);
	else
		location_add(r, entry, f, n, no_inline, address, false);
}

/*
 * Before a location's Lines, the first reads of each location's first frame
 * in the batch are started: its function's slot and record, and its file's
 * slot, so that their misses overlap (3% faster on libc's random addresses;
 * the other frames of an inline chain too: 2% slower, its loop's branch
 * mispredicted; reading the records to fetch the names behind them too, in
 * the batch or a batch ahead, slower still). Inlined: a function whose only
 * effect is __builtin_prefetch is deemed pure by GCC, and a call of it
 * dropped.
 */
static inline __attribute__((always_inline)) void
batch_fetch(const svc_response_tables *t, size_t count, const uint32_t *entry,
	    const sym_frame_ids *f, const uint32_t *first, const uint32_t *n)
{
	for (size_t k = 0; k < count; k++) {
		const struct dense *d = n[k] ? dense_of(t, entry[k]) : NULL;
		if (!d)
			continue;
		const svc_string_rank *rank = d->strings;
		uint32_t fn = f[first[k]].function_id, file = f[first[k]].file_id;
		if (fn < d->n_funcs)
			__builtin_prefetch(&d->funcs[fn]);
		if (fn < rank->n_functions)
			__builtin_prefetch(&rank->functions[fn]);
		if (file < rank->n_files)
			__builtin_prefetch(&d->files[file]);
	}
}

void svc_response_frames_batch(svc_response *r, size_t count, const uint32_t *entry,
			       const sym_frame_ids *f, const uint32_t *first, const uint32_t *n,
			       bool no_inline, const uint64_t *address)
{
	batch_fetch(r->t, count, entry, f, first, n);
	if (r->json)
		for (size_t k = 0; k < count && !r->oom; k++)
			location_add(r, entry[k], f + first[k], n[k], no_inline, address[k], true);
	else if (no_inline)
		for (size_t k = 0; k < count && !r->oom; k++)
			location_add(r, entry[k], f + first[k], n[k], true, address[k], false);
	else
		for (size_t k = 0; k < count && !r->oom; k++)
			location_add(r, entry[k], f + first[k], n[k], false, address[k], false);
}
