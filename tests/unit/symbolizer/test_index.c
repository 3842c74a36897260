// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the index: lookups on a compiled fixture (functions, lines,
 * inline chains), one row for equal functions of several units, the saved
 * blob round trip, and the loader's refusal of
 * truncated, corrupt and misaligned blobs.
 */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_path.h"
#include "symbolizer/sym_index.h"
#include "test.h"
#include "util.h"

/* Address of a function symbol, via libelf. */
static uint64_t symbol_address(const uint8_t *img, size_t n, const char *want)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)img, n);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			if (gelf_getsym(d, (int)i, &s) && (name = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    !strcmp(name, want))
				addr = s.st_value;
		}
	}
	elf_end(elf);
	return addr;
}

static sym_index *load_fixture_index(const char *name, void **blob, size_t *bs, uint8_t **img,
				     size_t *n)
{
	*img = test_read_fixture(name, n);
	if (!*img)
		return NULL;
	int rc;
	*blob = build_blob(*img, *n, 0, bs, &rc, NULL, 0);
	sym_index *idx = NULL;
	if (*blob && sym_index_load(*blob, *bs, &idx, NULL) != SYM_OK)
		return NULL;
	return idx;
}

TEST(lookup_main)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	uint64_t main_addr = symbol_address(img, n, "main");
	REQUIRE(main_addr);
	sym_frame f[64];
	size_t k = sym_index_lookup(idx, main_addr, f, 64);
	REQUIRE(k >= 1);
	CHECK_STREQ(f[k - 1].name, "main");
	CHECK(strstr(f[0].file, "main.c") != NULL || strstr(f[0].file, ".h") != NULL);
	CHECK(f[0].line > 0);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	CHECK(info.flags & SYM_INDEX_HAS_FUNCTIONS);
	CHECK(info.flags & SYM_INDEX_HAS_LINE_NUMBERS);
	CHECK(info.flags & SYM_INDEX_HAS_INLINE_FRAMES);
	CHECK(info.flags & SYM_INDEX_FROM_DWARF);
	CHECK_EQ_U(info.build_id.len, 20);
	CHECK(sym_index_lookup(idx, 0, f, 64) == 0);
	CHECK(sym_index_lookup(idx, UINT64_MAX, f, 64) == 0);
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

TEST(inline_chains_are_whole)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	uint64_t main_addr = symbol_address(img, n, "main");
	size_t deepest = 0;
	for (uint64_t a = main_addr & ~0xfffull; a < main_addr + 0x2000; a++) {
		sym_frame f[64];
		size_t k = sym_index_lookup(idx, a, f, 64);
		if (k > deepest)
			deepest = k;
		for (size_t i = 1; i < k && i < 64; i++) {
			/* Every caller frame has a call site and a function. */
			CHECK(f[i].line > 0);
			CHECK(f[i].display_name[0] != '\0');
		}
	}
	CHECK(deepest >= 3);
	/* max smaller than the chain: the count is still the whole chain's. */
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

/* A batch (search all, then frames with the hints) gives what single lookups give. */
TEST(batch_agrees_with_single_lookups)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	uint64_t main_addr = symbol_address(img, n, "main");
	enum { N = 3000 };
	static uint64_t addrs[N];
	static uint32_t hits[N];
	for (size_t i = 0; i < N; i++)  /* in and around main, some far outside */
		addrs[i] = i % 97 == 0 ? UINT64_MAX - i : (main_addr & ~0xfffull) + (i * 7919) % 0x3000;
	sym_index_find_batch(idx, addrs, N, hits);
	size_t found = 0;
	for (size_t i = 0; i < N; i++) {
		sym_frame a[16], b[16];
		if (i + 8 < N)
			sym_index_prefetch_hit(idx, hits[i + 8], 0);
		if (i + 4 < N)
			sym_index_prefetch_hit(idx, hits[i + 4], 1);
		size_t ka = sym_index_lookup(idx, addrs[i], a, 16);
		size_t kb = sym_index_frames(idx, hits[i], b, 16);
		CHECK(ka == kb);
		found += ka > 0;
		for (size_t j = 0; j < ka && j < kb && j < 16; j++) {
			CHECK(a[j].display_name == b[j].display_name);
			CHECK(a[j].file == b[j].file);
			CHECK(a[j].line == b[j].line && a[j].column == b[j].column);
			CHECK(a[j].function_id == b[j].function_id);
		}
		/* The same frames as numbers (one handle a call), named back
		 * through the index. */
		sym_frame_ids ids[16];
		uint32_t first, count;
		CHECK(sym_index_frame_ids_batch(idx, &hits[i], 1, 16, ids, 16, &first, &count) == 1);
		CHECK(first == 0 && count == ka);
		for (size_t j = 0; j < ka && j < 16; j++) {
			const char *display = NULL, *system = NULL;
			uint32_t decl_line = 0;
			CHECK(ids[j].function_id == a[j].function_id);
			CHECK(sym_index_file(idx, ids[j].file_id) == a[j].file);
			CHECK(ids[j].line == a[j].line && ids[j].column == a[j].column);
			bool known = sym_index_function_names(idx, ids[j].function_id, &display,
							      &system, &decl_line);
			CHECK(known == (a[j].function_id != SYM_INDEX_NO_FUNCTION));
			if (known)
				CHECK(display == a[j].display_name && decl_line == a[j].decl_line &&
				      system == (a[j].linkage_name[0] ? a[j].linkage_name
								     : a[j].name));
		}
	}
	/* The same ids in batches, whatever room each call has: 3 frames a
	 * chain at most, so a call takes handles while 3 more fit. */
	static sym_frame_ids all[N * 3];
	static uint32_t at[N], counts[N];
	for (size_t cap = 3; cap <= 3 * N; cap = cap * 7 + 1) {
		for (size_t i = 0; i < N;) {
			size_t k = sym_index_frame_ids_batch(idx, hits + i, N - i, 3, all, cap, at + i,
							     counts + i);
			CHECK(k >= 1 && (k == N - i || k >= (cap - 3) / 3 + 1));
			for (size_t j = i; j < i + k; j++) {
				sym_frame one[16];
				size_t kw = sym_index_frames(idx, hits[j], one, 16);
				CHECK(counts[j] == kw);
				CHECK(at[j] + (kw < 3 ? kw : 3) <= cap);
				for (size_t q = 0; q < kw && q < 3; q++) {
					const sym_frame_ids *id = &all[at[j] + q];
					CHECK(id->function_id == one[q].function_id &&
					      sym_index_file(idx, id->file_id) == one[q].file &&
					      id->line == one[q].line && id->column == one[q].column);
				}
			}
			i += k;
		}
	}
	CHECK(sym_index_file(idx, sym_index_file_count(idx))[0] == '\0');
	CHECK(sym_index_file_count(idx) > 1);
	CHECK(found >= N / 10);   /* the fixture's code is a few hundred bytes */
	/* a handle past the index is no range */
	sym_frame f[4];
	CHECK(sym_index_frames(idx, UINT32_MAX, f, 4) == 0);
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

/* The file table answers for the files the lookups name, in canonical form,
 * and for nothing else. */
TEST(names_file)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	sym_frame f[64];
	size_t k = sym_index_lookup(idx, symbol_address(img, n, "main"), f, 64);
	REQUIRE(k >= 1 && f[k - 1].file[0] == '/');
	char path[4096], odd[4200];
	REQUIRE(base_path_canon(f[k - 1].file, path, sizeof(path)));
	CHECK(sym_index_names_file(idx, path));
	/* the same file asked for through "..": canonical first, then found */
	const char *slash = strrchr(path, '/');
	snprintf(odd, sizeof(odd), "%.*s/x/../%s", (int)(slash - path), path, slash + 1);
	char canon[4096];
	REQUIRE(base_path_canon(odd, canon, sizeof(canon)));
	CHECK(sym_index_names_file(idx, canon));
	CHECK(!sym_index_names_file(idx, "/etc/passwd"));
	CHECK(!sym_index_names_file(idx, ""));
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

TEST(symtab_only_file)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("symtab_only", &blob, &bs, &img, &n);
	REQUIRE(idx);
	uint64_t main_addr = symbol_address(img, n, "main");
	REQUIRE(main_addr);
	sym_frame f[8];
	REQUIRE(sym_index_lookup(idx, main_addr + 1, f, 8) == 1);
	CHECK_STREQ(f[0].name, "main");
	CHECK_STREQ(f[0].file, "");
	sym_index_info info;
	sym_index_get_info(idx, &info);
	CHECK(!(info.flags & SYM_INDEX_FROM_DWARF));
	CHECK(!(info.flags & SYM_INDEX_HAS_LINE_NUMBERS));
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

static void *aligned_copy(const void *src, size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, 8, n ? n : 8))
		return NULL;
	memcpy(p, src, n);
	return p;
}

struct fn_key {
	const char *display, *system;
	uint32_t decl_line;
};

static int fn_key_cmp(const void *a, const void *b)
{
	const struct fn_key *x = a, *y = b;
	if (x->display != y->display)
		return x->display < y->display ? -1 : 1;
	if (x->system != y->system)
		return x->system < y->system ? -1 : 1;
	return (x->decl_line > y->decl_line) - (x->decl_line < y->decl_line);
}

TEST(equal_functions_share_a_row)
{
	/* Two C++ units inlining the same std::string members: each member is
	 * collected once per unit, and is one function row (the strings are
	 * interned, so equal names are equal pointers). */
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("cxx_static_nog_dwz.ref", &blob, &bs, &img, &n);
	REQUIRE(idx);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	REQUIRE(info.n_functions > 100);
	struct fn_key *keys = calloc(info.n_functions, sizeof(*keys));
	REQUIRE(keys);
	unsigned m_data = 0;
	for (uint32_t i = 0; i < info.n_functions; i++) {
		REQUIRE(sym_index_function_names(idx, i, &keys[i].display, &keys[i].system,
						 &keys[i].decl_line));
		/* (the symbol table names it too: a function of no declaration line) */
		m_data += strstr(keys[i].display, "basic_string") &&
			  strstr(keys[i].display, "::_M_data() const") && keys[i].decl_line;
	}
	CHECK_EQ_U(m_data, 1);
	qsort(keys, info.n_functions, sizeof(*keys), fn_key_cmp);
	unsigned same = 0;
	for (uint32_t i = 1; i < info.n_functions; i++)
		same += fn_key_cmp(&keys[i - 1], &keys[i]) == 0;
	CHECK_EQ_U(same, 0);
	free(keys);
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

TEST(truncated_blobs_refused)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	sym_index_destroy(idx);
	for (size_t len = 0; len < bs; len += len < 512 ? 1 : 61) {
		void *copy = aligned_copy(blob, len);
		sym_error err;
		CHECK(sym_index_load(copy, len, &idx, &err) == SYM_E_BAD_INDEX);
		free(copy);
	}
	free(blob);
	free(img);
}

TEST(corrupt_blobs_never_crash)
{
	void *blob;
	size_t bs, n;
	uint8_t *img;
	sym_index *idx = load_fixture_index("c_O2_dw5", &blob, &bs, &img, &n);
	REQUIRE(idx);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	sym_index_destroy(idx);
	uint64_t main_addr = symbol_address(img, n, "main");
	srand(42);
	int refused = 0;
	for (int trial = 0; trial < 3000; trial++) {
		uint8_t *copy = aligned_copy(blob, bs);
		int flips = 1 + rand() % 4;
		for (int k = 0; k < flips; k++)
			copy[(size_t)rand() % bs] ^= (uint8_t)(1 + rand() % 255);
		if (sym_index_load(copy, bs, &idx, NULL) == SYM_OK) {
			sym_frame f[16];
			for (uint64_t a = main_addr - 0x400; a < main_addr + 0x400; a += 3)
				sym_index_lookup(idx, a, f, 16);
			sym_index_destroy(idx);
		} else {
			refused++;
		}
		free(copy);
	}
	CHECK(refused > 0);
	free(blob);
	free(img);
}

TEST(misaligned_and_foreign_blobs)
{
	static const char text[16] = "xxxxxxxxSYMIDX";
	uint8_t *buf = aligned_copy(text, sizeof(text));
	sym_index *idx;
	sym_error err;
	CHECK(sym_index_load(buf + 1, 8, &idx, &err) == SYM_E_INVALID);
	CHECK(sym_index_load(buf, 16, &idx, &err) == SYM_E_BAD_INDEX);
	free(buf);
}

TEST_MAIN()
