// SPDX-License-Identifier: Apache-2.0
/*
 * test_stor_derived: what names a stored file exactly: derived blobs (index,
 * layouts) only of the file they were built from (issue 25, item 4), and an
 * identity's aliases to its canonical key (issue 27).
 */
#include <stdlib.h>
#include <string.h>

#include "storage/stor_alias.h"
#include "storage/stor_db.h"
#include "stor_fixture.h"
#include "test.h"

TEST(derived_blobs_of_the_exact_file)
{
	/* Issue 25, item 4: an index (or layouts) built from a file replaced
	 * while it was built is refused; each file put gets a later fetch_time
	 * than the one it replaces, even within one millisecond. */
	char *dir = temp_dir();
	REQUIRE(dir);
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	uint8_t id[20];
	make_id(id, 9);
	stor_error err = {0};
	stor_meta old, now;
	REQUIRE(put(db, 9, STOR_KIND_DEBUGINFO, 1000) == STOR_OK);
	REQUIRE(stor_get_meta(db, id, 20, &old, &err) == STOR_OK);
	REQUIRE(put(db, 9, STOR_KIND_DEBUGINFO, 1000) == STOR_OK);  /* same size, same ms */
	REQUIRE(stor_get_meta(db, id, 20, &now, &err) == STOR_OK);
	CHECK(now.fetch_time > old.fetch_time);
	CHECK(stor_put_index_of(db, id, 20, old.fetch_time, "OLD", 3, &err) == STOR_E_STALE);
	CHECK(stor_put_layout_of(db, id, 20, old.fetch_time, "OLD", 3, &err) == STOR_E_STALE);
	stor_blob b;
	CHECK(stor_get_index(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_get_layout(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_put_index_of(db, id, 20, now.fetch_time, "NEW", 3, &err) == STOR_OK);
	CHECK(stor_put_layout_of(db, id, 20, now.fetch_time, "NEWL", 4, &err) == STOR_OK);
	REQUIRE(stor_get_index(db, id, 20, &b, &err) == STOR_OK);
	CHECK(b.size == 3 && memcmp(b.data, "NEW", 3) == 0);
	stor_blob_release(&b);
	CHECK(stor_verify(db, &err) == STOR_OK);
	/* The stamp survives a reopen. */
	stor_close(db);
	db = open_db(dir, 0);
	REQUIRE(db);
	REQUIRE(put(db, 9, STOR_KIND_DEBUGINFO, 500) == STOR_OK);
	CHECK(stor_put_index_of(db, id, 20, now.fetch_time, "NEW", 3, &err) == STOR_E_STALE);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST(identity_aliases)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	stor_error err = {0};
	uint8_t alias[66] = {1, 2, 3}, canon[20] = {9, 9}, got[STOR_ID_MAX];
	size_t n = 0;
	alias[64] = 2; /* a non-GNU kind's key: 66 bytes */
	alias[65] = 16;
	CHECK(stor_get_alias(db, alias, 66, got, &n, &err) == STOR_E_NOT_FOUND);
	REQUIRE(stor_put_alias(db, alias, 66, canon, 20, &err) == STOR_OK);
	REQUIRE(stor_get_alias(db, alias, 66, got, &n, &err) == STOR_OK);
	CHECK(n == 20 && memcmp(got, canon, 20) == 0);
	/* 65 bytes is no key (GNU: 1..64, other kinds: 66) */
	CHECK(stor_put_alias(db, alias, 65, canon, 20, &err) == STOR_E_INVALID);
	CHECK(stor_get_alias(db, alias, 65, got, &n, &err) == STOR_E_INVALID);
	/* an alias is not an entry: the store's entries and verify are unchanged */
	stor_meta m;
	CHECK(stor_get_meta(db, alias, 66, &m, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_close(db);
	/* kept across a reopen */
	db = open_db(dir, 0);
	REQUIRE(db);
	REQUIRE(stor_get_alias(db, alias, 66, got, &n, &err) == STOR_OK);
	CHECK(n == 20);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST_MAIN()
