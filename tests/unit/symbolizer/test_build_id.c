// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of sym_build_id and sym_elf_probe.
 */
#include <stdlib.h>
#include <zlib.h>

#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_elf.h"
#include "test.h"
#include "util.h"

TEST(hex_round_trip)
{
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("00ABcdef10", 10, &id));
	CHECK_EQ_U(id.len, 5);
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&id, hex);
	CHECK_STREQ(hex, "00abcdef10");
}

TEST(hex_rejects_bad_input)
{
	sym_build_id id;
	CHECK(!sym_build_id_from_hex("", 0, &id));
	CHECK(!sym_build_id_from_hex("abc", 3, &id));
	CHECK(!sym_build_id_from_hex("zz", 2, &id));
	char longhex[131];
	memset(longhex, 'a', 130);
	CHECK(!sym_build_id_from_hex(longhex, 130, &id));
	CHECK(sym_build_id_from_hex(longhex, 128, &id));
}

TEST(identity_is_a_value_with_a_kind)
{
	sym_build_id a, b;
	REQUIRE(sym_build_id_from_hex("00abcdef10", 10, &a));
	CHECK_EQ_U(a.kind, SYM_ID_GNU);
	REQUIRE(sym_build_id_from_hex_kind(SYM_ID_GNU, "00abcdef10", 10, &b));
	CHECK(sym_build_id_equal(&a, &b));
	CHECK_EQ_U(sym_build_id_hash(&a), sym_build_id_hash(&b));
	/* The same bytes under another kind are another identity. */
	b.kind = SYM_ID_GNU + 1;
	CHECK(!sym_build_id_equal(&a, &b));
	CHECK(!sym_build_id_from_hex_kind(SYM_ID_KINDS, "00abcdef10", 10, &b));
	/* A zero-initialized value is a GNU build ID. */
	sym_build_id z = {.len = 5, .bytes = {0x00, 0xab, 0xcd, 0xef, 0x10}};
	CHECK(sym_build_id_equal(&a, &z));
}

TEST(identity_kind_names)
{
	CHECK_STREQ(sym_id_kind_name(SYM_ID_GNU), "gnu");
	CHECK(sym_id_kind_name(SYM_ID_KINDS) == NULL);
	sym_id_kind k = SYM_ID_KINDS;
	CHECK(sym_id_kind_parse("gnu", 3, &k) && k == SYM_ID_GNU);
	CHECK(!sym_id_kind_parse("elf", 3, &k)); /* was "go", a kind since issue 27 */
	CHECK(!sym_id_kind_parse("gnux", 3 + 1, &k));
	for (unsigned i = 0; i < SYM_ID_KINDS; i++) {
		const char *n = sym_id_kind_name(i);
		REQUIRE(n);
		CHECK(sym_id_kind_parse(n, strlen(n), &k) && k == i);
	}
}

TEST(identity_store_key)
{
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("00abcdef10", 10, &id));
	uint8_t key[SYM_BUILD_ID_KEY_MAX];
	/* A GNU build ID's key is its raw bytes: every store written so far. */
	CHECK_EQ_U(sym_build_id_key(&id, key), 5);
	CHECK(memcmp(key, id.bytes, 5) == 0);
	sym_build_id empty = {0};
	CHECK_EQ_U(sym_build_id_key(&empty, key), 0);
	id.kind = SYM_ID_KINDS;
	CHECK_EQ_U(sym_build_id_key(&id, key), 0);
}

TEST(probe_full_binary)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	sym_elf_info info;
	sym_error err;
	REQUIRE(sym_elf_probe(img, n, &info, &err) == SYM_OK);
	CHECK_EQ_U(info.build_id.len, 20);
	CHECK(info.has_debug_info);
	CHECK(info.has_symtab);
	CHECK(info.has_text);
	CHECK(!info.has_alt);
	CHECK(info.n_loads >= 2);
	free(img);
}

TEST(probe_debug_file_and_stripped)
{
	size_t n1, n2;
	uint8_t *dbg = test_read_fixture("c_stripped.debug", &n1);
	uint8_t *bin = test_read_fixture("c_stripped", &n2);
	REQUIRE(dbg && bin);
	sym_elf_info a, b;
	REQUIRE(sym_elf_probe(dbg, n1, &a, NULL) == SYM_OK);
	REQUIRE(sym_elf_probe(bin, n2, &b, NULL) == SYM_OK);
	CHECK(a.has_debug_info);
	CHECK(!a.has_text);           /* --only-keep-debug: code is NOBITS */
	CHECK(!b.has_debug_info);
	CHECK(sym_build_id_equal(&a.build_id, &b.build_id));
	/* objcopy --add-gnu-debuglink=c_stripped.debug: the name and the file's CRC-32 */
	CHECK(b.has_debuglink);
	CHECK_STREQ(b.debuglink, "c_stripped.debug");
	CHECK_EQ_U(b.debuglink_crc, (uint32_t)crc32(crc32(0L, Z_NULL, 0), dbg, (uInt)n1));
	CHECK(!a.has_debuglink);
	free(dbg);
	free(bin);
}

TEST(probe_dwz_link)
{
	size_t n1, n2;
	uint8_t *a = test_read_fixture("dwz_a", &n1);
	uint8_t *common = test_read_fixture("dwz_common.debug", &n2);
	REQUIRE(a && common);
	sym_elf_info ia, ic;
	REQUIRE(sym_elf_probe(a, n1, &ia, NULL) == SYM_OK);
	REQUIRE(sym_elf_probe(common, n2, &ic, NULL) == SYM_OK);
	CHECK(ia.has_alt);
	CHECK(sym_build_id_equal(&ia.alt_build_id, &ic.build_id));
	free(a);
	free(common);
}

TEST(probe_rejects_non_elf_and_truncated)
{
	sym_error err;
	sym_elf_info info;
	CHECK(sym_elf_probe("hello", 5, &info, &err) == SYM_E_BAD_ELF);
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	/* Every truncation is refused or probed without reading past the end (ASan). */
	for (size_t len = 0; len < n; len += len < 256 ? 1 : 97) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, img, len);
		sym_elf_probe(copy, len, &info, &err);
		free(copy);
	}
	free(img);
}

TEST_MAIN()
