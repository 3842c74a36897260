// SPDX-License-Identifier: Apache-2.0
/*
 * test_stor_catalog: the package catalogue in the store: entries written with
 * their package, looked up by build ID and kind, replaced when the package is
 * scanned again (old entries gone), dropped with the package, an entry another
 * package rewrote kept; records survive a reopen.
 */
#include <stdlib.h>
#include <unistd.h>

#include "storage/stor_catalog.h"
#include "test.h"

static stor_db *open_db(const char *dir)
{
	stor_options o;
	stor_options_init(&o);
	o.path = dir;
	o.sync_writes = false;
	stor_db *db = NULL;
	stor_error err;
	return stor_open(&o, &db, &err) == STOR_OK ? db : NULL;
}

static stor_cat_entry entry(uint8_t b, stor_kind kind, const char *member, uint64_t off)
{
	stor_cat_entry e;
	memset(&e, 0, sizeof(e));
	memset(e.id, b, 20);
	e.id_len = 20;
	e.kind = kind;
	e.offset = off;
	e.size = 100;
	snprintf(e.member, sizeof(e.member), "%s", member);
	return e;
}

static bool count_pkg(void *arg, const char *path, const stor_cat_package *p)
{
	(void)path;
	(void)p;
	++*(int *)arg;
	return true;
}

TEST(catalogue)
{
	char dir[] = "/tmp/stor-cat-XXXXXX";
	REQUIRE(mkdtemp(dir));
	stor_db *db = open_db(dir);
	REQUIRE(db);
	stor_error err;
	stor_cat_package pkg;
	memset(&pkg, 0, sizeof(pkg));
	pkg.size = 1234;
	pkg.members = 2;
	stor_cat_entry es[2] = {entry(1, STOR_KIND_DEBUGINFO, "usr/lib/debug/a", 512),
				entry(2, STOR_KIND_EXECUTABLE, "usr/bin/b", 4096)};
	const char layout[] = "layout-bytes";
	REQUIRE(stor_cat_put_package(db, "/p/a.deb", &pkg, layout, sizeof(layout), es, 2, NULL, 0, &err) ==
		STOR_OK);
	stor_cat_entry got;
	uint8_t id1[20], id2[20], id3[20];
	memset(id1, 1, 20);
	memset(id2, 2, 20);
	memset(id3, 3, 20);
	REQUIRE(stor_cat_lookup(db, id1, 20, STOR_KIND_DEBUGINFO, &got, &err) == STOR_OK);
	CHECK_STREQ(got.package, "/p/a.deb");
	CHECK_STREQ(got.member, "usr/lib/debug/a");
	CHECK_EQ_U(got.offset, 512);
	CHECK(stor_cat_lookup(db, id1, 20, STOR_KIND_EXECUTABLE, &got, &err) == STOR_E_NOT_FOUND);
	void *lb = NULL;
	size_t ll = 0;
	stor_cat_package back;
	REQUIRE(stor_cat_get_package(db, "/p/a.deb", &back, &lb, &ll, &err) == STOR_OK);
	CHECK_EQ_U(back.size, 1234);
	CHECK(ll == sizeof(layout) && !memcmp(lb, layout, ll));
	free(lb);
	/* b.deb takes over id2; a.deb rescanned with id3 instead of id1 */
	stor_cat_entry eb = entry(2, STOR_KIND_EXECUTABLE, "usr/bin/b2", 8);
	REQUIRE(stor_cat_put_package(db, "/p/b.deb", &pkg, NULL, 0, &eb, 1, NULL, 0, &err) == STOR_OK);
	stor_cat_entry es2[2] = {entry(3, STOR_KIND_DEBUGINFO, "usr/lib/debug/c", 1),
				 entry(2, STOR_KIND_EXECUTABLE, "usr/bin/b", 4096)};
	REQUIRE(stor_cat_put_package(db, "/p/a.deb", &pkg, NULL, 0, es2, 1, NULL, 0, &err) == STOR_OK);
	CHECK(stor_cat_lookup(db, id1, 20, STOR_KIND_DEBUGINFO, &got, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_cat_lookup(db, id3, 20, STOR_KIND_DEBUGINFO, &got, &err) == STOR_OK);
	REQUIRE(stor_cat_lookup(db, id2, 20, STOR_KIND_EXECUTABLE, &got, &err) == STOR_OK);
	CHECK_STREQ(got.package, "/p/b.deb");
	int n = 0;
	CHECK(stor_cat_foreach_package(db, count_pkg, &n, &err) == STOR_OK);
	CHECK_EQ_U(n, 2);
	/* deleting a.deb keeps b.deb's entry */
	REQUIRE(stor_cat_delete_package(db, "/p/a.deb", &err) == STOR_OK);
	CHECK(stor_cat_lookup(db, id3, 20, STOR_KIND_DEBUGINFO, &got, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_cat_lookup(db, id2, 20, STOR_KIND_EXECUTABLE, &got, &err) == STOR_OK);
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_close(db);
	db = open_db(dir);
	REQUIRE(db);
	CHECK(stor_cat_lookup(db, id2, 20, STOR_KIND_EXECUTABLE, &got, &err) == STOR_OK);
	CHECK(stor_cat_get_package(db, "/p/a.deb", &back, NULL, NULL, &err) == STOR_E_NOT_FOUND);
	stor_close(db);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* Sources: found by member path, the package nearest the debug file's
 * preferred among several, dropped with their package. */
TEST(sources)
{
	char dir[] = "/tmp/stor-cat-XXXXXX";
	REQUIRE(mkdtemp(dir));
	stor_db *db = open_db(dir);
	REQUIRE(db);
	stor_error err;
	stor_cat_package pkg;
	memset(&pkg, 0, sizeof(pkg));
	stor_cat_source s1[2] = {{"usr/src/debug/foo-1.0/a.c", 100, 10},
				 {"usr/src/debug/foo-1.0/b.h", 200, 20}};
	stor_cat_source s2[1] = {{"usr/src/debug/foo-1.0/a.c", 300, 30}};
	REQUIRE(stor_cat_put_package(db, "/r/x86/foo-debugsource-1.0.rpm", &pkg, NULL, 0, NULL, 0,
				     s1, 2, &err) == STOR_OK);
	REQUIRE(stor_cat_put_package(db, "/r/arm/foo-debugsource-1.0.rpm", &pkg, NULL, 0, NULL, 0,
				     s2, 1, &err) == STOR_OK);
	stor_cat_entry got;
	REQUIRE(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a.c", "/r/x86/foo-debuginfo.rpm",
				     &got, &err) == STOR_OK);
	CHECK_STREQ(got.package, "/r/x86/foo-debugsource-1.0.rpm");
	CHECK_STREQ(got.member, "usr/src/debug/foo-1.0/a.c");
	CHECK_EQ_U(got.offset, 100);
	CHECK_EQ_U(got.size, 10);
	REQUIRE(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a.c", "/r/arm/foo-debuginfo.rpm",
				     &got, &err) == STOR_OK);
	CHECK_STREQ(got.package, "/r/arm/foo-debugsource-1.0.rpm");
	CHECK_EQ_U(got.offset, 300);
	REQUIRE(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a.c", NULL, &got, &err) == STOR_OK);
	CHECK_STREQ(got.package, "/r/arm/foo-debugsource-1.0.rpm");  /* first in path order */
	/* a prefix of a member, or a member with more after it, is not it */
	CHECK(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a", NULL, &got, &err) ==
	      STOR_E_NOT_FOUND);
	CHECK(stor_cat_find_source(db, "usr/src/debug/foo-1.0", NULL, &got, &err) ==
	      STOR_E_NOT_FOUND);
	CHECK(stor_cat_find_source(db, "", NULL, &got, &err) == STOR_E_NOT_FOUND);
	/* rescanned without b.h; the other package deleted */
	REQUIRE(stor_cat_put_package(db, "/r/x86/foo-debugsource-1.0.rpm", &pkg, NULL, 0, NULL, 0,
				     s1, 1, &err) == STOR_OK);
	CHECK(stor_cat_find_source(db, "usr/src/debug/foo-1.0/b.h", NULL, &got, &err) ==
	      STOR_E_NOT_FOUND);
	REQUIRE(stor_cat_delete_package(db, "/r/arm/foo-debugsource-1.0.rpm", &err) == STOR_OK);
	REQUIRE(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a.c", "/r/arm/", &got, &err) ==
		STOR_OK);
	CHECK_STREQ(got.package, "/r/x86/foo-debugsource-1.0.rpm");
	REQUIRE(stor_cat_delete_package(db, "/r/x86/foo-debugsource-1.0.rpm", &err) == STOR_OK);
	CHECK(stor_cat_find_source(db, "usr/src/debug/foo-1.0/a.c", NULL, &got, &err) ==
	      STOR_E_NOT_FOUND);
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_close(db);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

TEST_MAIN()
