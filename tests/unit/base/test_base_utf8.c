// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of base_utf8: validation against the RFC 3629 edge cases and
 * repair with one U+FFFD per maximal ill-formed subsequence, the figures
 * Python's bytes.decode("utf-8", "replace") gives for the same bytes.
 */
#include <stdbool.h>
#include <string.h>

#include "base/base_utf8.h"
#include "test.h"

static bool valid(const char *s)
{
	return base_utf8_valid(s, strlen(s));
}

/* The repair of s as a C string. */
static const char *repair(const char *s)
{
	static char out[256];
	size_t n = base_utf8_repair(s, strlen(s), out);
	out[n] = '\0';
	return out;
}

TEST(valid_and_not)
{
	CHECK(valid(""));
	CHECK(valid("main"));
	CHECK(valid("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
	CHECK(valid("\xEF\xBF\xBF\xF4\x8F\xBF\xBF"));
	CHECK(!valid("\xC3"));             /* truncated */
	CHECK(!valid("\xC0\xAF"));         /* overlong '/' */
	CHECK(!valid("\xE0\x80\xAF"));     /* overlong */
	CHECK(!valid("\xED\xA0\x80"));     /* surrogate */
	CHECK(!valid("\xF4\x90\x80\x80")); /* past U+10FFFF */
	CHECK(!valid("\xFF"));
	CHECK(!valid("a\x80z"));           /* lone continuation byte */
}

/* The eight-bytes-at-a-time ASCII path: a bad or a multi-byte sequence at
 * every position of a long ASCII run, and one split across the words. */
TEST(valid_in_long_ascii_runs)
{
	char buf[64];
	for (size_t at = 0; at + 4 < sizeof(buf); at++) {
		memset(buf, 'a', sizeof(buf));
		buf[sizeof(buf) - 1] = '\0';
		CHECK(valid(buf));
		buf[at] = '\x80';
		CHECK(!valid(buf));
		memcpy(buf + at, "\xE2\x82\xAC", 3);
		CHECK(valid(buf));
		buf[at + 2] = 'z'; /* truncated: the third byte is ASCII */
		CHECK(!valid(buf));
	}
}

TEST(repair_like_python)
{
	/* Expected strings from: b.decode("utf-8", "replace").encode(). */
	CHECK_STREQ(repair("ok"), "ok");
	CHECK_STREQ(repair("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
	CHECK_STREQ(repair("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
	CHECK_STREQ(repair("\xE2\x82"), "\xEF\xBF\xBD");           /* one maximal prefix */
	CHECK_STREQ(repair("\xE2\x82z"), "\xEF\xBF\xBDz");
	CHECK_STREQ(repair("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	CHECK_STREQ(repair("\xF0\x9F\x98"), "\xEF\xBF\xBD");
	CHECK_STREQ(repair("x\xF0\x9F\x98\x80y"), "x\xF0\x9F\x98\x80y");
	CHECK(valid(repair("\xF8\x88\x80\x80\x80\xC3(")));
}

TEST(repair_is_valid_for_every_byte_pair)
{
	char in[3] = {0}, out[8];
	for (int a = 1; a < 256; a++)
		for (int b = 1; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			size_t n = base_utf8_repair(in, 2, out);
			CHECK(n <= BASE_UTF8_REPAIR_MAX(2) && base_utf8_valid(out, n));
			if (base_utf8_valid(in, 2))
				CHECK(n == 2 && memcmp(in, out, 2) == 0);
		}
}

TEST_MAIN()
