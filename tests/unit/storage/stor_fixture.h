/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_fixture: what the store's unit tests share: a temporary store on a
 * fake clock, and files of made-up build IDs put into it.
 */
#ifndef STOR_FIXTURE_H
#define STOR_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/stor_db.h"

static int64_t fake_now = 1000000;
static inline int64_t fake_clock(void) { return fake_now; }

/* A fresh store directory under the build tree's temp dir. */
static inline char *temp_dir(void)
{
	char tmpl[] = "/tmp/stor_test_XXXXXX";
	char *d = mkdtemp(tmpl);
	return d ? strdup(d) : NULL;
}

static inline void rm_rf(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static inline stor_db *open_db(const char *dir, uint64_t max_bytes)
{
	stor_options o;
	stor_options_init(&o);
	o.path = dir;
	o.max_bytes = max_bytes;
	o.sync_writes = false;
	o.now_ms = fake_clock;
	stor_db *db = NULL;
	stor_error err = {0};
	if (stor_open(&o, &db, &err) != STOR_OK)
		fprintf(stderr, "open: %s\n", err.msg);
	return db;
}

static inline void make_id(uint8_t *id, int n)
{
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(n * 31 + i);
}

static inline stor_errc put(stor_db *db, int n, stor_kind kind, size_t size)
{
	uint8_t id[20];
	make_id(id, n);
	char *data = malloc(size ? size : 1);
	for (size_t i = 0; i < size; i++)
		data[i] = (char)(i * 7 + n);
	stor_meta m = {0};
	m.kind = kind;
	snprintf(m.source, sizeof(m.source), "http://127.0.0.1:1/%d", n);
	stor_error err = {0};
	stor_errc rc = stor_put_file(db, id, 20, &m, data, size, &err);
	free(data);
	return rc;
}

#endif
