// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of address normalization (svc_normalize_address, as pprof does it)
 * and of the index cache (svc_index_cache): references, bound, many entries,
 * replacement and removal, with real indexes built from the compiled fixtures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/resolve/svc_index_cache.h"
#include "service/resolve/svc_string_rank.h"
#include "service/symbolize/svc_lookup.h"
#include "symbolizer/sym_index.h"
#include "index_fixture.h"
#include "test.h"

static sym_index_info info_with(const sym_elf_load *loads, uint32_t n)
{
	sym_index_info info;
	memset(&info, 0, sizeof(info));
	info.n_loads = n;
	memcpy(info.loads, loads, n * sizeof(*loads));
	return info;
}

static Symbolizer__V1__Mapping mapping(int kind, uint64_t start, uint64_t limit, uint64_t off)
{
	Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
	m.address_kind = kind;
	m.memory_start = start;
	m.memory_limit = limit;
	m.file_offset = off;
	return m;
}

/* libc-like PIE: R at 0, R E at 0x26000, R at 0x17c000, RW with vaddr != offset. */
static const sym_elf_load pie[] = {
	{.vaddr = 0, .offset = 0, .filesz = 0x25388, .memsz = 0x25388, .flags = 4},
	{.vaddr = 0x26000, .offset = 0x26000, .filesz = 0x1550fc, .memsz = 0x1550fc, .flags = 5},
	{.vaddr = 0x17c000, .offset = 0x17c000, .filesz = 0x52c31, .memsz = 0x52c31, .flags = 4},
	{.vaddr = 0x1d08d0, .offset = 0x1cf8d0, .filesz = 0x4f98, .memsz = 0x12680, .flags = 6},
};

TEST(runtime_addresses_of_a_pie)
{
	sym_index_info info = info_with(pie, 4);
	uint64_t v = 0;
	/* The text mapping on its own, as /proc/PID/maps lists it. */
	Symbolizer__V1__Mapping m = mapping(1, 0x7f0000026000, 0x7f000017c000, 0x26000);
	CHECK(svc_normalize_address(&info, &m, 0x7f0000029d90, &v) && v == 0x29d90);
	CHECK(!svc_normalize_address(&info, &m, 0x7f0000025fff, &v)); /* below the mapping */
	CHECK(!svc_normalize_address(&info, &m, 0x7f000017c000, &v)); /* at its limit */
	/* One mapping of the whole file. */
	m = mapping(1, 0x7f0000000000, 0, 0);
	CHECK(svc_normalize_address(&info, &m, 0x7f0000029d90, &v) && v == 0x29d90);
	/* The data segment: offset and address differ by a page. */
	CHECK(svc_normalize_address(&info, &m, 0x7f00001cf900, &v) && v == 0x1d0900);
	/* Past every segment's file bytes. */
	CHECK(!svc_normalize_address(&info, &m, 0x7f0000300000, &v));
	/* ELF addresses pass through; file offsets go through the segments. */
	m = mapping(0, 0, 0, 0);
	CHECK(svc_normalize_address(&info, &m, 0x1234, &v) && v == 0x1234);
	m = mapping(2, 0, 0, 0);
	CHECK(svc_normalize_address(&info, &m, 0x1cf900, &v) && v == 0x1d0900);
	/* An unknown kind, and a file offset wrapping around. */
	m = mapping(7, 0, 0, 0);
	CHECK(!svc_normalize_address(&info, &m, 0x1234, &v));
	m = mapping(1, 0x1000, 0, UINT64_MAX - 0x10);
	CHECK(!svc_normalize_address(&info, &m, 0x2000, &v));
}

TEST(runtime_addresses_of_a_separate_debug_file)
{
	/* objcopy --only-keep-debug zeroes p_offset and p_filesz. */
	sym_elf_load dbg[4];
	memcpy(dbg, pie, sizeof(dbg));
	for (int i = 0; i < 4; i++) {
		dbg[i].filesz = i == 0 ? 0x3b4 : 0;
		dbg[i].offset = i == 3 ? 0x8d0 : 0;
	}
	sym_index_info info = info_with(dbg, 4);
	uint64_t v = 0;
	Symbolizer__V1__Mapping m = mapping(1, 0x7f0000026000, 0, 0x26000);
	CHECK(svc_normalize_address(&info, &m, 0x7f0000029d90, &v) && v == 0x29d90);
	m = mapping(1, 0x7f0000000000, 0, 0);
	CHECK(svc_normalize_address(&info, &m, 0x7f00000a0000, &v) && v == 0xa0000);
	/* A non-PIE executable whose first segment is at 0x400000. */
	sym_elf_load exe[2] = {
		{.vaddr = 0x400000, .offset = 0, .filesz = 0, .memsz = 0x1000, .flags = 4},
		{.vaddr = 0x401000, .offset = 0, .filesz = 0, .memsz = 0x5000, .flags = 5},
	};
	info = info_with(exe, 2);
	m = mapping(1, 0x401000, 0x406000, 0x1000);
	CHECK(svc_normalize_address(&info, &m, 0x401234, &v) && v == 0x401234);
}

/* The frames' innermost name at an ELF address of an index. */
static const char *name_at(const sym_index *idx, uint64_t addr)
{
	static sym_frame f[8];
	size_t n = sym_index_lookup(idx, addr, f, 8);
	return n ? f[n > 8 ? 7 : n - 1].name : "";
}

/* kernel_like: .text at 0xffffffff81000000 with _text == _stext, like vmlinux. */
TEST(runtime_addresses_of_a_kernel_with_kaslr)
{
	void *blob;
	size_t size;
	sym_index *idx = index_fixture_load("kernel_like", &blob, &size);
	REQUIRE(idx);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	const uint64_t text = 0xffffffff81000000ull;
	CHECK_EQ_U(info.elf_type, 2 /* ET_EXEC */);
	CHECK_EQ_U(info.kernel_stext, text);
	CHECK_EQ_U(info.kernel_text, text);
	uint64_t entry = 0, v = 0;
	for (uint64_t a = text; a < text + 0x100 && !entry; a++)
		if (!strcmp(name_at(idx, a), "kl_entry"))
			entry = a;
	REQUIRE(entry);
	/* Random page-aligned slides (fixed seed): perf's mapping starts at _stext. */
	srand(12);
	for (int i = 0; i < 64; i++) {
		uint64_t slide = ((uint64_t)(rand() % 0x3f000) + 1) << 12;
		Symbolizer__V1__Mapping m = mapping(1, text + slide, text + slide + 0x1000000, 0);
		CHECK(svc_normalize_address(&info, &m, entry + slide + 5, &v) && v == entry + 5);
		CHECK_STREQ(name_at(idx, v), "kl_entry");
		/* Outside the mapping: nothing. */
		CHECK(!svc_normalize_address(&info, &m, text + slide - 1, &v));
		/* pprof's first rule: start - file_offset is the text segment's vaddr,
		 * the offset being the slide. */
		m = mapping(1, text + slide, 0, slide);
		CHECK(svc_normalize_address(&info, &m, entry + slide, &v) && v == entry);
		/* The mapping starting at the text segment with _stext elsewhere in the
		 * page: the slide from the segment. */
		m = mapping(1, text + slide, text + slide + 0x1000000, 0);
		CHECK(svc_normalize_address(&info, &m, entry + slide + 1, &v) && v == entry + 1);
		/* An unslid kernel (pgoff == start, perf's [kernel.kallsyms]). */
		m = mapping(1, text, text + 0x1000000, 0);
		CHECK(svc_normalize_address(&info, &m, entry, &v) && v == entry);
	}
	/* A mapping of the whole space: addresses are already ELF addresses. */
	Symbolizer__V1__Mapping whole = mapping(1, 0, UINT64_MAX, 0);
	CHECK(svc_normalize_address(&info, &whole, entry, &v) && v == entry);
	/* ELF addresses stay as they are. */
	Symbolizer__V1__Mapping elf = mapping(0, 0, 0, 0);
	CHECK(svc_normalize_address(&info, &elf, entry, &v) && v == entry);
	sym_index_destroy(idx);
	free(blob);
}

/* A relocatable file: offsets in a named section, and RUNTIME at the section's load address. */
TEST(section_offsets_of_an_object)
{
	void *blob;
	size_t size;
	sym_index *idx = index_fixture_load("reloc_O2.o", &blob, &size);
	REQUIRE(idx);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	CHECK_EQ_U(info.elf_type, 1 /* ET_REL */);
	uint64_t base, len, v = 0;
	REQUIRE(sym_index_section(idx, ".text.startup", &base, &len));
	Symbolizer__V1__Mapping m = mapping(3, 0, 0, 0);
	CHECK_STREQ(svc_mapping_section(&m, &info), ".text");   /* the default */
	m.section = ".text.startup";
	CHECK_STREQ(svc_mapping_section(&m, &info), ".text.startup");
	CHECK(svc_section_address(&m, base, len, 4, &v) && v == base + 4);
	CHECK_STREQ(name_at(idx, v), "main");
	CHECK(!svc_section_address(&m, base, len, len, &v));      /* past its end */
	/* RUNTIME on ET_REL: memory_start is where the section is loaded. */
	m = mapping(1, 0xffffffffc0001000ull, 0xffffffffc0001000ull + len, 0);
	m.section = ".text.startup";
	CHECK_STREQ(svc_mapping_section(&m, &info), ".text.startup");
	CHECK(svc_section_address(&m, base, len, 0xffffffffc0001004ull, &v) && v == base + 4);
	CHECK(!svc_section_address(&m, base, len, 0xffffffffc0000fffull, &v));
	/* ELF and FILE_OFFSET mappings, and RUNTIME on an executable, use no section. */
	m = mapping(0, 0, 0, 0);
	CHECK(svc_mapping_section(&m, &info) == NULL);
	sym_index_info exe = info;
	exe.elf_type = 3;
	m = mapping(1, 0x1000, 0, 0);
	CHECK(svc_mapping_section(&m, &exe) == NULL);
	sym_index_destroy(idx);
	free(blob);
}

TEST(index_cache_references_and_bound)
{
	const char *names[] = {"c_O2_dw5", "cxx_O2", "c_O0_dw4"};
	void *blobs[3];
	size_t sizes[3];
	sym_index *idx[3];
	for (int i = 0; i < 3; i++) {
		idx[i] = index_fixture_load(names[i], &blobs[i], &sizes[i]);
		REQUIRE(idx[i]);
	}
	/* Room for the two biggest blobs plus overhead (the entry, the string
	 * ordinals), not for all three. */
	size_t bound = sizes[0] + sizes[1] + sizes[2] - 1;
	for (int i = 0; i < 3; i++) {
		svc_string_rank rank;
		REQUIRE(svc_string_rank_index(&rank, idx[i]));
		CHECK(rank.functions && rank.n_functions > 0);
		bound += sizeof(svc_index_entry) + rank.bytes;
		svc_string_rank_free(&rank);
	}
	svc_index_cache *c = svc_index_cache_create(bound);
	sym_build_id ids[3];
	for (int i = 0; i < 3; i++) {
		memset(&ids[i], 0, sizeof(ids[i]));
		ids[i].len = 4;
		ids[i].bytes[0] = (uint8_t)(i + 1);
	}
	svc_index_entry *e0 = svc_index_cache_put(c, &ids[0], blobs[0], sizes[0],
						   index_fixture_free_blob, idx[0]);
	REQUIRE(e0);
	CHECK(e0->info.n_ranges > 0);
	svc_index_entry *e1 = svc_index_cache_put(c, &ids[1], blobs[1], sizes[1],
						   index_fixture_free_blob, idx[1]);
	svc_index_entry_release(c, e1);
	/* e0 is held: adding the third evicts e1 (unreferenced), never e0. */
	svc_index_entry *e2 = svc_index_cache_put(c, &ids[2], blobs[2], sizes[2],
						   index_fixture_free_blob, idx[2]);
	svc_index_cache_stats st;
	svc_index_cache_get_stats(c, &st);
	CHECK_EQ_U(st.evictions, 1);
	CHECK(st.bytes <= bound);
	svc_index_entry *again = svc_index_cache_get(c, &ids[0]);
	CHECK(again == e0);
	CHECK(svc_index_cache_get(c, &ids[1]) == NULL);
	/* A held entry removed from the cache stays usable until released. */
	svc_index_cache_remove(c, &ids[0]);
	sym_frame fr[8];
	CHECK(sym_index_lookup(e0->index, 0, fr, 8) == 0 || fr[0].name != NULL);
	svc_index_entry_release(c, again);
	svc_index_entry_release(c, e0);
	svc_index_entry_release(c, e2);
	CHECK(svc_index_cache_get(c, &ids[0]) == NULL);
	svc_index_cache_get_stats(c, &st);
	CHECK_EQ_U(st.entries, 1);
	CHECK_EQ_U(st.hits, 1);
	svc_index_cache_destroy(c);
}

/* A copy of blob, loaded (the cache owns both once put). */
static sym_index *load_copy(const void *blob, size_t size, void **copy)
{
	sym_index *idx = NULL;
	sym_error err;
	*copy = malloc(size);
	if (!*copy)
		return NULL;
	memcpy(*copy, blob, size);
	if (sym_index_load(*copy, size, &idx, &err) != SYM_OK) {
		free(*copy);
		return NULL;
	}
	return idx;
}

/* Many entries (the map grows), one replaced while held, half removed. */
TEST(index_cache_many_entries_replace_remove)
{
	enum { N = 300 };
	void *blob;
	size_t size;
	sym_index *first = index_fixture_load("c_O2_dw5", &blob, &size);
	REQUIRE(first);
	sym_index_destroy(first);
	svc_index_cache *c = svc_index_cache_create(0);
	REQUIRE(c);
	sym_build_id ids[N];
	for (int i = 0; i < N; i++) {
		memset(&ids[i], 0, sizeof(ids[i]));
		ids[i].len = 20;
		ids[i].bytes[0] = (uint8_t)i;
		ids[i].bytes[19] = (uint8_t)(i >> 8);
		void *copy;
		sym_index *idx = load_copy(blob, size, &copy);
		REQUIRE(idx);
		svc_index_entry *e = svc_index_cache_put(c, &ids[i], copy, size,
							 index_fixture_free_blob, idx);
		REQUIRE(e);
		svc_index_entry_release(c, e);
	}
	svc_index_entry *held = svc_index_cache_get(c, &ids[7]);
	REQUIRE(held);
	void *copy;
	sym_index *idx = load_copy(blob, size, &copy);
	REQUIRE(idx);
	svc_index_entry *fresh = svc_index_cache_put(c, &ids[7], copy, size,
						     index_fixture_free_blob, idx);
	REQUIRE(fresh && fresh != held);
	svc_index_entry *got = svc_index_cache_get(c, &ids[7]);
	CHECK(got == fresh);
	svc_index_entry_release(c, got);
	svc_index_entry_release(c, fresh);
	CHECK(held->index != NULL); /* the replaced one lives while held */
	svc_index_entry_release(c, held);
	for (int i = 0; i < N; i += 2)
		svc_index_cache_remove(c, &ids[i]);
	for (int i = 0; i < N; i++) {
		svc_index_entry *e = svc_index_cache_get(c, &ids[i]);
		CHECK((e != NULL) == (i % 2 == 1));
		svc_index_entry_release(c, e);
	}
	svc_index_cache_stats st;
	svc_index_cache_get_stats(c, &st);
	CHECK_EQ_U(st.entries, N / 2);
	CHECK_EQ_U(st.inserts, N + 1);
	CHECK_EQ_U(st.evictions, 0);
	svc_index_cache_destroy(c);
	free(blob);
}

TEST(string_rank_ordinals)
{
	/* "", "abc", "de", "", "f", and a padding NUL: six strings. */
	static const char table[] = "\0abc\0de\0\0f\0";
	svc_string_rank r;
	REQUIRE(svc_string_rank_build(&r, table, sizeof(table)));
	CHECK_EQ_U(r.n_strings, 6);
	uint32_t ord = 99;
	CHECK(svc_string_rank_of(&r, table, &ord) && ord == 0);
	CHECK(svc_string_rank_of(&r, table + 1, &ord) && ord == 1);
	CHECK(svc_string_rank_of(&r, table + 5, &ord) && ord == 2);
	CHECK(svc_string_rank_of(&r, table + 8, &ord) && ord == 3);
	CHECK(svc_string_rank_of(&r, table + 9, &ord) && ord == 4);
	CHECK(svc_string_rank_of(&r, table + 11, &ord) && ord == 5);
	/* Lengths from where the next string starts. */
	size_t len = 99;
	CHECK(svc_string_rank_slice(&r, table + 1, &ord, &len) && ord == 1 && len == 3);
	CHECK(svc_string_rank_slice(&r, table + 5, &ord, &len) && ord == 2 && len == 2);
	CHECK(svc_string_rank_slice(&r, table + 8, &ord, &len) && ord == 3 && len == 0);
	CHECK(svc_string_rank_slice(&r, table + 11, &ord, &len) && ord == 5 && len == 0);
	CHECK(!svc_string_rank_slice(&r, table + 2, &ord, &len));
	/* Inside a string, and outside the table: no ordinal. */
	CHECK(!svc_string_rank_of(&r, table + 2, &ord));
	CHECK(!svc_string_rank_of(&r, table + sizeof(table), &ord));
	CHECK(!svc_string_rank_of(&r, "abc", &ord));
	svc_string_rank_free(&r);
	CHECK(!svc_string_rank_build(&r, table, 0) && r.base == NULL);

	/* Strings longer than a bitmap word and than a block, the last unterminated. */
	char big[1200];
	memset(big, 'x', sizeof(big));
	big[0] = '\0';
	big[700] = '\0';
	REQUIRE(svc_string_rank_build(&r, big, sizeof(big)));
	CHECK(svc_string_rank_slice(&r, big + 1, &ord, &len) && ord == 1 && len == 699);
	CHECK(svc_string_rank_slice(&r, big + 701, &ord, &len) && ord == 2 && len == 499);
	svc_string_rank_free(&r);

	/* A real index: every string of every frame but "" has an ordinal below
	 * n_strings, the same for the same address and different for different ones. */
	void *blob;
	size_t size;
	sym_index *idx = index_fixture_load("cxx_O2", &blob, &size);
	REQUIRE(idx);
	const char *strs;
	size_t strs_size;
	sym_index_strings(idx, &strs, &strs_size);
	REQUIRE(svc_string_rank_build(&r, strs, strs_size));
	CHECK(r.n_strings > 10);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	const char **by_ord = calloc(r.n_strings, sizeof(*by_ord));
	size_t checked = 0, bad = 0;
	for (uint32_t i = 0; i < info.n_loads; i++) {
		const sym_elf_load *l = &info.loads[i];
		if (!(l->flags & 1))
			continue;
		for (uint64_t a = l->vaddr; a < l->vaddr + l->memsz; a += 2) {
			sym_frame fr[16];
			size_t n = sym_index_lookup(idx, a, fr, 16);
			for (size_t j = 0; j < n && j < 16; j++) {
				const char *ss[] = {fr[j].name, fr[j].linkage_name, fr[j].display_name,
						    fr[j].file};
				for (size_t k = 0; k < 4; k++) {
					uint32_t o;
					if (!*ss[k])
						continue;   /* "" may be a literal of the lookup */
					size_t n_bytes;
					if (!svc_string_rank_slice(&r, ss[k], &o, &n_bytes) ||
					    o >= r.n_strings || n_bytes != strlen(ss[k])) {
						bad++;
						continue;
					}
					if (by_ord[o] && by_ord[o] != ss[k])
						bad++;
					by_ord[o] = ss[k];
					checked++;
				}
			}
		}
	}
	CHECK(checked > 100);
	CHECK_EQ_U(bad, 0);
	free(by_ord);
	svc_string_rank_free(&r);
	sym_index_destroy(idx);
	free(blob);
}

TEST_MAIN()
