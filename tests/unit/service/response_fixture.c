// SPDX-License-Identifier: Apache-2.0
/*
 * response_fixture: a Symbolize call over index fixtures, run through
 * svc_lookup_run (response_fixture.h).
 */
#include "response_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/base_arena.h"

void call_init(struct call *c, svc_index_entry **entries, size_t n_maps, size_t n_locs)
{
	memset(c, 0, sizeof(*c));
	symbolizer__v1__symbolize_request__init(&c->req);
	symbolizer__v1__options__init(&c->opts);
	c->req.options = &c->opts;
	for (size_t i = 0; i < n_maps; i++) {
		symbolizer__v1__mapping__init(&c->pm[i]);
		c->pmp[i] = &c->pm[i];
		c->maps[i].pb = &c->pm[i];
		c->maps[i].entry = entries[i];
		c->maps[i].status = entries[i] ? STATUS(OK) : STATUS(NOT_FOUND);
		if (!entries[i]) {
			snprintf(c->maps[i].error, sizeof(c->maps[i].error), "no source has it");
			c->maps[i].retry_after_ms = 7;
		}
	}
	c->req.n_mappings = n_maps;
	c->req.mappings = c->pmp;
	c->locs = calloc(n_locs ? n_locs : 1, sizeof(*c->locs));
	c->locp = calloc(n_locs ? n_locs : 1, sizeof(*c->locp));
	for (size_t i = 0; i < n_locs; i++) {
		symbolizer__v1__location__init(&c->locs[i]);
		c->locp[i] = &c->locs[i];
	}
	c->req.n_locations = n_locs;
	c->req.locations = c->locp;
}

void call_deinit(struct call *c)
{
	free(c->locs);
	free(c->locp);
}

/* Addresses every 3 bytes through the executable segments of an index, from its first. */
size_t code_addresses(const svc_index_entry *e, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint32_t i = 0; i < e->info.n_loads && n < max; i++) {
		const sym_elf_load *l = &e->info.loads[i];
		if (!(l->flags & 1))
			continue;
		for (uint64_t a = l->vaddr; a < l->vaddr + l->memsz && n < max; a += 3)
			out[n++] = a;
	}
	return n;
}

/* Runs the call; the body's bytes (malloc'd) and size, or NULL when not OK. */
uint8_t *run(struct call *c, svc_response_pool *pool, const svc_rpc_json *json,
	     size_t arena_cap, size_t *size, svc_lookup_result *res)
{
	base_arena arena;
	base_arena_init(&arena, arena_cap);
	svc_lookup_result_init(res);
	struct evbuffer *body = evbuffer_new();
	if (!body)
		return NULL;
	svc_request_locations locs;
	if (svc_request_locations_of(&c->req, &arena, &locs))
		svc_lookup_run(&c->req, &locs, c->maps, &arena, pool, json, body, res);
	else
		svc_error_set(&res->err, SVC_E_NOMEM, "out of memory");
	uint8_t *bytes = NULL;
	if (res->err.code == SVC_OK) {
		*size = evbuffer_get_length(body);
		bytes = malloc(*size ? *size : 1);
		evbuffer_copyout(body, bytes, *size);
	}
	evbuffer_free(body);
	base_arena_deinit(&arena);
	return bytes;
}

uint8_t *take_joined(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
		     size_t *size)
{
	svc_response_piece pieces[SVC_RESPONSE_PIECES];
	size_t n = svc_response_take(r, maps, n_maps, pieces);
	*size = 0;
	for (size_t i = 0; i < n; i++)
		*size += pieces[i].len;
	uint8_t *bytes = n ? malloc(*size) : NULL;
	for (size_t i = 0, at = 0; i < n; at += pieces[i].len, i++) {
		if (bytes)
			memcpy(bytes + at, pieces[i].data, pieces[i].len);
		free(pieces[i].data);
	}
	return bytes;
}
