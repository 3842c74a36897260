// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of base_path_canon: the lexical forms source paths are compared
 * in (what a debuginfod client asks for against what DWARF names).
 */
#include <stdbool.h>
#include <string.h>

#include "base/base_path.h"
#include "test.h"

/* The canonical form of s, or "<false>". */
static const char *canon(const char *s)
{
	static char out[64];
	return base_path_canon(s, out, sizeof(out)) ? out : "<false>";
}

TEST(absolute)
{
	CHECK_STREQ(canon("/usr/src/debug/a.c"), "/usr/src/debug/a.c");
	CHECK_STREQ(canon("//usr///src/./debug/a.c"), "/usr/src/debug/a.c");
	CHECK_STREQ(canon("/build/x/src/../include/a.h"), "/build/x/include/a.h");
	CHECK_STREQ(canon("/a/b/../../c"), "/c");
	CHECK_STREQ(canon("/a/"), "/a");
	CHECK_STREQ(canon("/"), "/");
	CHECK_STREQ(canon("/."), "/");
	CHECK_STREQ(canon("/a/.."), "/");
	CHECK_STREQ(canon("/a/.../b"), "/a/.../b");  /* "..." is a name */
	CHECK_STREQ(canon("/a/..b/c"), "/a/..b/c");
}

TEST(relative)
{
	CHECK_STREQ(canon("usr/src/a.c"), "usr/src/a.c");
	CHECK_STREQ(canon("./usr/src/a.c"), "usr/src/a.c");
	CHECK_STREQ(canon("a/b/../c"), "a/c");
}

TEST(refused)
{
	CHECK_STREQ(canon(""), "<false>");
	CHECK_STREQ(canon("/.."), "<false>");
	CHECK_STREQ(canon("/../etc/passwd"), "<false>");
	CHECK_STREQ(canon("/a/../../etc/passwd"), "<false>");
	CHECK_STREQ(canon("../a"), "<false>");
	CHECK_STREQ(canon("a/.."), "<false>");
	CHECK_STREQ(canon("."), "<false>");
	/* does not fit: 63 bytes and the NUL fit, 64 do not */
	char long_path[80];
	memset(long_path, 'x', sizeof(long_path));
	long_path[0] = '/';
	long_path[63] = '\0';
	CHECK_STREQ(canon(long_path), long_path);
	long_path[63] = 'x';
	long_path[64] = '\0';
	CHECK_STREQ(canon(long_path), "<false>");
}

TEST_MAIN()
