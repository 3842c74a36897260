// SPDX-License-Identifier: Apache-2.0
/*
 * test_stor_db: the object store's contract — file + metadata together, index
 * accounting, negative entries, no downgrade of debuginfo, LRU eviction under
 * the size bound honoring pins, persistence across reopen, the in-memory
 * table past many entries, the store's /metrics families, the type-layout blob.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/stor_db.h"
#include "stor_fixture.h"
#include "test.h"

static bool has_file(stor_db *db, int n)
{
	uint8_t id[20];
	make_id(id, n);
	stor_meta m;
	return stor_get_meta(db, id, 20, &m, NULL) == STOR_OK && m.state == STOR_STATE_PRESENT;
}

TEST(put_get_roundtrip)
{
	char *dir = temp_dir();
	REQUIRE(dir);
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	uint8_t id[20], alt[20];
	make_id(id, 1);
	make_id(alt, 2);
	stor_meta m = {0};
	m.kind = STOR_KIND_DEBUGINFO;
	m.alt_len = 20;
	memcpy(m.alt_id, alt, 20);
	strcpy(m.source, "/usr/lib/debug");
	size_t size = 100000;
	char *data = malloc(size);
	for (size_t i = 0; i < size; i++)
		data[i] = (char)(i % 251);
	stor_error err = {0};
	CHECK(stor_put_file(db, id, 20, &m, data, size, &err) == STOR_OK);

	stor_blob b;
	stor_meta got;
	REQUIRE(stor_get_file(db, id, 20, &b, &got, &err) == STOR_OK);
	CHECK_EQ_U(b.size, size);
	CHECK(memcmp(b.data, data, size) == 0);
	stor_blob_release(&b);
	CHECK_EQ_U(got.state, STOR_STATE_PRESENT);
	CHECK_EQ_U(got.kind, STOR_KIND_DEBUGINFO);
	CHECK_EQ_U(got.size, size);
	CHECK_EQ_U(got.alt_len, 20);
	CHECK(memcmp(got.alt_id, alt, 20) == 0);
	CHECK_STREQ(got.source, "/usr/lib/debug");
	CHECK_EQ_U(got.fetch_time, fake_now);

	/* No index yet; then one, accounted in the metadata. */
	CHECK(stor_get_index(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_put_index(db, id, 20, "INDEX", 5, &err) == STOR_OK);
	REQUIRE(stor_get_index(db, id, 20, &b, &err) == STOR_OK);
	CHECK(b.size == 5 && memcmp(b.data, "INDEX", 5) == 0);
	stor_blob_release(&b);
	CHECK(stor_get_meta(db, id, 20, &got, &err) == STOR_OK);
	CHECK_EQ_U(got.index_size, 5);

	stor_stats st;
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.entries, 1);
	CHECK_EQ_U(st.files, 1);
	CHECK_EQ_U(st.indexes, 1);
	CHECK(st.bytes > size + 5);

	/* Reopen: everything is still there, accounting identical. */
	stor_close(db);
	db = open_db(dir, 0);
	REQUIRE(db);
	stor_stats st2;
	stor_get_stats(db, &st2);
	CHECK_EQ_U(st2.bytes, st.bytes);
	CHECK_EQ_U(st2.entries, 1);
	REQUIRE(stor_get_file(db, id, 20, &b, NULL, &err) == STOR_OK);
	CHECK(b.size == size && memcmp(b.data, data, size) == 0);
	stor_blob_release(&b);

	/* A new file replaces the old one and drops the stale index. */
	CHECK(stor_put_file(db, id, 20, &m, "ELF2", 4, &err) == STOR_OK);
	CHECK(stor_get_index(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_get_meta(db, id, 20, &got, &err) == STOR_OK);
	CHECK_EQ_U(got.index_size, 0);
	CHECK_EQ_U(got.size, 4);

	CHECK(stor_delete(db, id, 20, &err) == STOR_OK);
	CHECK(stor_get_meta(db, id, 20, &got, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_get_file(db, id, 20, &b, NULL, &err) == STOR_E_NOT_FOUND);
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.entries, 0);
	CHECK_EQ_U(st.bytes, 0);
	free(data);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST(invalid_arguments)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	uint8_t id[65] = {0};
	stor_meta m = {0};
	stor_error err = {0};
	m.kind = STOR_KIND_DEBUGINFO;
	CHECK(stor_put_file(db, id, 0, &m, "x", 1, &err) == STOR_E_INVALID);
	CHECK(stor_put_file(db, id, 65, &m, "x", 1, &err) == STOR_E_INVALID);
	CHECK(strstr(err.msg, "65 bytes") != NULL);
	m.kind = STOR_KIND_NONE;
	CHECK(stor_put_file(db, id, 20, &m, "x", 1, &err) == STOR_E_INVALID);
	CHECK(stor_put_negative(db, id, 20, STOR_STATE_PRESENT, "", "", 0, &err) == STOR_E_INVALID);
	CHECK(stor_put_index(db, id, 20, "i", 1, &err) == STOR_E_NOT_FOUND);
	stor_close(db);
	stor_close(NULL);
	rm_rf(dir);
	free(dir);
}

TEST(negative_entries_and_no_downgrade)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	uint8_t id[20];
	make_id(id, 5);
	stor_error err = {0};
	stor_meta m;
	CHECK(stor_put_negative(db, id, 20, STOR_STATE_NOT_FOUND, "upstreams",
				"404 from every upstream", fake_now + 600000, &err) == STOR_OK);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.state, STOR_STATE_NOT_FOUND);
	CHECK_EQ_U(m.neg_expiry, fake_now + 600000);
	CHECK_STREQ(m.last_error, "404 from every upstream");
	stor_blob b;
	CHECK(stor_get_file(db, id, 20, &b, NULL, &err) == STOR_E_NOT_FOUND);

	/* Only the executable is found: it replaces the negative entry. */
	CHECK(put(db, 5, STOR_KIND_EXECUTABLE, 1000) == STOR_OK);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.state, STOR_STATE_PRESENT);
	CHECK_EQ_U(m.kind, STOR_KIND_EXECUTABLE);
	/* A later failed search for debuginfo keeps the executable. */
	CHECK(stor_put_negative(db, id, 20, STOR_STATE_ERROR, "x", "HTTP 500",
				fake_now + 10000, &err) == STOR_OK);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.state, STOR_STATE_PRESENT);
	CHECK_EQ_U(m.kind, STOR_KIND_EXECUTABLE);
	CHECK_EQ_U(m.size, 1000);
	CHECK_EQ_U(m.neg_expiry, fake_now + 10000);
	CHECK_STREQ(m.last_error, "HTTP 500");
	CHECK(stor_put_index(db, id, 20, "idx", 3, &err) == STOR_OK);

	/* Debuginfo replaces the executable and its index. */
	CHECK(put(db, 5, STOR_KIND_DEBUGINFO, 2000) == STOR_OK);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.kind, STOR_KIND_DEBUGINFO);
	CHECK_EQ_U(m.size, 2000);
	CHECK_EQ_U(m.index_size, 0);
	CHECK(stor_get_index(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	/* An executable never replaces debuginfo. */
	CHECK(put(db, 5, STOR_KIND_EXECUTABLE, 10) == STOR_E_EXISTS);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.kind, STOR_KIND_DEBUGINFO);
	CHECK_EQ_U(m.size, 2000);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST(lru_eviction_honors_pins)
{
	char *dir = temp_dir();
	/* Room for about four 10 kB files. */
	stor_db *db = open_db(dir, 45000);
	REQUIRE(db);
	for (int i = 0; i < 4; i++) {
		fake_now += 1000;
		REQUIRE(put(db, i, STOR_KIND_DEBUGINFO, 10000) == STOR_OK);
	}
	for (int i = 0; i < 4; i++)
		CHECK(has_file(db, i));
	/* Touch 0 so that 1 is the least recently used; pin 1: 2 goes instead. */
	uint8_t id[20];
	stor_blob b;
	make_id(id, 0);
	fake_now += 1000;
	REQUIRE(stor_get_file(db, id, 20, &b, NULL, NULL) == STOR_OK);
	stor_blob_release(&b);
	make_id(id, 1);
	stor_pin(db, id, 20);
	fake_now += 1000;
	REQUIRE(put(db, 4, STOR_KIND_DEBUGINFO, 10000) == STOR_OK);
	CHECK(has_file(db, 0));
	CHECK(has_file(db, 1));
	CHECK(!has_file(db, 2));
	CHECK(has_file(db, 3));
	CHECK(has_file(db, 4));
	stor_stats st;
	stor_get_stats(db, &st);
	CHECK(st.bytes <= 45000);
	CHECK_EQ_U(st.evictions, 1);
	CHECK_EQ_U(st.pinned, 1);

	/* Everything pinned but the new one: the put goes over, unpin catches up. */
	for (int i = 0; i < 5; i++) {
		make_id(id, i);
		if (i != 1)
			stor_pin(db, id, 20);
	}
	fake_now += 1000;
	REQUIRE(put(db, 6, STOR_KIND_DEBUGINFO, 10000) == STOR_OK);
	stor_get_stats(db, &st);
	CHECK(st.bytes > 45000);
	for (int i = 0; i < 5; i++) {
		make_id(id, i);
		stor_unpin(db, id, 20);
	}
	stor_get_stats(db, &st);
	CHECK(st.bytes <= 45000);
	CHECK_EQ_U(st.pinned, 0);
	CHECK(has_file(db, 6));

	/* A file larger than the whole bound is refused. */
	CHECK(put(db, 7, STOR_KIND_DEBUGINFO, 50000) == STOR_E_TOO_LARGE);
	CHECK(!has_file(db, 7));
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST(lru_order_survives_reopen)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	for (int i = 0; i < 3; i++) {
		fake_now += 100000;
		REQUIRE(put(db, i, STOR_KIND_DEBUGINFO, 10000) == STOR_OK);
	}
	/* Read 0 much later: it becomes the most recent, persisted by close. */
	uint8_t id[20];
	stor_blob b;
	make_id(id, 0);
	fake_now += 100000;
	REQUIRE(stor_get_file(db, id, 20, &b, NULL, NULL) == STOR_OK);
	stor_blob_release(&b);
	stor_close(db);
	db = open_db(dir, 35000);
	REQUIRE(db);
	fake_now += 1000;
	REQUIRE(put(db, 3, STOR_KIND_DEBUGINFO, 10000) == STOR_OK);
	CHECK(has_file(db, 0));
	CHECK(!has_file(db, 1));
	CHECK(has_file(db, 2));
	CHECK(has_file(db, 3));
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

static bool count_fn(void *arg, const uint8_t *id, size_t len, const stor_meta *m)
{
	(void)id;
	(void)m;
	*(int *)arg += len == 20;
	return true;
}

TEST(foreach_and_open_errors)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	for (int i = 0; i < 10; i++)
		REQUIRE(put(db, i, STOR_KIND_DEBUGINFO, 100) == STOR_OK);
	int n = 0;
	CHECK(stor_foreach(db, count_fn, &n, NULL) == STOR_OK);
	CHECK_EQ_U(n, 10);
	/* A second open of the same directory fails with a message naming it. */
	stor_options o;
	stor_options_init(&o);
	o.path = dir;
	stor_db *db2 = NULL;
	stor_error err = {0};
	CHECK(stor_open(&o, &db2, &err) == STOR_E_IO);
	CHECK(db2 == NULL);
	CHECK(strstr(err.msg, dir) != NULL);
	stor_close(db);
	o.path = "";
	CHECK(stor_open(&o, &db2, &err) == STOR_E_INVALID);
	rm_rf(dir);
	free(dir);
}

struct worker_arg {
	stor_db *db;
	unsigned seed;
	int ops;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	char *buf = malloc(20000);
	for (int i = 0; i < a->ops; i++) {
		a->seed = a->seed * 1103515245u + 12345u;
		int n = (int)(a->seed >> 8) % 24;
		uint8_t id[20];
		make_id(id, n);
		stor_meta m = {0};
		stor_blob b;
		switch ((a->seed >> 20) % 6) {
		case 0:
		case 1:
			m.kind = STOR_KIND_DEBUGINFO;
			memset(buf, n, 20000);
			stor_put_file(a->db, id, 20, &m, buf, 1000 + (a->seed >> 4) % 19000, NULL);
			break;
		case 2:
			stor_put_index(a->db, id, 20, buf, 500, NULL);
			break;
		case 3:
			stor_pin(a->db, id, 20);
			if (stor_get_file(a->db, id, 20, &b, &m, NULL) == STOR_OK) {
				/* Whole and agreeing with its metadata. */
				if (b.size != m.size || ((const char *)b.data)[b.size - 1] != (char)n)
					fprintf(stderr, "torn read of %d\n", n), abort();
				stor_blob_release(&b);
			}
			stor_unpin(a->db, id, 20);
			break;
		case 4:
			stor_put_negative(a->db, id, 20, STOR_STATE_ERROR, "x", "e", 1, NULL);
			break;
		default:
			stor_delete(a->db, id, 20, NULL);
			break;
		}
	}
	free(buf);
	return NULL;
}

TEST(concurrent_writers_readers_and_pins)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 120000);
	REQUIRE(db);
	pthread_t t[4];
	struct worker_arg args[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (struct worker_arg){db, (unsigned)i * 7919u + 1u, 400};
		REQUIRE(pthread_create(&t[i], NULL, worker, &args[i]) == 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	stor_error err = {0};
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_stats st;
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.pinned, 0);
	CHECK(st.bytes <= 120000);
	CHECK(st.evictions > 0);
	int n = 0;
	CHECK(stor_foreach(db, count_fn, &n, NULL) == STOR_OK);
	CHECK_EQ_U(st.entries, (uint64_t)n);
	/* The accounting survives a reopen unchanged. */
	stor_close(db);
	db = open_db(dir, 120000);
	REQUIRE(db);
	stor_stats st2;
	stor_get_stats(db, &st2);
	CHECK_EQ_U(st2.bytes, st.bytes);
	CHECK_EQ_U(st2.entries, st.entries);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

/* Many entries (the in-memory map grows; open reloads them all), then the
 * store's metric families, as /metrics shows them. */
TEST(many_entries_reopen_and_metrics)
{
	char *dir = temp_dir();
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	enum { N = 700 };
	uint8_t id[20] = {0};
	stor_meta m = {.kind = STOR_KIND_DEBUGINFO};
	for (int n = 0; n < N; n++) {
		id[0] = (uint8_t)n;
		id[1] = (uint8_t)(n >> 8);
		fake_now++;
		REQUIRE(stor_put_file(db, id, 20, &m, "0123456789", 10, NULL) == STOR_OK);
	}
	id[0] = id[1] = 0;
	REQUIRE(stor_put_index(db, id, 20, "index", 5, NULL) == STOR_OK);
	stor_stats st;
	stor_get_stats(db, &st);
	uint64_t bytes = st.bytes;
	stor_close(db);
	db = open_db(dir, 1u << 30);
	REQUIRE(db);
	stor_get_stats(db, &st);
	CHECK_EQ_U(st.entries, N);
	CHECK_EQ_U(st.files, N);
	CHECK_EQ_U(st.indexes, 1);
	CHECK_EQ_U(st.bytes, bytes);
	for (int n = 0; n < N; n += 99) {
		id[0] = (uint8_t)n;
		id[1] = (uint8_t)(n >> 8);
		stor_meta got;
		CHECK(stor_get_meta(db, id, 20, &got, NULL) == STOR_OK);
	}

	base_buf b;
	base_buf_init(&b, 1 << 20);
	stor_db_metrics_render(db, &b);
	REQUIRE(base_buf_append(&b, "", 1));
	const char *text = (const char *)b.data;
	char line[128];
	snprintf(line, sizeof(line), "\nsymbolizer_store_bytes %llu\n", (unsigned long long)bytes);
	CHECK(strstr(text, line) != NULL);
	const char *head = "# HELP symbolizer_store_bytes Logical size of everything in the store.\n"
			   "# TYPE symbolizer_store_bytes gauge\n";
	CHECK(strncmp(text, head, strlen(head)) == 0);
	CHECK(strstr(text, "\nsymbolizer_store_max_bytes 1073741824\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_store_entries 700\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_store_indexes 1\n") != NULL);
	CHECK(strstr(text, "# TYPE symbolizer_store_evictions_total counter\n"
			   "symbolizer_store_evictions_total 0\n") != NULL);
	base_buf_deinit(&b);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

/* The type-layout blob: its own column family, accounted in the metadata, kept
 * across a reopen and when the index goes, replaced with the file, verified. */
TEST(layout_blob)
{
	char *dir = temp_dir();
	REQUIRE(dir);
	stor_db *db = open_db(dir, 0);
	REQUIRE(db);
	uint8_t id[20];
	make_id(id, 7);
	stor_error err = {0};
	stor_blob b;
	CHECK(stor_put_layout(db, id, 20, "L", 1, &err) == STOR_E_NOT_FOUND);
	REQUIRE(put(db, 7, STOR_KIND_DEBUGINFO, 1000) == STOR_OK);
	CHECK(stor_get_layout(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_put_index(db, id, 20, "INDEX", 5, &err) == STOR_OK);
	CHECK(stor_put_layout(db, id, 20, "LAYOUT!", 7, &err) == STOR_OK);
	stor_meta m;
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.layout_size, 7);
	CHECK_EQ_U(m.index_size, 5);
	stor_stats st;
	stor_get_stats(db, &st);
	CHECK(st.bytes > 1000 + 5 + 7);
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_close(db);
	db = open_db(dir, 0);
	REQUIRE(db);
	stor_stats st2;
	stor_get_stats(db, &st2);
	CHECK_EQ_U(st2.bytes, st.bytes);
	REQUIRE(stor_get_layout(db, id, 20, &b, &err) == STOR_OK);
	CHECK(b.size == 7 && memcmp(b.data, "LAYOUT!", 7) == 0);
	stor_blob_release(&b);
	CHECK(stor_delete_index(db, id, 20, &err) == STOR_OK);
	CHECK(stor_get_layout(db, id, 20, &b, &err) == STOR_OK);
	stor_blob_release(&b);
	CHECK(stor_verify(db, &err) == STOR_OK);
	/* A new file drops the layouts built from the old one. */
	REQUIRE(put(db, 7, STOR_KIND_DEBUGINFO, 900) == STOR_OK);
	CHECK(stor_get_layout(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	REQUIRE(stor_get_meta(db, id, 20, &m, &err) == STOR_OK);
	CHECK_EQ_U(m.layout_size, 0);
	CHECK(stor_verify(db, &err) == STOR_OK);
	/* Deleted with the entry. */
	CHECK(stor_put_layout(db, id, 20, "L2", 2, &err) == STOR_OK);
	CHECK(stor_delete(db, id, 20, &err) == STOR_OK);
	CHECK(stor_get_layout(db, id, 20, &b, &err) == STOR_E_NOT_FOUND);
	CHECK(stor_verify(db, &err) == STOR_OK);
	stor_close(db);
	rm_rf(dir);
	free(dir);
}

TEST_MAIN()
