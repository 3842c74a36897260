// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the parallel index build (issue 29, item 5): the blob is the
 * same byte for byte whatever the thread count (units walked on several
 * threads are merged back in unit order) and however often a thread swaps its
 * libdw handle for a fresh one (reopen_spans, item 6). On the multi-unit
 * fixtures, a dwz file with partial units (walked on one thread), and this
 * machine's libc debug file (libc6-dbg, scripts/install-deps.sh: thousands of
 * units, compressed sections). A file mapping whose walked units' pages are
 * dropped (input_is_file_mapping) gives the same blob too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_index.h"
#include "test.h"
#include "util.h"

static void *build(const uint8_t *img, size_t n, unsigned threads, size_t reopen, size_t *bs)
{
	sym_build_options o = {.threads = threads, .reopen_spans = reopen};
	void *blob = NULL;
	sym_error err = {0};
	sym_errc rc = sym_index_build(img, n, &o, &blob, bs, &err);
	if (rc)
		fprintf(stderr, "build (threads %u, reopen %zu): %s\n", threads, reopen, err.msg);
	return rc ? NULL : blob;
}

/* Builds img every way and checks every blob equals the one-thread, one-handle build. */
static void check_same_blobs(const char *what, const uint8_t *img, size_t n)
{
	static const unsigned threads[] = {2, 3, 8, 1, 2};
	static const size_t reopens[] = {0, 0, 0, 1, 7};
	size_t ref_size;
	void *ref = build(img, n, 1, 0, &ref_size);
	REQUIRE(ref);
	for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		size_t size;
		void *blob = build(img, n, threads[i], reopens[i], &size);
		CHECK(blob);
		if (blob && (size != ref_size || memcmp(blob, ref, size) != 0))
			TEST_FAIL_("%s: %u threads, reopen every %zu spans: blob differs from one thread's",
				   what, threads[i], reopens[i]);
		free(blob);
	}
	free(ref);
}

TEST(fixtures_same_blob_on_any_thread_count)
{
	static const char *const names[] = {"cxx_static_nog", "cxx_names_lto", "layout_odr",
					    "cxx_static_nog_dwz", "c_O2_dw5", "c_O2_zstd"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n;
		uint8_t *img = test_read_fixture(names[i], &n);
		REQUIRE(img);
		check_same_blobs(names[i], img, n);
		free(img);
	}
}

TEST(rust_fixture_same_blob_when_built)
{
	size_t n;
	uint8_t *img = test_read_fixture("rust_v0", &n);
	if (!img) {
		printf("  (no rust_v0 fixture: rustc missing when the fixtures were built)\n");
		return;
	}
	check_same_blobs("rust_v0", img, n);
	free(img);
}

/* The debug file of this machine's libc, by its build ID; NULL when absent. */
static uint8_t *libc_debug_file(size_t *n)
{
	size_t ln;
	uint8_t *libc = test_read_file("/lib/x86_64-linux-gnu/libc.so.6", &ln);
	sym_elf_info info;
	if (!libc || sym_elf_probe(libc, ln, &info, NULL) != SYM_OK || info.build_id.len < 2) {
		free(libc);
		return NULL;
	}
	free(libc);
	char hex[2 * SYM_BUILD_ID_MAX + 1], path[256];
	sym_build_id_to_hex(&info.build_id, hex);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return test_read_file(path, n);
}

TEST(libc_debug_file_same_blob_on_any_thread_count)
{
	size_t n;
	uint8_t *img = libc_debug_file(&n);
	if (!img) {
		printf("  (no libc debug file: install libc6-dbg, scripts/install-deps.sh)\n");
		return;
	}
	check_same_blobs("libc debug file", img, n);
	free(img);
}

/* name mapped read-only and private, as symbolctl maps its input; NULL if absent. */
static void *map_fixture(const char *name, size_t *n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", TEST_FIXTURE_DIR, name);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	*n = (size_t)st.st_size;
	return p == MAP_FAILED ? NULL : p;
}

TEST(file_mapping_pages_dropped_same_blob)
{
	static const char *const names[] = {"cxx_static_nog", "rust_v0", "c_O2_dw5", "c_O2_zstd"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n;
		void *map = map_fixture(names[i], &n);
		if (!map) {
			CHECK(strcmp(names[i], "rust_v0") == 0); /* only Rust's may be missing */
			continue;
		}
		size_t ref_size;
		void *ref = build(map, n, 1, 0, &ref_size);
		REQUIRE(ref);
		for (unsigned threads = 1; threads <= 2; threads++) {
			sym_build_options o = {.threads = threads, .reopen_spans = 3,
					       .input_is_file_mapping = true};
			void *blob = NULL;
			size_t size = 0;
			sym_error err = {0};
			CHECK(sym_index_build(map, n, &o, &blob, &size, &err) == SYM_OK);
			if (!blob || size != ref_size || memcmp(blob, ref, size) != 0)
				TEST_FAIL_("%s, %u threads, pages dropped: blob differs", names[i],
					   threads);
			free(blob);
		}
		free(ref);
		munmap(map, n);
	}
}

TEST_MAIN()
