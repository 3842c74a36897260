// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of svc_dbg_range_parse: the one byte range a debuginfod GET may
 * ask for (the replies themselves: tests/integration/debuginfod_serve_test.py).
 */
#include "service/debuginfod/svc_debuginfod_impl.h"
#include "test.h"

static svc_dbg_range parse(const char *h, uint64_t size, uint64_t *a, uint64_t *b)
{
	*a = *b = 12345;
	return svc_dbg_range_parse(h, size, a, b);
}

TEST(single_ranges)
{
	uint64_t a, b;
	CHECK(parse("bytes=0-99", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 0 && b == 99);
	CHECK(parse("bytes=100-", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 100 && b == 999);
	CHECK(parse("bytes=-300", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 700 && b == 999);
	CHECK(parse("bytes=-5000", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 0 && b == 999);
	CHECK(parse("bytes=990-5000", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 990 && b == 999);
	CHECK(parse("bytes=999-999", 1000, &a, &b) == SVC_DBG_RANGE_OK && a == 999 && b == 999);
}

TEST(past_the_end)
{
	uint64_t a, b;
	CHECK(parse("bytes=1000-", 1000, &a, &b) == SVC_DBG_RANGE_UNSATISFIABLE);
	CHECK(parse("bytes=5000-6000", 1000, &a, &b) == SVC_DBG_RANGE_UNSATISFIABLE);
	CHECK(parse("bytes=-0", 1000, &a, &b) == SVC_DBG_RANGE_UNSATISFIABLE);
	CHECK(parse("bytes=0-", 0, &a, &b) == SVC_DBG_RANGE_UNSATISFIABLE);
}

TEST(not_read_whole_file)
{
	uint64_t a, b;
	const char *bad[] = {
		NULL, "", "bytes", "bytes=", "bytes=-", "items=0-1", "bytes=5-4", "bytes=a-b",
		"bytes=0-1,5-6", "bytes= 0-1", "bytes=0-1 ", "bytes=--1", "bytes=1-2-3",
		"bytes=99999999999999999999-", "bytes=0-99999999999999999999", "BYTES=0-1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(parse(bad[i], 1000, &a, &b) == SVC_DBG_RANGE_NONE);
		if (bad[i])
			CHECK(a == 12345 && b == 12345);  /* untouched */
	}
}

TEST_MAIN()
