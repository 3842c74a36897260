// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of compressed debug sections: zlib, zstd and .zdebug give the same
 * index as the uncompressed file; the cap holds; lying headers and corrupt
 * streams are refused with a clear error.
 */
#include <elf.h>
#include <stdlib.h>

#include "symbolizer/sym_index.h"
#include "symbolizer/sym_inflate.h"
#include "test.h"
#include "util.h"

/* The index of a compressed fixture equals that of its uncompressed twin. */
static void check_same_index(const char *compressed, const char *plain)
{
	size_t n1, n2, b1, b2;
	uint8_t *c = test_read_fixture(compressed, &n1);
	uint8_t *p = test_read_fixture(plain, &n2);
	REQUIRE(c && p);
	int rc1, rc2;
	char msg[256];
	void *x = build_blob(c, n1, 0, &b1, &rc1, msg, sizeof(msg));
	if (rc1)
		fprintf(stderr, "  %s: %s\n", compressed, msg);
	void *y = build_blob(p, n2, 0, &b2, &rc2, NULL, 0);
	CHECK(rc1 == 0 && rc2 == 0);
	CHECK(x && y && b1 == b2 && memcmp(x, y, b1) == 0);
	free(x);
	free(y);
	free(c);
	free(p);
}

TEST(zstd_matches_plain)
{
	check_same_index("c_O2_zstd", "c_O2_zstd.ref");
}

TEST(zlib_sections_inflate)
{
	size_t n, out_size;
	uint8_t *img = test_read_fixture("c_O2_zlib", &n);
	REQUIRE(img);
	void *out = NULL;
	sym_error err;
	REQUIRE(sym_inflate_image(img, n, 1 << 30, &out, &out_size, &err) == SYM_OK);
	REQUIRE(out);
	uint64_t sh, off, len;
	REQUIRE(find_section(out, out_size, ".debug_info", &sh, &off, &len) == 0);
	Elf64_Shdr hdr;
	memcpy(&hdr, (uint8_t *)out + sh, sizeof(hdr));
	CHECK(!(hdr.sh_flags & SHF_COMPRESSED));
	CHECK(len > 0 && off + len <= out_size);
	free(out);
	free(img);
}

/* The build memory estimate: the needed debug sections at their inflated
 * sizes; the compressed part apart; garbage is refused. */
TEST(estimate_counts_inflated_sizes)
{
	size_t n, out_size;
	uint8_t *img = test_read_fixture("c_O2_zlib", &n);
	REQUIRE(img);
	uint64_t debug = 0, inflated = 0;
	sym_error err;
	REQUIRE(sym_inflate_estimate(img, n, &debug, &inflated, &err) == SYM_OK);
	void *out = NULL;
	REQUIRE(sym_inflate_image(img, n, 1 << 30, &out, &out_size, &err) == SYM_OK);
	uint64_t sh, off, len;
	REQUIRE(find_section(out, out_size, ".debug_info", &sh, &off, &len) == 0);
	CHECK(inflated >= len && debug >= inflated);
	uint64_t d2 = 0, i2 = 0;
	REQUIRE(sym_inflate_estimate(out, out_size, &d2, &i2, &err) == SYM_OK);
	CHECK(i2 == 0 && d2 == debug);  /* the same sections, now plain */
	CHECK(sym_inflate_estimate("not an elf", 10, &d2, &i2, &err) != SYM_OK);
	free(out);
	free(img);
}

TEST(zdebug_renamed_and_inflated)
{
	size_t n, out_size;
	uint8_t *img = test_read_fixture("c_O2_zdebug", &n);
	REQUIRE(img);
	uint64_t sh, off, len;
	REQUIRE(find_section(img, n, ".zdebug_info", &sh, &off, &len) == 0);
	void *out = NULL;
	REQUIRE(sym_inflate_image(img, n, 1 << 30, &out, &out_size, NULL) == SYM_OK);
	REQUIRE(out);
	CHECK(find_section(out, out_size, ".debug_info", &sh, &off, &len) == 0);
	CHECK(find_section(out, out_size, ".zdebug_info", &sh, &off, &len) != 0);
	free(out);
	int rc;
	size_t bs;
	void *blob = build_blob(img, n, 0, &bs, &rc, NULL, 0);
	CHECK(rc == 0 && blob);
	free(blob);
	free(img);
}

TEST(cap_is_enforced)
{
	size_t n, bs;
	uint8_t *img = test_read_fixture("c_O2_zlib", &n);
	REQUIRE(img);
	int rc;
	char msg[256];
	void *blob = build_blob(img, n, 1000, &bs, &rc, msg, sizeof(msg));
	CHECK(rc == SYM_E_TOO_LARGE);
	CHECK(strstr(msg, "cap") != NULL);
	CHECK(blob == NULL);
	free(img);
}

/* Patches the Elf64_Chdr of .debug_info. */
static uint8_t *with_claimed_size(const char *fixture, uint64_t claimed, size_t *n)
{
	uint8_t *img = test_read_fixture(fixture, n);
	uint64_t sh, off, len;
	if (!img || find_section(img, *n, ".debug_info", &sh, &off, &len) != 0)
		return NULL;
	Elf64_Chdr ch;
	memcpy(&ch, img + off, sizeof(ch));
	ch.ch_size = claimed;
	memcpy(img + off, &ch, sizeof(ch));
	return img;
}

TEST(huge_claim_refused_without_allocation)
{
	size_t n, bs;
	uint8_t *img = with_claimed_size("c_O2_zlib", (uint64_t)1 << 60, &n);
	REQUIRE(img);
	int rc;
	void *blob = build_blob(img, n, 0, &bs, &rc, NULL, 0);
	CHECK(rc == SYM_E_TOO_LARGE);
	free(blob);
	free(img);
}

TEST(lying_claims_refused)
{
	const char *fixtures[] = {"c_O2_zlib", "c_O2_zstd"};
	for (int i = 0; i < 2; i++) {
		size_t n, bs;
		uint8_t *small = with_claimed_size(fixtures[i], 16, &n);
		REQUIRE(small);
		int rc;
		char msg[256];
		void *blob = build_blob(small, n, 0, &bs, &rc, msg, sizeof(msg));
		CHECK(rc == SYM_E_BAD_DWARF);
		CHECK(strstr(msg, "claimed") != NULL || strstr(msg, "claims") != NULL);
		free(blob);
		free(small);
		/* A claim larger than the truth (under the cap): the stream ends early. */
		uint8_t *big = with_claimed_size(fixtures[i], 100u << 20, &n);
		REQUIRE(big);
		blob = build_blob(big, n, 0, &bs, &rc, msg, sizeof(msg));
		CHECK(rc == SYM_E_BAD_DWARF);
		free(blob);
		free(big);
		/* A plausible claim a little larger than the truth: the image is laid
		 * out from the claims and inflated in place, and still refused. */
		uint64_t sh, off, len;
		uint8_t *near = test_read_fixture(fixtures[i], &n);
		REQUIRE(near && find_section(near, n, ".debug_info", &sh, &off, &len) == 0);
		Elf64_Chdr ch;
		memcpy(&ch, near + off, sizeof(ch));
		ch.ch_size += 100;
		memcpy(near + off, &ch, sizeof(ch));
		blob = build_blob(near, n, 0, &bs, &rc, msg, sizeof(msg));
		CHECK(rc == SYM_E_BAD_DWARF);
		CHECK(strstr(msg, "claims") != NULL || strstr(msg, "truncated") != NULL);
		free(blob);
		free(near);
	}
}

TEST(corrupt_stream_refused)
{
	const char *fixtures[] = {"c_O2_zlib", "c_O2_zstd", "c_O2_zdebug"};
	const char *names[] = {".debug_info", ".debug_info", ".zdebug_info"};
	for (int i = 0; i < 3; i++) {
		size_t n, bs;
		uint8_t *img = test_read_fixture(fixtures[i], &n);
		REQUIRE(img);
		uint64_t sh, off, len;
		REQUIRE(find_section(img, n, names[i], &sh, &off, &len) == 0);
		for (uint64_t k = 24; k < len; k += 7)
			img[off + k] ^= 0x5a;
		int rc;
		char msg[256];
		void *blob = build_blob(img, n, 0, &bs, &rc, msg, sizeof(msg));
		CHECK(rc == SYM_E_BAD_DWARF);
		CHECK(strstr(msg, names[i]) != NULL);
		free(blob);
		free(img);
	}
}

TEST_MAIN()
