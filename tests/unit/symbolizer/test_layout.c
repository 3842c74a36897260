// SPDX-License-Identifier: Apache-2.0
/*
 * test_layout: symbolizer/sym_layout over the layout fixtures (tests/fixtures:
 * layout.c in DWARF 4 and 5, layout.cpp, the dwz pair) and hostile input:
 * type-reference loops patched into real DWARF, truncated and corrupt images,
 * truncated and corrupt blobs.
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_layout.h"
#include "test.h"

struct built {
	void *blob;
	size_t size;
	sym_layout *l;
	sym_errc rc;
	sym_error err;
};

static uint8_t *alt_img;
static size_t alt_size;

static bool give_alt(void *ctx, const sym_build_id *id, const char *path, const void **data,
		     size_t *size)
{
	(void)ctx, (void)id, (void)path;
	if (!alt_img)
		return false;
	*data = alt_img;
	*size = alt_size;
	return true;
}

static void build_img(const uint8_t *img, size_t size, struct built *b)
{
	memset(b, 0, sizeof(*b));
	sym_layout_options o = {.alt_resolver = give_alt};
	b->rc = sym_layout_build(img, size, &o, &b->blob, &b->size, &b->err);
	if (!b->rc)
		b->rc = sym_layout_load(b->blob, b->size, &b->l, &b->err);
}

static bool build(const char *fixture, struct built *b)
{
	size_t size;
	uint8_t *img = test_read_fixture(fixture, &size);
	if (!img)
		return false;
	build_img(img, size, b);
	free(img);
	if (b->rc)
		fprintf(stderr, "  %s: %s\n", fixture, b->err.msg);
	return b->rc == SYM_OK;
}

static void done(struct built *b)
{
	sym_layout_destroy(b->l);
	free(b->blob);
}

static uint32_t one(const sym_layout *l, const char *name)
{
	uint32_t t[4];
	size_t n = sym_layout_find(l, name, t, 4);
	if (n != 1)
		fprintf(stderr, "  %s: %zu layouts\n", name, n);
	return n == 1 ? t[0] : SYM_LAYOUT_NONE_REF;
}

static bool member(const sym_layout *l, uint32_t t, uint32_t i, sym_layout_member_info *m)
{
	sym_layout_type_info ti;
	return sym_layout_type(l, t, &ti) && i < ti.n && sym_layout_member(l, ti.first + i, m);
}

static void field(const sym_layout *l, const char *path, uint64_t off, uint32_t bits,
		  uint64_t size)
{
	sym_layout_field f;
	sym_error err = {0};
	if (sym_layout_field_path(l, path, &f, &err)) {
		TEST_FAIL_("%s: %s", path, err.msg);
		return;
	}
	CHECK_EQ_U(f.offset, off);
	CHECK_EQ_U(f.bit_size, bits);
	CHECK_EQ_U(f.size, size);
}

static void check_c(const char *fixture)
{
	struct built b;
	REQUIRE(build(fixture, &b));
	sym_layout_type_info ti;
	sym_layout_member_info m;
	uint32_t t = one(b.l, "struct bits");
	REQUIRE(sym_layout_type(b.l, t, &ti));
	CHECK_EQ_U(ti.size, 16);
	CHECK_EQ_U(ti.n, 5);
	REQUIRE(member(b.l, t, 1, &m));
	CHECK_STREQ(m.name, "b");
	CHECK_EQ_U(m.bit_offset, 1);
	CHECK_EQ_U(m.bit_size, 3);
	REQUIRE(member(b.l, t, 3, &m));
	CHECK_EQ_U(m.offset, 8);
	CHECK_EQ_U(m.bit_size, 40);
	CHECK_STREQ(m.type_name, "long long unsigned int");
	REQUIRE(member(b.l, t, 4, &m));
	CHECK_EQ_U(m.offset, 13);
	/* nested anonymous union with an anonymous struct inside */
	t = one(b.l, "nest");
	REQUIRE(sym_layout_type(b.l, t, &ti));
	CHECK_EQ_U(ti.size, 24);
	REQUIRE(member(b.l, t, 1, &m));
	CHECK(m.flags & SYM_LAYOUT_F_ANON_UNION);
	CHECK_EQ_U(m.n, 3);
	REQUIRE(member(b.l, t, 3, &m));
	CHECK_STREQ(m.name, "flex");
	CHECK_EQ_U(m.n_dims, 1);
	CHECK(m.n_dims == 1 && m.dims[0] == UINT64_MAX);
	field(b.l, "nest.q", 9, 0, 1);
	field(b.l, "struct nest.named.u.s", 20, 0, 2);
	field(b.l, "nest.flex", 24, 0, 0);
	/* packed, aligned, typedefs of named and anonymous structs */
	REQUIRE(sym_layout_type(b.l, one(b.l, "packed_s"), &ti));
	CHECK_EQ_U(ti.size, 13);
	REQUIRE(sym_layout_type(b.l, one(b.l, "struct aligned_s"), &ti));
	CHECK_EQ_U(ti.size, 64);
	CHECK_EQ_U(ti.align, 64);
	REQUIRE(sym_layout_type(b.l, one(b.l, "holder_t"), &ti));
	CHECK_STREQ(ti.name, "holder");
	field(b.l, "holder_t.bits.d", 8, 40, 8);
	field(b.l, "holder_t.al.i", 64, 0, 4);
	field(b.l, "holder.grid", 136, 0, 24);
	field(b.l, "holder.big", 160, 0, 200);
	REQUIRE(sym_layout_type(b.l, one(b.l, "anon_typedef_t"), &ti));
	CHECK(ti.flags & SYM_LAYOUT_F_TYPEDEF_NAME);
	REQUIRE(member(b.l, one(b.l, "anon_typedef_t"), 1, &m));
	CHECK_STREQ(m.type_name, "void (*)(int, char *)");
	/* no such things */
	uint32_t none[1];
	CHECK_EQ_U(sym_layout_find(b.l, "union bits", none, 1), 0);
	CHECK_EQ_U(sym_layout_find(b.l, "no_such_type", none, 1), 0);
	sym_layout_field f;
	CHECK(sym_layout_field_path(b.l, "holder.next.x", &f, NULL) == SYM_E_INVALID);
	CHECK(sym_layout_field_path(b.l, "holder.nope", &f, NULL) == SYM_E_INVALID);
	CHECK(sym_layout_field_path(b.l, "holder..grid", &f, NULL) == SYM_E_INVALID);
	done(&b);
}

TEST(c_dwarf4) { check_c("layout_c_dw4"); }
TEST(c_dwarf5) { check_c("layout_c_dw5"); }

static void check_cxx(const char *fixture)
{
	struct built b;
	REQUIRE(build(fixture, &b));
	sym_layout_type_info ti;
	sym_layout_member_info m;
	uint32_t t = one(b.l, "Multi");
	REQUIRE(sym_layout_type(b.l, t, &ti));
	CHECK_EQ_U(ti.size, 32);
	REQUIRE(member(b.l, t, 1, &m));
	CHECK(m.kind == SYM_LAYOUT_BASE);
	CHECK_STREQ(m.type_name, "struct Other");
	CHECK_EQ_U(m.offset, 16);
	field(b.l, "Multi.b", 16, 0, 8);
	field(b.l, "Multi.a", 8, 0, 4);
	field(b.l, "Single.b", 0, 0, 8);
	t = one(b.l, "VBase");
	REQUIRE(member(b.l, t, 0, &m));
	CHECK(m.kind == SYM_LAYOUT_BASE && (m.flags & SYM_LAYOUT_F_VIRTUAL));
	CHECK(m.flags & SYM_LAYOUT_F_UNKNOWN_OFFSET);
	REQUIRE(sym_layout_type(b.l, one(b.l, "ns::Box<long int, 4>"), &ti));
	CHECK_EQ_U(ti.size, 40);
	REQUIRE(sym_layout_type(b.l, one(b.l, "ns::Box<char, 3>"), &ti));
	CHECK_EQ_U(ti.size, 8);
	REQUIRE(sym_layout_type(b.l, one(b.l, "class ns::Outer"), &ti));
	CHECK(ti.kind == SYM_LAYOUT_CLASS);
	field(b.l, "ns::Outer.inner.v", 0, 0, 8);
	field(b.l, "ns::Outer::Inner.v", 0, 0, 8);
	done(&b);
}

TEST(cxx_dwarf5) { check_cxx("layout_cxx"); }
TEST(cxx_dwarf4) { check_cxx("layout_cxx_dw4"); }

TEST(dwz_pair)
{
	struct built b;
	size_t size;
	uint8_t *img = test_read_fixture("dwz_a", &size);
	REQUIRE(img);
	build_img(img, size, &b);
	CHECK(b.rc == SYM_E_MISSING_ALT);
	done(&b);
	alt_img = test_read_fixture("dwz_common.debug", &alt_size);
	REQUIRE(alt_img);
	build_img(img, size, &b);
	CHECK(b.rc == SYM_OK);
	if (!b.rc) {
		sym_layout_type_info ti;
		REQUIRE(sym_layout_type(b.l, one(b.l, "shared::Record"), &ti));
		CHECK_EQ_U(ti.size, 56);
		field(b.l, "shared::Record.values", 32, 0, 24);
	}
	done(&b);
	free(alt_img);
	alt_img = NULL;
	free(img);
}

/* Identical definitions in two units count once; different ones are both kept. */
TEST(identical_once)
{
	struct built b;
	REQUIRE(build("layout_odr", &b));
	uint32_t t[4];
	CHECK_EQ_U(sym_layout_find(b.l, "same_s", t, 4), 1);
	REQUIRE(sym_layout_find(b.l, "odr_s", t, 4) == 2);
	sym_layout_type_info x, y;
	REQUIRE(sym_layout_type(b.l, t[0], &x) && sym_layout_type(b.l, t[1], &y));
	CHECK(x.size + y.size == 24);
	CHECK(strcmp(x.cu, y.cu) != 0);
	done(&b);
}
TEST_MAIN()
