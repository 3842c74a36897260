/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_vec: a growable array of fixed-size elements with a hard cap on its
 * element count, used for everything the index builder accumulates from
 * untrusted input. Growth doubles; past the cap base_vec_push returns NULL.
 */
#ifndef BASE_VEC_H
#define BASE_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct base_vec {
	void *data;
	size_t len;
	size_t cap;
	size_t elem;
	size_t max;   /* most elements ever held */
} base_vec;

static inline void base_vec_init(base_vec *v, size_t elem, size_t max)
{
	*v = (base_vec){.elem = elem, .max = max};
}

static inline void base_vec_deinit(base_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

/* Makes room for n more elements; 0 on success, -1 past the cap or out of memory. */
static inline int base_vec_reserve(base_vec *v, size_t n)
{
	if (v->len + n <= v->cap)
		return 0;
	if (n > v->max || v->len > v->max - n)
		return -1;
	size_t cap = v->cap ? v->cap : 64;
	while (cap < v->len + n)
		cap *= 2;
	if (cap > v->max)
		cap = v->max;
	void *p = realloc(v->data, cap * v->elem);
	if (!p)
		return -1;
	v->data = p;
	v->cap = cap;
	return 0;
}

/* A pointer to a new element at the end (uninitialized), or NULL. */
static inline void *base_vec_push(base_vec *v)
{
	if (v->len == v->cap && base_vec_reserve(v, 1))
		return NULL;
	return (char *)v->data + v->elem * v->len++;
}

#define BASE_VEC_AT(v, type, i) (((type *)(v)->data)[i])

#endif
