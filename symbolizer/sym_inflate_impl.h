/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_inflate_impl: one compressed section as sym_inflate.c plans it and
 * sym_inflate_body.c inflates it. Internal to symbolizer/.
 */
#ifndef SYM_INFLATE_IMPL_H
#define SYM_INFLATE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

enum { COMP_NONE, COMP_ZLIB, COMP_ZSTD };

struct inflated {
	size_t index;         /* section index */
	const uint8_t *src;   /* compressed stream */
	size_t src_size;
	uint64_t claimed;     /* size the header claims */
	uint64_t align;
	int method;
	bool rename;          /* .zdebug_x -> .debug_x */
	uint8_t *buf;         /* inflated bytes */
	bool in_place;        /* buf is the body's place in the new image, claimed bytes */
	size_t size;
	uint64_t new_offset;
	uint64_t new_name;
	bool drop;            /* not needed: becomes SHT_NOBITS in the new image */
	sym_errc rc;
	sym_error err;
};

/*
 * Inflates s->src into s->buf: in place (s->in_place: s->buf holds s->claimed
 * bytes already) or into a buffer that grows as bytes arrive. The body must
 * come to its claimed size exactly. Sets and returns s->rc (s->err says why).
 */
sym_errc sym_inflate_body(struct inflated *s);

#endif
