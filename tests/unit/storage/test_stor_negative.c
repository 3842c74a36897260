// SPDX-License-Identifier: Apache-2.0
/*
 * test_stor_negative: the bound on negative records (stor_options.max_negative):
 * a flood of not-found build IDs keeps the count, least recently used out,
 * files untouched, and the bound holds across a reopen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/stor_db.h"
#include "test.h"

static int64_t fake_now = 1000000;
static int64_t fake_clock(void) { return fake_now; }

static void make_id(uint8_t *id, int n)
{
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(n * 31 + i);
}

static void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static stor_errc put(stor_db *db, int n, size_t size)
{
	uint8_t id[20];
	make_id(id, n);
	char *data = calloc(1, size);
	stor_meta m = {0};
	m.kind = STOR_KIND_DEBUGINFO;
	stor_errc rc = stor_put_file(db, id, 20, &m, data, size, NULL);
	free(data);
	return rc;
}

static bool has_file(stor_db *db, int n)
{
	uint8_t id[20];
	make_id(id, n);
	stor_meta m;
	return stor_get_meta(db, id, 20, &m, NULL) == STOR_OK && m.state == STOR_STATE_PRESENT;
}

/* Negative records are bounded by count: least recently used out, files kept. */
TEST(negative_records_bounded)
{
	char tmpl[] = "/tmp/stor_neg_XXXXXX";
	char *dir = mkdtemp(tmpl);
	REQUIRE(dir);
	stor_options o;
	stor_options_init(&o);
	o.path = dir;
	o.sync_writes = false;
	o.now_ms = fake_clock;
	o.max_negative = 10;
	stor_db *db = NULL;
	REQUIRE(stor_open(&o, &db, NULL) == STOR_OK);
	REQUIRE(put(db, 1000, 100) == STOR_OK);
	uint8_t id[20];
	for (int i = 0; i < 50; i++) {
		fake_now += 10;
		make_id(id, i);
		REQUIRE(stor_put_negative(db, id, 20, STOR_STATE_NOT_FOUND, "sources", "404",
					  fake_now + 60000, NULL) == STOR_OK);
	}
	stor_stats st;
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.negatives, 10);
	CHECK_EQ_U(st.files, 1);
	stor_meta m;
	make_id(id, 49);
	CHECK(stor_get_meta(db, id, 20, &m, NULL) == STOR_OK);   /* the newest stay */
	make_id(id, 0);
	CHECK(stor_get_meta(db, id, 20, &m, NULL) == STOR_E_NOT_FOUND); /* the oldest went */
	CHECK(has_file(db, 1000));
	/* Again for a held negative entry: no eviction needed. */
	make_id(id, 49);
	REQUIRE(stor_put_negative(db, id, 20, STOR_STATE_ERROR, "sources", "500",
				  fake_now + 60000, NULL) == STOR_OK);
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.negatives, 10);
	REQUIRE(stor_verify(db, NULL) == STOR_OK);
	stor_close(db);
	REQUIRE(stor_open(&o, &db, NULL) == STOR_OK);
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.negatives, 10);
	stor_close(db);
	rm_rf(dir);
}

TEST_MAIN()
