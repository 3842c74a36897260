/*
 * svc_arena: a bump allocator for the life of one RPC call. The request is
 * unpacked into it (as protobuf-c's allocator) and the response is built in
 * it, so a call frees everything at once. It has a hard cap: past it an
 * allocation fails (NULL), which the caller reports as an error.
 */
#ifndef SVC_ARENA_H
#define SVC_ARENA_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

typedef struct svc_arena_chunk svc_arena_chunk;

typedef struct svc_arena {
	svc_arena_chunk *head;
	size_t used;              /* bytes handed out plus chunk overhead */
	size_t cap;               /* 0: unbounded */
	ProtobufCAllocator pb;    /* protobuf-c view of this arena */
} svc_arena;

void svc_arena_init(svc_arena *a, size_t cap);
void svc_arena_deinit(svc_arena *a);

/* 16-byte aligned; NULL when the cap or memory runs out. */
void *svc_arena_alloc(svc_arena *a, size_t size);
void *svc_arena_calloc(svc_arena *a, size_t n, size_t size);
char *svc_arena_strdup(svc_arena *a, const char *s);

#endif
