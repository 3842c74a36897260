// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the Symbolize response (svc_lookup_run with svc_response), on
 * indexes of the compiled fixtures (the request decoder's: test_svc_request):
 *  - the response's bytes are exactly what protobuf-c packs for the message
 *    it decodes to, with tables reused from a pool or not;
 *  - every location's lines are the index's frames, through the string and
 *    function tables, which hold each string once, across two indexes too;
 *  - no_inline, no_demangle, mappings without an index, the memory cap.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "index_fixture.h"
#include "response_fixture.h"
#include "service/resolve/svc_string_rank.h"
#include "service/symbolize/svc_lookup.h"
#include "service/symbolize/svc_response.h"
#include "service/rpc/svc_wire.h"
#include "test.h"

static Symbolizer__V1__SymbolizeResponse *decode_and_repack(const uint8_t *bytes, size_t size)
{
	Symbolizer__V1__SymbolizeResponse *r =
		symbolizer__v1__symbolize_response__unpack(NULL, size, bytes);
	if (!r)
		return NULL;
	size_t n = symbolizer__v1__symbolize_response__get_packed_size(r);
	uint8_t *again = malloc(n ? n : 1);
	symbolizer__v1__symbolize_response__pack(r, again);
	int same = n == size && memcmp(again, bytes, n) == 0;
	free(again);
	if (!same) {
		fprintf(stderr, "  protobuf-c packs the decoded response in %zu bytes, ours is %zu\n",
			n, size);
		symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
		return NULL;
	}
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* string_table[0] is "" and no string is there twice. */
static int strings_unique(const Symbolizer__V1__SymbolizeResponse *r)
{
	if (r->n_string_table == 0 || r->string_table[0][0] != 0)
		return 0;
	char **s = malloc(r->n_string_table * sizeof(*s));
	memcpy(s, r->string_table, r->n_string_table * sizeof(*s));
	qsort(s, r->n_string_table, sizeof(*s), cmp_str);
	int ok = 1;
	for (size_t i = 1; i < r->n_string_table; i++)
		ok &= strcmp(s[i - 1], s[i]) != 0;
	free(s);
	return ok;
}

/*
 * Every location's lines are the frames of its address, read back through the
 * tables. Returns the number of mismatches (0 when all agree).
 */
static size_t check_lines(const struct call *c, const Symbolizer__V1__SymbolizeResponse *r,
			  bool no_inline, bool no_demangle)
{
	size_t bad = 0;
	sym_frame fr[SVC_RESPONSE_MAX_LINES];
	for (size_t i = 0; i < c->req.n_locations; i++) {
		const Symbolizer__V1__Location *loc = c->req.locations[i];
		const svc_lookup_mapping *m = &c->maps[loc->mapping_index];
		const Symbolizer__V1__LocationResult *lr = r->locations[i];
		size_t n = m->entry ? sym_index_lookup(m->entry->index, loc->address, fr,
						       SVC_RESPONSE_MAX_LINES)
				    : 0;
		size_t want = n == 0 ? 0 : no_inline ? 1 : n;
		if (lr->n_lines != want) {
			bad++;
			continue;
		}
		if (m->entry && lr->normalized_address != loc->address)
			bad++;
		for (size_t j = 0; j < want; j++) {
			const Symbolizer__V1__Line *l = lr->lines[j];
			const sym_frame *fn = no_inline ? &fr[n - 1] : &fr[j];
			if (l->function_index >= r->n_functions) {
				bad++;
				continue;
			}
			const Symbolizer__V1__Function *f = r->functions[l->function_index];
			const char *system = fn->linkage_name[0] ? fn->linkage_name : fn->name;
			const char *name = no_demangle ? system : fn->display_name;
			if (f->name >= r->n_string_table || f->system_name >= r->n_string_table ||
			    f->filename >= r->n_string_table ||
			    strcmp(r->string_table[f->name], name) != 0 ||
			    strcmp(r->string_table[f->system_name], system) != 0 ||
			    strcmp(r->string_table[f->filename], fr[j].file) != 0 ||
			    f->start_line != fn->decl_line || l->line != fr[j].line ||
			    l->column != fr[j].column)
				bad++;
		}
	}
	return bad;
}

TEST(response_bytes_and_lines_over_two_indexes)
{
	svc_index_cache *cache = svc_index_cache_create(64u << 20);
	svc_index_entry *c_e = index_fixture_entry(cache, "c_O2_dw5", 1);
	svc_index_entry *cxx_e = index_fixture_entry(cache, "cxx_O2", 2);
	REQUIRE(c_e && cxx_e);
	/* c, c++, a mapping without an index, and c again (one entry, two mappings). */
	svc_index_entry *entries[4] = {c_e, cxx_e, NULL, c_e};
	enum { N = 6000 };
	uint64_t *a = malloc(N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	size_t na = code_addresses(c_e, a, N / 2), nb = code_addresses(cxx_e, b, N / 2);
	REQUIRE(na > 100 && nb > 100);
	struct call c;
	call_init(&c, entries, 4, na + nb + 10);
	size_t k = 0;
	for (size_t i = 0; i < na || i < nb; i++) {
		if (i < na) {
			c.locs[k].mapping_index = (i % 5 == 0) ? 3 : 0;
			c.locs[k++].address = a[i];
		}
		if (i < nb) {
			c.locs[k].mapping_index = 1;
			c.locs[k++].address = b[i];
		}
	}
	for (size_t i = 0; i < 10; i++) {
		c.locs[k].mapping_index = 2;
		c.locs[k++].address = 0x1000 + i;
	}
	svc_response_pool *pool = svc_response_pool_create();
	for (int mode = 0; mode < 4; mode++) {
		bool no_inline = mode & 1, no_demangle = mode & 2;
		c.opts.no_inline = no_inline;
		c.opts.no_demangle = no_demangle;
		svc_lookup_result res;
		size_t size = 0, size2 = 0, size3 = 0;
		uint8_t *bytes = run(&c, pool, NULL, 256u << 20, &size, &res);
		REQUIRE(bytes);
		CHECK(res.symbolized > (na + nb) / 2);
		/* From reused tables, and from private ones: the same bytes. */
		uint8_t *again = run(&c, pool, NULL, 256u << 20, &size2, &res);
		uint8_t *private = run(&c, NULL, NULL, 256u << 20, &size3, &res);
		CHECK(again && size2 == size && memcmp(again, bytes, size) == 0);
		CHECK(private && size3 == size && memcmp(private, bytes, size) == 0);
		free(again);
		free(private);
		/* Without the indexes' string ordinals (hash tables throughout), and
		 * with one index on dense slots and the other hashed: the same bytes. */
		svc_string_rank c_rank = c_e->strings, cxx_rank = cxx_e->strings;
		CHECK(c_rank.base && cxx_rank.base && c_rank.n_strings > 1);
		size_t size4 = 0, size5 = 0;
		memset(&cxx_e->strings, 0, sizeof(cxx_e->strings));
		uint8_t *mixed = run(&c, pool, NULL, 256u << 20, &size4, &res);
		memset(&c_e->strings, 0, sizeof(c_e->strings));
		uint8_t *hashed = run(&c, pool, NULL, 256u << 20, &size5, &res);
		c_e->strings = c_rank;
		cxx_e->strings = cxx_rank;
		CHECK(mixed && size4 == size && memcmp(mixed, bytes, size) == 0);
		CHECK(hashed && size5 == size && memcmp(hashed, bytes, size) == 0);
		free(mixed);
		free(hashed);
		/* Functions' and files' names ranked when used, not read from
		 * the records: none recorded, or each marked not recorded. */
		REQUIRE(c_rank.functions && c_rank.n_functions > 0 && cxx_rank.functions);
		size_t size6 = 0, size7 = 0;
		REQUIRE(c_rank.files && c_rank.n_files > 1);
		c_e->strings.n_functions = c_e->strings.n_files = 0;
		uint8_t *unrecorded = run(&c, pool, NULL, 256u << 20, &size6, &res);
		c_e->strings.n_functions = c_rank.n_functions;
		c_e->strings.n_files = c_rank.n_files;
		svc_string_rank_function *saved_fns =
			malloc(cxx_rank.n_functions * sizeof(*saved_fns));
		svc_string_rank_file *saved_files = malloc(cxx_rank.n_files * sizeof(*saved_files));
		REQUIRE(saved_fns && saved_files);
		memcpy(saved_fns, cxx_rank.functions, cxx_rank.n_functions * sizeof(*saved_fns));
		memcpy(saved_files, cxx_rank.files, cxx_rank.n_files * sizeof(*saved_files));
		for (uint32_t fi = 0; fi < cxx_rank.n_functions; fi++)
			cxx_rank.functions[fi].display_len = cxx_rank.functions[fi].system_len =
				SVC_STRING_RANK_LONG;
		for (uint32_t fi = 0; fi < cxx_rank.n_files; fi++)
			cxx_rank.files[fi].name_len = SVC_STRING_RANK_LONG;
		uint8_t *long_names = run(&c, pool, NULL, 256u << 20, &size7, &res);
		memcpy(cxx_rank.functions, saved_fns, cxx_rank.n_functions * sizeof(*saved_fns));
		memcpy(cxx_rank.files, saved_files, cxx_rank.n_files * sizeof(*saved_files));
		free(saved_fns);
		free(saved_files);
		CHECK(unrecorded && size6 == size && memcmp(unrecorded, bytes, size) == 0);
		CHECK(long_names && size7 == size && memcmp(long_names, bytes, size) == 0);
		free(unrecorded);
		free(long_names);

		Symbolizer__V1__SymbolizeResponse *r = decode_and_repack(bytes, size);
		REQUIRE(r);
		CHECK_EQ_U(r->n_locations, c.req.n_locations);
		CHECK_EQ_U(r->n_mappings, 4);
		CHECK(strings_unique(r));
		CHECK_EQ_U(check_lines(&c, r, no_inline, no_demangle), 0);
		CHECK(r->mappings[0]->status == STATUS(OK) && r->mappings[0]->has_functions &&
		      r->mappings[0]->has_line_numbers);
		CHECK(r->mappings[2]->status == STATUS(NOT_FOUND) &&
		      r->mappings[2]->retry_after_ms == 7 && !r->mappings[2]->has_functions);
		CHECK_STREQ(r->mappings[2]->error, "no source has it");
		/* Lines of a function in one file share one Function entry. */
		CHECK(r->n_functions < res.frames);
		symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
		free(bytes);
	}
	svc_response_pool_destroy(pool);
	call_deinit(&c);
	free(a);
	free(b);
	svc_index_entry_release(cache, c_e);
	svc_index_entry_release(cache, cxx_e);
	svc_index_cache_destroy(cache);
}

TEST(response_location_of_many_lines)
{
	/* Locations of 1, 7, 100 and SVC_RESPONSE_MAX_LINES Lines: bodies on
	 * both sides of 128 bytes (a one- and a two-byte length). */
	static const unsigned counts[] = {1, 7, 100, SVC_RESPONSE_MAX_LINES};
	enum { NLOC = sizeof(counts) / sizeof(counts[0]) };
	svc_response r;
	REQUIRE(svc_response_begin(&r, NULL, NLOC, false, NULL, SIZE_MAX));
	/* Frames of an entry without an index: function j is the j-th met. */
	static int key;
	uint32_t e = svc_response_entry(&r, &key, NULL, NULL, 0);
	sym_frame_ids f[SVC_RESPONSE_MAX_LINES];
	for (unsigned j = 0; j < SVC_RESPONSE_MAX_LINES; j++)
		f[j] = (sym_frame_ids){.function_id = j, .line = 100000 + j, .column = j % 3};
	for (unsigned i = 0; i < NLOC; i++)
		svc_response_frames(&r, e, f, counts[i], false, 0x123456789ull + i);
	CHECK(!r.oom);
	size_t size;
	uint8_t *bytes = take_joined(&r, NULL, 0, &size);
	svc_response_end(&r);
	REQUIRE(bytes);
	Symbolizer__V1__SymbolizeResponse *m = decode_and_repack(bytes, size);
	REQUIRE(m);
	REQUIRE(m->n_locations == NLOC);
	for (unsigned i = 0; i < NLOC; i++) {
		CHECK_EQ_U(m->locations[i]->n_lines, counts[i]);
		CHECK_EQ_U(m->locations[i]->normalized_address, 0x123456789ull + i);
		unsigned j = counts[i] - 1;
		CHECK_EQ_U(m->locations[i]->lines[j]->function_index, j);
		CHECK_EQ_U(m->locations[i]->lines[j]->line, 100000 + j);
	}
	symbolizer__v1__symbolize_response__free_unpacked(m, NULL);
	free(bytes);
}

/* A response of locations of 1, 2, 9, SVC_RESPONSE_MAX_LINES and 0 frames
 * of idx (svc_response_frames, or svc_response_frames_batch when batch;
 * leave_last: the last location left for svc_response_take to end); rank:
 * idx's string ordinals and records, or NULL. */
static uint8_t *frames_response(const sym_index *idx, const svc_string_rank *rank,
				const sym_frame_ids *f, bool leave_last, bool no_inline,
				bool batch, size_t *size)
{
	static const size_t counts[] = {1, 2, 9, SVC_RESPONSE_MAX_LINES, 0};
	enum { NLOC = sizeof(counts) / sizeof(counts[0]) };
	svc_response r;
	if (!svc_response_begin(&r, NULL, NLOC, false, NULL, SIZE_MAX))
		return NULL;
	sym_index_info info;
	sym_index_get_info(idx, &info);
	uint32_t e = svc_response_entry(&r, idx, idx, rank, info.n_functions);
	uint32_t entry[NLOC], first[NLOC] = {0}, n[NLOC];
	uint64_t address[NLOC];
	for (size_t i = 0; i < NLOC; i++) {
		entry[i] = e;
		n[i] = (uint32_t)counts[i];
		address[i] = i + 1 < NLOC ? 0x400000 + i : 0;
	}
	if (batch)
		svc_response_frames_batch(&r, NLOC - leave_last, entry, f, first, n, no_inline,
					  address);
	for (size_t i = 0; !batch && i + leave_last < NLOC; i++)
		svc_response_frames(&r, e, f, counts[i], no_inline, address[i]);
	uint8_t *bytes = take_joined(&r, NULL, 0, size);
	svc_response_end(&r);
	return bytes;
}

/* Clears (or, set, restores from saved) the records' marks of names no
 * other record names. */
static void only_marks(svc_string_rank *rank, uint8_t *saved, bool set)
{
	for (uint32_t i = 0; i < rank->n_functions + rank->n_files; i++) {
		uint8_t *only = i < rank->n_functions ? &rank->functions[i].only
						      : &rank->files[i - rank->n_functions].only;
		if (set) {
			*only = saved[i];
		} else {
			saved[i] = *only;
			*only = 0;
		}
	}
}

TEST(response_frames_as_lines)
{
	/* Inline chains up to the most Lines a location has, of an index's
	 * functions and files (one frame of no function; a function at several
	 * files): the same bytes with the last, empty location ended by the
	 * caller or by svc_response_take, with the index's string ordinals and
	 * records or without, with the marks of names no other record names or
	 * without; each Function named as the index names it. */
	void *blob;
	size_t blob_size;
	sym_index *idx = index_fixture_load("c_O2_dw5", &blob, &blob_size);
	REQUIRE(idx);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	uint32_t nf = info.n_functions < 40 ? info.n_functions : 40;
	uint32_t nfiles = sym_index_file_count(idx);
	REQUIRE(nf > 2 && nfiles > 2);
	sym_frame_ids f[SVC_RESPONSE_MAX_LINES];
	for (unsigned j = 0; j < SVC_RESPONSE_MAX_LINES; j++)
		f[j] = (sym_frame_ids){.function_id = j == 5 ? SYM_INDEX_NO_FUNCTION : j % nf,
				       .file_id = j % 3 ? 1 : 2, .line = 100 * j + 1,
				       .column = j % 5};
	svc_string_rank rank;
	REQUIRE(svc_string_rank_index(&rank, idx) && rank.functions && rank.files);
	uint8_t *saved = malloc(rank.n_functions + rank.n_files);
	REQUIRE(saved);
	unsigned marked = 0;
	for (uint32_t i = 0; i < rank.n_functions; i++)
		marked += rank.functions[i].only != 0;
	CHECK(marked > 0);
	for (int no_inline = 0; no_inline < 2; no_inline++) {
		size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0, n5 = 0, n6 = 0, n7 = 0;
		uint8_t *left_last = frames_response(idx, NULL, f, true, no_inline, false, &n1);
		uint8_t *whole = frames_response(idx, NULL, f, false, no_inline, false, &n2);
		uint8_t *ranked = frames_response(idx, &rank, f, false, no_inline, false, &n3);
		uint8_t *ranked_left = frames_response(idx, &rank, f, true, no_inline, false, &n4);
		uint8_t *batched = frames_response(idx, &rank, f, false, no_inline, true, &n6);
		uint8_t *batched_left = frames_response(idx, NULL, f, true, no_inline, true, &n7);
		only_marks(&rank, saved, false);
		uint8_t *unmarked = frames_response(idx, &rank, f, false, no_inline, false, &n5);
		only_marks(&rank, saved, true);
		REQUIRE(left_last && whole && ranked && ranked_left && unmarked && batched &&
			batched_left);
		CHECK(n1 > (no_inline ? 30u : 128u * 4) && n1 == n2 && memcmp(left_last, whole, n1) == 0);
		CHECK(n3 == n1 && memcmp(ranked, whole, n1) == 0);
		CHECK(n4 == n1 && memcmp(ranked_left, whole, n1) == 0);
		CHECK(n5 == n1 && memcmp(unmarked, whole, n1) == 0);
		CHECK(n6 == n1 && memcmp(batched, whole, n1) == 0);
		CHECK(n7 == n1 && memcmp(batched_left, whole, n1) == 0);
		free(ranked);
		free(ranked_left);
		free(unmarked);
		free(batched);
		free(batched_left);
		Symbolizer__V1__SymbolizeResponse *m = decode_and_repack(whole, n2);
		REQUIRE(m);
		CHECK_EQ_U(m->n_locations, 5);
		CHECK_EQ_U(m->locations[3]->n_lines, no_inline ? 1 : SVC_RESPONSE_MAX_LINES);
		CHECK_EQ_U(m->locations[4]->n_lines, 0);
		CHECK(strings_unique(m));
		const Symbolizer__V1__LocationResult *lr = m->locations[3];
		for (size_t j = 0; j < lr->n_lines; j++) {
			const sym_frame_ids *id = &f[no_inline ? SVC_RESPONSE_MAX_LINES - 1 : j];
			const char *display = "", *system = "";
			uint32_t decl_line = 0;
			if (id->function_id != SYM_INDEX_NO_FUNCTION)
				REQUIRE(sym_index_function_names(idx, id->function_id, &display,
								 &system, &decl_line));
			const Symbolizer__V1__Function *fn =
				m->functions[lr->lines[j]->function_index];
			CHECK_STREQ(m->string_table[fn->name], display);
			CHECK_STREQ(m->string_table[fn->system_name], system);
			CHECK_STREQ(m->string_table[fn->filename], sym_index_file(idx, f[j].file_id));
			CHECK_EQ_U(fn->start_line, decl_line);
			CHECK_EQ_U(lr->lines[j]->line, f[j].line);
		}
		symbolizer__v1__symbolize_response__free_unpacked(m, NULL);
		free(left_last);
		free(whole);
	}
	free(saved);
	svc_string_rank_free(&rank);
	sym_index_destroy(idx);
	index_fixture_free_blob(blob);
}

TEST(response_of_nothing)
{
	struct call c;
	call_init(&c, NULL, 0, 0);
	c.req.options = NULL;
	svc_lookup_result res;
	size_t size = 0;
	uint8_t *bytes = run(&c, NULL, NULL, 1u << 20, &size, &res);
	REQUIRE(bytes);
	/* string_table = [""]: the tag and a zero length. */
	CHECK_EQ_U(size, 2);
	Symbolizer__V1__SymbolizeResponse *r = decode_and_repack(bytes, size);
	REQUIRE(r);
	CHECK(r->n_string_table == 1 && r->n_locations == 0 && r->n_mappings == 0);
	symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
	free(bytes);
	call_deinit(&c);
}

TEST(response_over_the_memory_cap)
{
	svc_index_cache *cache = svc_index_cache_create(64u << 20);
	svc_index_entry *e = index_fixture_entry(cache, "cxx_O2", 3);
	REQUIRE(e);
	uint64_t a[3000];
	size_t n = code_addresses(e, a, 3000);
	struct call c;
	call_init(&c, &e, 1, n);
	for (size_t i = 0; i < n; i++)
		c.locs[i].address = a[i];
	svc_response_pool *pool = svc_response_pool_create();
	svc_lookup_result res;
	size_t size;
	/* A cap the request's own tables already fill. */
	uint8_t *bytes = run(&c, pool, NULL, 80 * 1024, &size, &res);
	CHECK(bytes == NULL);
	CHECK(svc_errc_connect(res.err.code) == SVC_CONNECT_RESOURCE_EXHAUSTED);
	/* The tables go back to the pool in a state the next call can use. */
	bytes = run(&c, pool, NULL, 256u << 20, &size, &res);
	REQUIRE(bytes);
	Symbolizer__V1__SymbolizeResponse *r = decode_and_repack(bytes, size);
	REQUIRE(r);
	CHECK_EQ_U(check_lines(&c, r, false, false), 0);
	/* One index: strings are told apart by address alone, and still sent once. */
	CHECK(strings_unique(r));
	symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
	free(bytes);
	svc_response_pool_destroy(pool);
	call_deinit(&c);
	svc_index_entry_release(cache, e);
	svc_index_cache_destroy(cache);
}

TEST_MAIN()
