/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_arena: a bump allocator for the life of one unit of work (an RPC call
 * unpacks its request into it and builds its response in it), freed at once. It has a hard cap: past it an
 * allocation fails (NULL), which the caller reports as an error.
 */
#ifndef BASE_ARENA_H
#define BASE_ARENA_H

#include <stddef.h>

typedef struct base_arena_chunk base_arena_chunk;

typedef struct base_arena {
	base_arena_chunk *head;
	size_t used;              /* bytes handed out plus chunk overhead */
	size_t cap;               /* 0: unbounded */
} base_arena;

void base_arena_init(base_arena *a, size_t cap);
void base_arena_deinit(base_arena *a);

/* 16-byte aligned; NULL when the cap or memory runs out. */
void *base_arena_alloc(base_arena *a, size_t size);
void *base_arena_calloc(base_arena *a, size_t n, size_t size);
char *base_arena_strdup(base_arena *a, const char *s);

#endif
