/*
 * sym_vec: a growable array of fixed-size elements with a hard cap on its
 * element count, used for everything the index builder accumulates from
 * untrusted input. Growth doubles; past the cap sym_vec_push returns NULL.
 */
#ifndef SYM_VEC_H
#define SYM_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct sym_vec {
	void *data;
	size_t len;
	size_t cap;
	size_t elem;
	size_t max;   /* most elements ever held */
} sym_vec;

static inline void sym_vec_init(sym_vec *v, size_t elem, size_t max)
{
	*v = (sym_vec){.elem = elem, .max = max};
}

static inline void sym_vec_deinit(sym_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

/* Makes room for n more elements; 0 on success, -1 past the cap or out of memory. */
static inline int sym_vec_reserve(sym_vec *v, size_t n)
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
static inline void *sym_vec_push(sym_vec *v)
{
	if (v->len == v->cap && sym_vec_reserve(v, 1))
		return NULL;
	return (char *)v->data + v->elem * v->len++;
}

#define SYM_VEC_AT(v, type, i) (((type *)(v)->data)[i])

#endif
