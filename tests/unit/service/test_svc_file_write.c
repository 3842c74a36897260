// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_file_write: the ranked write's reservation (service/core/
 * svc_file_write.h), on a real store: a decided write reserves its identity
 * without holding a lock (another identity writes meanwhile, whatever its
 * stripe), a second writer of the same identity waits until the commit and
 * then decides against the committed file, and a release lets it go on as
 * if nothing was decided.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/core/svc_build_id.h"
#include "service/core/svc_file_write.h"

#include "test.h"

static stor_db *open_store(char *dir)
{
	strcpy(dir, "/tmp/test_svc_file_write_XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	stor_options so;
	stor_options_init(&so);
	so.path = dir;
	so.sync_writes = false;
	stor_db *db = NULL;
	return stor_open(&so, &db, NULL) == STOR_OK ? db : NULL;
}

static sym_build_id id_of(uint8_t b)
{
	sym_build_id id;
	memset(&id, 0, sizeof(id));
	id.kind = SYM_ID_GNU;
	id.len = 20;
	for (int i = 0; i < 20; i++)
		id.bytes[i] = (uint8_t)(b + i);
	return id;
}

typedef struct writer {
	stor_db *db;
	sym_build_id id;
	const char *data;
	bool force;
	svc_file_outcome out;
	atomic_bool done;
} writer;

static void *write_thread(void *arg)
{
	writer *w = arg;
	stor_meta m;
	memset(&m, 0, sizeof(m));
	m.kind = STOR_KIND_EXECUTABLE;
	snprintf(m.source, sizeof(m.source), "second");
	sym_elf_info info;
	memset(&info, 0, sizeof(info));
	stor_error err = {0};
	svc_file_write(w->db, &w->id, &m, w->data, strlen(w->data), &info, w->force, NULL, NULL,
		       &w->out, &err);
	atomic_store(&w->done, true);
	return NULL;
}

/* What the store holds for id, as a string ("" when nothing). */
static void held(stor_db *db, const sym_build_id *id, char *out, size_t cap)
{
	stor_blob b;
	out[0] = '\0';
	if (stor_get_file(db, SVC_STORE_KEY(id), &b, NULL, NULL) != STOR_OK)
		return;
	snprintf(out, cap, "%.*s", (int)b.size, (const char *)b.data);
	stor_blob_release(&b);
}

static void run(bool commit)
{
	char dir[64], got[64];
	stor_db *db = open_store(dir);
	CHECK(db != NULL);
	sym_build_id id = id_of(commit ? 1 : 101);
	stor_meta m;
	memset(&m, 0, sizeof(m));
	m.kind = STOR_KIND_EXECUTABLE;
	snprintf(m.source, sizeof(m.source), "first");
	sym_elf_info info;
	memset(&info, 0, sizeof(info));
	svc_file_reservation res;
	svc_file_outcome out;
	stor_error err = {0};
	const char *first = "first file bytes";
	CHECK(svc_file_decide(db, &id, &m, first, strlen(first), &info, false, &res, &out, &err));
	CHECK(out.verdict == SVC_FILE_WRITTEN && out.held == SVC_RANK_NONE);

	/* The same identity waits for the reservation ... */
	writer w = {.db = db, .id = id, .data = "second file, longer bytes", .force = true};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, write_thread, &w) == 0);
	/* ... while every other identity writes (no stripe is held). */
	for (uint8_t b = 0; b < 200; b += 3) {
		writer o = {.db = db, .id = id_of((uint8_t)(b + 40)), .data = "other"};
		write_thread(&o);
		CHECK(o.out.verdict == SVC_FILE_WRITTEN);
	}
	usleep(20000);
	CHECK(!atomic_load(&w.done)); /* a second writer never passes a reservation */
	held(db, &id, got, sizeof(got));
	CHECK(got[0] == '\0');
	if (commit) {
		svc_file_commit(db, &res, first, strlen(first), &out, &err);
		CHECK(out.verdict == SVC_FILE_WRITTEN);
	} else {
		svc_file_release(&res);
	}
	pthread_join(t, NULL);
	CHECK(w.out.verdict == SVC_FILE_WRITTEN);
	/* Decided after the commit: it saw the first file (and forced past it). */
	CHECK(w.out.held == (commit ? SVC_RANK_EXECUTABLE : SVC_RANK_NONE));
	held(db, &id, got, sizeof(got));
	CHECK(!strcmp(got, "second file, longer bytes"));

	/* Not forced, against an equal rank held: kept, nothing reserved. */
	CHECK(!svc_file_decide(db, &id, &m, first, strlen(first), &info, false, &res, &out, &err));
	CHECK(out.verdict == SVC_FILE_KEPT);
	stor_close(db);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

TEST(reservation_then_commit)
{
	run(true);
}

TEST(reservation_then_release)
{
	run(false);
}

TEST_MAIN()
