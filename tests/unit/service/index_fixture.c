/*
 * index_fixture: fixtures indexed in memory (index_fixture.h).
 */
#include "index_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sym_index *index_fixture_load(const char *name, void **blob, size_t *size)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", TEST_FIXTURE_DIR, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *data = n > 0 ? malloc((size_t)n) : NULL;
	size_t got = data ? fread(data, 1, (size_t)n, f) : 0;
	fclose(f);
	sym_index *idx = NULL;
	sym_build_options o = {0};
	sym_error err;
	if (!data || got != (size_t)n ||
	    sym_index_build(data, (size_t)n, &o, blob, size, &err) != SYM_OK)
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
