// SPDX-License-Identifier: Apache-2.0
/*
 * test_stor_crash: kill -9 a writer of the store at random moments, many times,
 * and check after each kill that every stored item is whole and readable, or
 * absent: never a file without its metadata, never one that disagrees with it.
 *
 * The writer (a forked child, so that nothing of it survives in the parent)
 * writes files, indexes, negative entries and deletes at random over 48 build
 * IDs, under a size bound small enough that eviction runs all the time. Every
 * value carries a header (build ID number, generation, size) and bytes derived
 * from them, so the checker can recompute it; the metadata's source names the
 * generation, so a file from one write and metadata from another are caught.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/stor_db.h"
#include "test.h"

#define N_IDS 48
#define ROUNDS 24

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void make_id(uint8_t *id, uint32_t n)
{
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(0xa0 + n + i * 3);
}

/* Value: "V" kind n gen size, then bytes from a generator seeded by them. */
static void fill(uint8_t *buf, size_t size, char kind, uint32_t n, uint32_t gen)
{
	uint64_t s = ((uint64_t)n << 40) ^ ((uint64_t)gen << 8) ^ (uint64_t)kind ^ 0x9e3779b97f4a7c15ull;
	buf[0] = 'V';
	buf[1] = (uint8_t)kind;
	memcpy(buf + 2, &n, 4);
	memcpy(buf + 6, &gen, 4);
	uint32_t sz = (uint32_t)size;
	memcpy(buf + 10, &sz, 4);
	for (size_t i = 14; i < size; i++)
		buf[i] = (uint8_t)xorshift(&s);
}

/* Checks a value; returns its generation, or -1 when it is not a whole value. */
static int64_t check_value(const uint8_t *buf, size_t size, char kind, uint32_t n)
{
	if (size < 14 || buf[0] != 'V' || buf[1] != (uint8_t)kind)
		return -1;
	uint32_t vn, gen, sz;
	memcpy(&vn, buf + 2, 4);
	memcpy(&gen, buf + 6, 4);
	memcpy(&sz, buf + 10, 4);
	if (vn != n || sz != size)
		return -1;
	uint8_t *want = malloc(size);
	fill(want, size, kind, n, gen);
	int ok = memcmp(want, buf, size) == 0;
	free(want);
	return ok ? (int64_t)gen : -1;
}

static stor_db *open_store(const char *dir)
{
	stor_options o;
	stor_options_init(&o);
	o.path = dir;
	o.max_bytes = 6u << 20;
	stor_db *db = NULL;
	stor_error err = {0};
	if (stor_open(&o, &db, &err) != STOR_OK)
		fprintf(stderr, "open %s: %s\n", dir, err.msg);
	return db;
}

static void writer(const char *dir, uint64_t seed) __attribute__((noreturn));
static void writer(const char *dir, uint64_t seed)
{
	stor_db *db = open_store(dir);
	if (!db)
		_exit(3);
	uint8_t *buf = malloc(700000);
	uint32_t gen = (uint32_t)seed;
	for (;;) {
		uint32_t n = (uint32_t)(xorshift(&seed) % N_IDS);
		uint8_t id[20];
		make_id(id, n);
		unsigned op = (unsigned)(xorshift(&seed) % 10);
		gen++;
		if (op < 5) {
			size_t size = 14 + xorshift(&seed) % 600000;
			fill(buf, size, 'F', n, gen);
			stor_meta m = {0};
			m.kind = op == 0 ? STOR_KIND_EXECUTABLE : STOR_KIND_DEBUGINFO;
			snprintf(m.source, sizeof(m.source), "gen=%u", gen);
			stor_put_file(db, id, 20, &m, buf, size, NULL);
		} else if (op < 8) {
			size_t size = 14 + xorshift(&seed) % 100000;
			fill(buf, size, 'I', n, gen);
			stor_put_index(db, id, 20, buf, size, NULL);
		} else if (op == 8) {
			stor_put_negative(db, id, 20, STOR_STATE_NOT_FOUND, "gen", "404", 1, NULL);
		} else {
			stor_delete(db, id, 20, NULL);
		}
	}
}

struct verify_state {
	stor_db *db;
	int items, files, indexes, bad;
	char why[512];
};

static bool verify_one(void *arg, const uint8_t *id, size_t len, const stor_meta *m)
{
	struct verify_state *v = arg;
	uint32_t n = id[0] - 0xa0;
	uint8_t want[20];
	if (len != 20 || n >= N_IDS || (make_id(want, n), memcmp(want, id, 20) != 0)) {
		snprintf(v->why, sizeof(v->why), "unknown key");
		v->bad++;
		return false;
	}
	v->items++;
	stor_blob b;
	stor_error err = {0};
	if (m->state == STOR_STATE_PRESENT) {
		stor_meta fm;
		if (stor_get_file(v->db, id, len, &b, &fm, &err) != STOR_OK) {
			snprintf(v->why, sizeof(v->why), "id %u: file unreadable: %.200s", n, err.msg);
			v->bad++;
			return false;
		}
		int64_t gen = check_value(b.data, b.size, 'F', n);
		unsigned mgen = 0;
		if (gen < 0 || sscanf(fm.source, "gen=%u", &mgen) != 1 || mgen != (uint32_t)gen) {
			snprintf(v->why, sizeof(v->why), "id %u: file (gen %lld) does not match metadata (%.64s)",
				 n, (long long)gen, fm.source);
			v->bad++;
		}
		stor_blob_release(&b);
		v->files++;
		if (m->index_size) {
			if (stor_get_index(v->db, id, len, &b, &err) != STOR_OK ||
			    b.size != m->index_size || check_value(b.data, b.size, 'I', n) < 0) {
				snprintf(v->why, sizeof(v->why), "id %u: index bad", n);
				v->bad++;
			}
			stor_blob_release(&b);
			v->indexes++;
		}
	} else {
		if (stor_get_index(v->db, id, len, &b, &err) != STOR_E_NOT_FOUND) {
			snprintf(v->why, sizeof(v->why), "id %u: index without file", n);
			v->bad++;
			stor_blob_release(&b);
		}
	}
	return true;
}

TEST(kill_9_writer_many_times)
{
	char tmpl[] = "/tmp/stor_crash_XXXXXX";
	char *dir = mkdtemp(tmpl);
	REQUIRE(dir);
	uint64_t seed = (uint64_t)time(NULL) * 2654435761u | 1;
	printf("seed %llu\n", (unsigned long long)seed);
	int total_items = 0;
	for (int round = 0; round < ROUNDS; round++) {
		uint64_t child_seed = xorshift(&seed);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0)
			writer(dir, child_seed);
		/* Between 20 ms and 420 ms of writing: open, puts, flushes, compactions. */
		usleep((useconds_t)(20000 + xorshift(&seed) % 400000));
		REQUIRE(kill(pid, SIGKILL) == 0);
		int status = 0;
		REQUIRE(waitpid(pid, &status, 0) == pid);
		/* Killed, not exited: an exit would mean the writer failed to open. */
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

		stor_db *db = open_store(dir);
		REQUIRE(db);
		stor_error err = {0};
		stor_errc rc = stor_verify(db, &err);
		if (rc != STOR_OK)
			fprintf(stderr, "round %d: %s\n", round, err.msg);
		CHECK(rc == STOR_OK);
		struct verify_state v = {.db = db};
		CHECK(stor_foreach(db, verify_one, &v, &err) == STOR_OK);
		if (v.bad)
			fprintf(stderr, "round %d: %s\n", round, v.why);
		CHECK_EQ_U(v.bad, 0);
		stor_stats st;
		stor_get_stats(db, &st);
		CHECK_EQ_U(st.entries, (uint64_t)v.items);
		CHECK_EQ_U(st.files, (uint64_t)v.files);
		CHECK_EQ_U(st.indexes, (uint64_t)v.indexes);
		total_items += v.items;
		stor_close(db);
	}
	/* The writer made progress: the check looked at real data. */
	CHECK(total_items > ROUNDS);
	printf("%d rounds, %d items checked\n", ROUNDS, total_items);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

TEST_MAIN()
