// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of sym_file_id (issue 27): base_sha256 against FIPS vectors, the OTel
 * file hash against Python's hashlib on the same bytes, the Go build-ID note,
 * the new kinds' names, hex forms and store keys.
 */
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_file_id.h"
#include "base/base_sha256.h"
#include "test.h"
#include "util.h"

static void hex_of(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha_hex(const void *d, size_t n, char *out)
{
	uint8_t dg[BASE_SHA256_LEN];
	base_sha256 s;
	REQUIRE(base_sha256_init(&s));
	/* fed in uneven pieces: the incremental interface */
	const uint8_t *p = d;
	size_t a = n / 3;
	base_sha256_update(&s, p, a);
	base_sha256_update(&s, p + a, n - a);
	REQUIRE(base_sha256_final(&s, dg));
	hex_of(dg, sizeof(dg), out);
}

TEST(sha256_vectors)
{
	char hex[65];
	sha_hex("abc", 3, hex);
	CHECK_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	char *a = malloc(1000);
	REQUIRE(a);
	memset(a, 'a', 1000);
	sha_hex(a, 1000, hex);
	CHECK_STREQ(hex, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
	free(a);
}

/* Expected values: Python, hashlib.sha256(b[:p] + b[n-p:] + n.to_bytes(8,
 * 'big')).hexdigest()[:32] with p = min(n, 4096), b[i] = i % 251. */
TEST(htlhash_as_the_profiler)
{
	uint8_t *b = malloc(10000);
	REQUIRE(b);
	for (size_t i = 0; i < 10000; i++)
		b[i] = (uint8_t)(i % 251);
	sym_build_id id;
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_htlhash(b, 10000, &id);
	CHECK_EQ_U(id.kind, SYM_ID_HTLHASH);
	sym_build_id_to_hex(&id, hex);
	CHECK_STREQ(hex, "29e3194e821b97b5565d43a5156ad97a");
	sym_htlhash(b, 100, &id); /* under 4096 bytes: hashed whole twice */
	sym_build_id_to_hex(&id, hex);
	CHECK_STREQ(hex, "6f7e61d01e75215762f708a2727b9650");
	free(b);
}

TEST(go_build_id_note)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_go_note", &n);
	REQUIRE(img);
	char text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	REQUIRE(sym_go_build_id_text(img, n, text));
	CHECK_STREQ(text, "aaaa/bbbb");
	sym_build_id ids[SYM_ID_KINDS], go;
	size_t k = sym_file_ids(img, n, ids);
	/* no GNU note in this one: the Go identity and the file hash */
	REQUIRE(k == 2);
	CHECK_EQ_U(ids[0].kind, SYM_ID_GO);
	CHECK_EQ_U(ids[1].kind, SYM_ID_HTLHASH);
	REQUIRE(sym_build_id_from_text(SYM_ID_GO, "aaaa/bbbb", 9, &go));
	CHECK(sym_build_id_equal(&go, &ids[0]));
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&go, hex); /* SHA-256("aaaa/bbbb") */
	CHECK_STREQ(hex, "7556c8244521461080536afd06cb5aa715814d55c0367c21d6780664a00ed7e7");
	free(img);
	img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	CHECK(!sym_go_build_id_text(img, n, text));
	k = sym_file_ids(img, n, ids);
	CHECK(k == 2 && ids[0].kind == SYM_ID_GNU && ids[1].kind == SYM_ID_HTLHASH);
	free(img);
	CHECK(!sym_go_build_id_text("not elf", 7, text));
}

TEST(new_kinds_at_the_edges)
{
	sym_id_kind k;
	CHECK(sym_id_kind_parse("go", 2, &k) && k == SYM_ID_GO);
	CHECK(sym_id_kind_parse("htlhash", 7, &k) && k == SYM_ID_HTLHASH);
	sym_build_id id;
	CHECK(sym_build_id_from_text(SYM_ID_HTLHASH, "29e3194e821b97b5565d43a5156ad97a", 32, &id));
	CHECK(!sym_build_id_from_text(SYM_ID_HTLHASH, "29e3194e821b97b5", 16, &id));
	CHECK(!sym_build_id_from_text(SYM_ID_GO, "", 0, &id));
	CHECK(!sym_build_id_from_text(SYM_ID_GO, "a b", 3, &id));
	char big[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	memset(big, 'x', sizeof(big));
	CHECK(!sym_build_id_from_text(SYM_ID_GO, big, sizeof(big), &id));
	CHECK(sym_build_id_from_text(SYM_ID_GO, big, SYM_GO_BUILD_ID_TEXT_MAX, &id));
}

TEST(new_kinds_keys_never_equal_a_gnu_key)
{
	sym_build_id h, g;
	REQUIRE(sym_build_id_from_text(SYM_ID_HTLHASH, "29e3194e821b97b5565d43a5156ad97a", 32, &h));
	REQUIRE(sym_build_id_from_hex("29e3194e821b97b5565d43a5156ad97a", 32, &g));
	uint8_t kh[SYM_BUILD_ID_KEY_MAX], kg[SYM_BUILD_ID_KEY_MAX];
	CHECK_EQ_U(sym_build_id_key(&g, kg), 16);
	/* longer than any GNU key (at most 64 bytes) */
	CHECK_EQ_U(sym_build_id_key(&h, kh), SYM_BUILD_ID_KEY_MAX);
	CHECK(SYM_BUILD_ID_KEY_MAX > SYM_BUILD_ID_MAX);
	CHECK(memcmp(kh, h.bytes, 16) == 0 && kh[SYM_BUILD_ID_MAX] == SYM_ID_HTLHASH);
	CHECK(!sym_build_id_equal(&h, &g));
}

TEST_MAIN()
