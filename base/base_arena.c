// SPDX-License-Identifier: Apache-2.0
/*
 * base_arena: per-call bump allocator with a cap (base_arena.h).
 */
#include "base/base_arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN (64 * 1024)

struct base_arena_chunk {
	base_arena_chunk *next;
	size_t size, pos;
	_Alignas(16) unsigned char data[];
};

void base_arena_init(base_arena *a, size_t cap)
{
	a->head = NULL;
	a->used = 0;
	a->cap = cap;
}

void base_arena_deinit(base_arena *a)
{
	base_arena_chunk *c = a->head;
	while (c) {
		base_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used = 0;
}

void *base_arena_alloc(base_arena *a, size_t size)
{
	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	base_arena_chunk *c = a->head;
	if (!c || c->size - c->pos < size) {
		size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
		if (c && want < c->size * 2 && c->size * 2 <= 16 * 1024 * 1024)
			want = c->size * 2;
		size_t total = sizeof(*c) + want;
		if (a->cap && (a->used + total > a->cap || total > a->cap))
			return NULL;
		c = malloc(total);
		if (!c)
			return NULL;
		c->size = want;
		c->pos = 0;
		c->next = a->head;
		a->head = c;
		a->used += total;
	}
	void *p = c->data + c->pos;
	c->pos += size;
	return p;
}

void *base_arena_calloc(base_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = base_arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

char *base_arena_strdup(base_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = base_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}
