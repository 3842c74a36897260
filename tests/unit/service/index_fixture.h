/* SPDX-License-Identifier: Apache-2.0 */
/*
 * index_fixture: a compiled fixture (tests/fixtures, TEST_FIXTURE_DIR)
 * indexed in memory, and its entry in an index cache, for the service tests.
 */
#ifndef INDEX_FIXTURE_H
#define INDEX_FIXTURE_H

#include <stddef.h>

#include "service/resolve/svc_index_cache.h"
#include "symbolizer/sym_index.h"

/* Builds and loads the index of fixture name; NULL when that fails. */
sym_index *index_fixture_load(const char *name, void **blob, size_t *size);

/* free() for svc_index_cache_put's free_blob. */
void index_fixture_free_blob(void *blob);

/* The fixture's index in cache c under a made-up build ID (byte tag), referenced. */
svc_index_entry *index_fixture_entry(svc_index_cache *c, const char *name, unsigned char tag);

#endif
