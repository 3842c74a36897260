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
	/* Room for the two biggest blobs plus overhead, not for all three. */
	size_t bound = sizes[0] + sizes[1] + sizes[2] - 1;
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

TEST_MAIN()
