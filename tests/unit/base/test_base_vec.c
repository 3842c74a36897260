// SPDX-License-Identifier: Apache-2.0
/*
 * test_base_vec: the growable array (base_vec, its typed form
 * BASE_VEC_DEFINE, take and adopt) and the capped byte buffer's scratch
 * growth (base_buf_ensure): elements survive growth, the caps hold.
 */
#include "base/base_buf.h"
#include "base/base_vec.h"
#include "test.h"

struct pair {
	uint32_t a;
	uint64_t b;
};

BASE_VEC_DEFINE(pair_vec, struct pair)
BASE_VEC_DEFINE(str_vec, const char *)

TEST(typed_push_and_grow)
{
	pair_vec v;
	pair_vec_init(&v, 100000);
	for (uint32_t i = 0; i < 10000; i++) {
		struct pair *p = pair_vec_push(&v);
		REQUIRE(p);
		*p = (struct pair){i, (uint64_t)i * 3};
	}
	CHECK_EQ_U(pair_vec_len(&v), 10000);
	int bad = 0;
	for (uint32_t i = 0; i < 10000; i++)
		bad += pair_vec_at(&v, i).a != i || pair_vec_data(&v)[i].b != (uint64_t)i * 3;
	CHECK(bad == 0);
	pair_vec_deinit(&v);
	CHECK_EQ_U(pair_vec_len(&v), 0);
}

TEST(cap_refuses)
{
	str_vec v;
	str_vec_init(&v, 3);
	CHECK(str_vec_append(&v, "a") == 0);
	CHECK(str_vec_append(&v, "b") == 0);
	CHECK(str_vec_append(&v, "c") == 0);
	CHECK(str_vec_append(&v, "d") == -1);
	CHECK(str_vec_push(&v) == NULL);
	CHECK_EQ_U(str_vec_len(&v), 3);
	CHECK_STREQ(str_vec_at(&v, 2), "c");
	CHECK(base_vec_reserve(&v.v, 1) == -1);
	str_vec_deinit(&v);
}

TEST(take_and_adopt)
{
	str_vec v;
	str_vec_init(&v, 1000);
	for (int i = 0; i < 5; i++)
		REQUIRE(str_vec_append(&v, "x") == 0);
	size_t n = 0;
	const char **arr = str_vec_take(&v, &n);
	CHECK_EQ_U(n, 5);
	CHECK(str_vec_data(&v) == NULL && str_vec_len(&v) == 0);
	/* a (pointer, count) pair someone else keeps, grown as a vector */
	base_vec a = base_vec_adopt(arr, n, n, sizeof(*arr), 1000);
	const char *y = "y";
	for (int i = 0; i < 100; i++)
		REQUIRE(base_vec_append(&a, &y) == 0);
	CHECK_EQ_U(a.len, 105);
	CHECK_STREQ(BASE_VEC_AT(&a, const char *, 4), "x");
	CHECK_STREQ(BASE_VEC_AT(&a, const char *, 104), "y");
	base_vec_deinit(&a);
	base_vec e;
	base_vec_init(&e, 8, 10);
	CHECK(base_vec_take(&e, &n) == NULL && n == 0);
}

TEST(buf_ensure_scratch)
{
	base_buf b;
	base_buf_init(&b, 1000);
	CHECK(base_buf_ensure(&b, 10));
	CHECK_EQ_U(b.cap, 10);
	memcpy(b.data, "123456789", 10);
	CHECK(base_buf_ensure(&b, 5));      /* smaller: kept as is */
	CHECK_EQ_U(b.cap, 10);
	CHECK(base_buf_ensure(&b, 700));    /* exactly what is asked, bytes kept */
	CHECK_EQ_U(b.cap, 700);
	CHECK_STREQ((char *)b.data, "123456789");
	CHECK(!base_buf_ensure(&b, 1001));  /* past the cap */
	CHECK(b.over);
	CHECK_EQ_U(b.len, 0);
	base_buf_deinit(&b);
}

TEST_MAIN()
