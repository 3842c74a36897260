// SPDX-License-Identifier: Apache-2.0
/*
 * base_buf: capped growable byte buffer (base_buf.h).
 */
#include "base/base_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void base_buf_init(base_buf *b, size_t max)
{
	*b = (base_buf){.max = max};
}

void base_buf_deinit(base_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

bool base_buf_reserve(base_buf *b, size_t n)
{
	if (n > b->max || b->len > b->max - n) {
		b->over = true;
		return false;
	}
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
	if (cap > b->max)
		cap = b->max;
	uint8_t *p = realloc(b->data, cap);
	if (!p) {
		b->nomem = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

bool base_buf_ensure(base_buf *b, size_t n)
{
	if (n <= b->cap)
		return true;
	if (n > b->max) {
		b->over = true;
		return false;
	}
	uint8_t *p = realloc(b->data, n);
	if (!p) {
		b->nomem = true;
		return false;
	}
	b->data = p;
	b->cap = n;
	return true;
}

bool base_buf_append(base_buf *b, const void *data, size_t n)
{
	if (n == 0)
		return true;
	if (!base_buf_reserve(b, n))
		return false;
	memcpy(b->data + b->len, data, n);
	b->len += n;
	return true;
}

bool base_buf_printf(base_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !base_buf_reserve(b, (size_t)n + 1))
		return false;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return true;
}

uint8_t *base_buf_take(base_buf *b, size_t *len)
{
	uint8_t *p = b->data;
	*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
