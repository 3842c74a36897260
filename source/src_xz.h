/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_xz: random access into an xz stream that lies at [off, off + size) of a
 * file (the data.tar.xz of a .deb, the payload of an .rpm), on liblzma.
 *
 * Multi-threaded xz (what dpkg and rpm write) cuts the stream into blocks, each
 * compressed on its own, and ends with an index of their sizes. src_xz_index_read
 * reads that index once (stream footer, index, stream header; every offset and
 * size checked against the region), and src_xz_decode_range decompresses only
 * the blocks that overlap a range of the uncompressed stream, from each block's
 * own header. A stream of one block gives an index of one block: random access
 * then means decoding from the start (callers stream such payloads instead).
 *
 * No state is shared: the functions may run on several threads at once, each
 * with its own descriptor or pread on a shared one.
 */
#ifndef SRC_XZ_H
#define SRC_XZ_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

/* One block: offsets relative to the start of the stream (its first byte). */
typedef struct src_xz_block {
	uint64_t coff;    /* compressed offset of the block header */
	uint64_t csize;   /* total size: header, compressed data, padding, check */
	uint64_t uoff;    /* uncompressed offset */
	uint64_t usize;   /* uncompressed size */
} src_xz_block;

typedef struct src_xz_index {
	uint32_t check;          /* lzma_check of the stream */
	uint64_t usize;          /* uncompressed size of the whole stream */
	size_t n_blocks;
	src_xz_block *blocks;    /* malloc'ed, in stream order */
} src_xz_index;

/* Caps that keep a hostile index small. */
#define SRC_XZ_MAX_BLOCKS (1u << 20)
#define SRC_XZ_INDEX_MEMLIMIT (64u << 20)

/*
 * Reads the index of the single xz stream at [off, off + size) of fd (stream
 * padding allowed, one stream only). SYM_E_UNSUPPORTED for several streams,
 * SYM_E_INVALID when the bytes are not a well-formed xz stream or the index
 * points outside the region (the message says what is wrong), SYM_E_IO on a
 * read error, SYM_E_TOO_LARGE past SRC_XZ_MAX_BLOCKS.
 */
sym_errc src_xz_index_read(int fd, uint64_t off, uint64_t size, src_xz_index *out,
			   sym_error *err);

void src_xz_index_free(src_xz_index *ix);

/* The first block whose uncompressed range holds upos (n_blocks when none). */
size_t src_xz_find_block(const src_xz_index *ix, uint64_t upos);

/*
 * Decompresses block b of the stream at file offset stream_off of fd, writing
 * its uncompressed bytes [skip, skip + len) to out: the bytes before skip are
 * decoded and dropped, and decoding stops once skip + len bytes are out (the
 * rest of the block is not decoded). skip + len <= b->usize.
 */
sym_errc src_xz_decode_block(int fd, uint64_t stream_off, uint32_t check, const src_xz_block *b,
			     uint64_t skip, uint8_t *out, size_t len, sym_error *err);

/*
 * Decompresses [upos, upos + len) of the stream into out, block by block (only
 * the blocks that overlap it; two threads when it spans several blocks).
 */
sym_errc src_xz_decode_range(int fd, uint64_t stream_off, const src_xz_index *ix, uint64_t upos,
			     uint8_t *out, size_t len, sym_error *err);

#endif
