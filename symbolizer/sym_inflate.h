/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_inflate: turns an ELF image with compressed debug sections into one
 * without, before libdw sees it.
 *
 * Handles SHF_COMPRESSED sections (ELFCOMPRESS_ZLIB and ELFCOMPRESS_ZSTD) and
 * legacy GNU .zdebug_* sections ("ZLIB" + big-endian size + zlib stream, renamed
 * to .debug_*). We do it ourselves because Debian 12's libelf cannot read zstd
 * and would allocate whatever size a section header claims. The new image keeps
 * every original byte at its offset and appends the inflated bodies, a new
 * section-name table when names change, and a new section header table.
 * When every section's claimed size is plausible for its compressed bytes (at
 * most 32 times as large), the image is laid out from the claims and each
 * section inflates straight into its place (pages are touched only as bytes
 * arrive; a body that ends short of or runs past its claim is refused); else
 * each section grows in its own buffer with the bytes actually produced and
 * is copied in after. All sections together stay under a cap.
 */
#ifndef SYM_INFLATE_H
#define SYM_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

/*
 * On success *out is either NULL (nothing compressed: use the input as is) or a
 * malloc'ed image of *out_size bytes. SYM_E_TOO_LARGE past max_bytes.
 */
sym_errc sym_inflate_image(const void *data, size_t size, uint64_t max_bytes,
			   void **out, size_t *out_size, sym_error *err);

/*
 * What an index build of this image will hold, from its section headers alone
 * (no inflation): *debug_bytes, the debug sections the builder reads at their
 * inflated sizes, and *inflated_bytes, the part of them that is compressed in
 * the file (inflated into a new image). Claimed sizes are the file's word, so
 * a liar is caught by sym_inflate_image's cap, not here. SYM_E_BAD_ELF when
 * the headers cannot be read.
 */
sym_errc sym_inflate_estimate(const void *data, size_t size, uint64_t *debug_bytes,
			      uint64_t *inflated_bytes, sym_error *err);

#endif
