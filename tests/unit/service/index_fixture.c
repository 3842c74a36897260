// SPDX-License-Identifier: Apache-2.0
/*
 * index_fixture: fixtures indexed in memory (index_fixture.h).
 */
#include "index_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

sym_index *index_fixture_load(const char *name, void **blob, size_t *size)
{
	size_t n;
	uint8_t *data = test_read_fixture(name, &n);
	sym_index *idx = NULL;
	sym_build_options o = {0};
	sym_error err;
	if (!data || sym_index_build(data, n, &o, blob, size, &err) != SYM_OK)
		idx = NULL;
	else if (sym_index_load(*blob, *size, &idx, &err) != SYM_OK)
		free(*blob), idx = NULL;
	free(data);
	return idx;
}

void index_fixture_free_blob(void *blob)
{
	free(blob);
}

svc_index_entry *index_fixture_entry(svc_index_cache *c, const char *name, unsigned char tag)
{
	void *blob;
	size_t size;
	sym_index *idx = index_fixture_load(name, &blob, &size);
	if (!idx)
		return NULL;
	sym_build_id id;
	memset(&id, 0, sizeof(id));
	id.len = 4;
	id.bytes[0] = tag;
	return svc_index_cache_put(c, &id, blob, size, index_fixture_free_blob, idx);
}
