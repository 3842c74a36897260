/*
 * svc_arena: per-call bump allocator with a cap (svc_arena.h).
 */
#include "service/svc_arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN (64 * 1024)

struct svc_arena_chunk {
	svc_arena_chunk *next;
	size_t size, pos;
	_Alignas(16) unsigned char data[];
};

static void *pb_alloc(void *data, size_t size)
{
	return svc_arena_alloc(data, size);
}

static void pb_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr; /* freed with the arena */
}

void svc_arena_init(svc_arena *a, size_t cap)
{
	a->head = NULL;
	a->used = 0;
	a->cap = cap;
	a->pb.alloc = pb_alloc;
	a->pb.free = pb_free;
	a->pb.allocator_data = a;
}

void svc_arena_deinit(svc_arena *a)
{
	svc_arena_chunk *c = a->head;
	while (c) {
		svc_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used = 0;
}

void *svc_arena_alloc(svc_arena *a, size_t size)
{
	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	svc_arena_chunk *c = a->head;
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

void *svc_arena_calloc(svc_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = svc_arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

char *svc_arena_strdup(svc_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = svc_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}
