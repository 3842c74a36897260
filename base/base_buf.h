/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_buf: a growable byte buffer with a hard cap, for bytes that arrive
 * from outside (HTTP bodies, upstream downloads) and for text we assemble
 * (the metrics exposition), and for scratch space (base_buf_ensure).
 * Appending past the cap fails and sets `over`, so a peer can never make us
 * hold more than the cap.
 */
#ifndef BASE_BUF_H
#define BASE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct base_buf {
	uint8_t *data;
	size_t len;
	size_t cap;      /* allocated */
	size_t max;      /* hard cap on len (SIZE_MAX: none) */
	bool over;       /* an append was refused: it would have passed max */
	bool nomem;      /* an append was refused: out of memory */
} base_buf;

/* An empty buffer that never holds more than max bytes. */
void base_buf_init(base_buf *b, size_t max);
void base_buf_deinit(base_buf *b);

/* Room for n more bytes; false (over or nomem set) when it cannot be had. */
bool base_buf_reserve(base_buf *b, size_t n);
bool base_buf_append(base_buf *b, const void *data, size_t n);
/* Makes the allocation at least n bytes, exactly n when it grows (len is
 * untouched): a scratch buffer sized to its largest use. false past max. */
bool base_buf_ensure(base_buf *b, size_t n);
bool base_buf_printf(base_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hands the bytes to the caller (malloc'ed, NULL when empty) and empties b. */
uint8_t *base_buf_take(base_buf *b, size_t *len);

#endif
