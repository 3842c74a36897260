/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_vec: a growable array of fixed-size elements with a hard cap on its
 * element count, used for everything the index builder accumulates from
 * untrusted input. Growth doubles; past the cap base_vec_push returns NULL.
 *
 * The one growable array of the tree: no other file grows an array with
 * realloc (bytes from outside grow in a base_buf). BASE_VEC_DEFINE(name, T)
 * gives a typed vector over it (name_push returns a T *, name_at a T), as
 * drgn's DEFINE_VECTOR does; base_vec_take hands the array to a struct that
 * keeps (pointer, count) fields.
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

/* Appends the elem bytes at item; 0 on success, -1 past the cap or out of memory. */
static inline int base_vec_append(base_vec *v, const void *item)
{
	void *p = base_vec_push(v);
	if (!p)
		return -1;
	for (size_t i = 0; i < v->elem; i++)
		((unsigned char *)p)[i] = ((const unsigned char *)item)[i];
	return 0;
}

/* Hands the array to the caller (malloc'ed, NULL when never grown) and empties v. */
static inline void *base_vec_take(base_vec *v, size_t *len)
{
	void *p = v->data;
	if (len)
		*len = v->len;
	v->data = NULL;
	v->len = v->cap = 0;
	return p;
}

/*
 * A vector over an array that others read as (pointer, count) fields of a
 * struct, allocated with capacity cap (count when unknown): push on it, then
 * store data and len back (base_vec_take).
 */
static inline base_vec base_vec_adopt(void *data, size_t len, size_t cap, size_t elem,
				      size_t max)
{
	return (base_vec){.data = data, .len = len, .cap = cap < len ? len : cap, .elem = elem,
			  .max = max < cap ? cap : max};
}

/*
 * BASE_VEC_DEFINE(name, T): the typed vector `name` of elements T, with
 * name_init(v, max), name_deinit, name_push (a new T * at the end or NULL),
 * name_append(v, T) (0 or -1), name_at(v, i), name_data, name_len and
 * name_take(v, &len) (the T * array, malloc'ed).
 */
/* Generated functions a file may leave unused (clang warns of those in a .c). */
#define BASE_VEC_FN_ static inline __attribute__((unused))

#define BASE_VEC_DEFINE(name, T)                                                            \
	typedef struct name {                                                               \
		base_vec v;                                                                 \
	} name;                                                                             \
	BASE_VEC_FN_ void name##_init(name *t, size_t max)                                  \
	{                                                                                   \
		base_vec_init(&t->v, sizeof(T), max);                                       \
	}                                                                                   \
	BASE_VEC_FN_ void name##_deinit(name *t) { base_vec_deinit(&t->v); }                \
	BASE_VEC_FN_ T *name##_push(name *t) { return (T *)base_vec_push(&t->v); }          \
	BASE_VEC_FN_ int name##_append(name *t, T x)                                        \
	{                                                                                   \
		T *p = name##_push(t);                                                      \
		if (!p)                                                                     \
			return -1;                                                          \
		*p = x;                                                                     \
		return 0;                                                                   \
	}                                                                                   \
	BASE_VEC_FN_ T name##_at(const name *t, size_t i) { return ((T *)t->v.data)[i]; }   \
	BASE_VEC_FN_ T *name##_data(const name *t) { return (T *)t->v.data; }               \
	BASE_VEC_FN_ size_t name##_len(const name *t) { return t->v.len; }                  \
	BASE_VEC_FN_ T *name##_take(name *t, size_t *len)                                   \
	{                                                                                   \
		return (T *)base_vec_take(&t->v, len);                                      \
	}

#endif
