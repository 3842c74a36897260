// SPDX-License-Identifier: Apache-2.0
/*
 * src_xz: the xz stream index and block-wise decoding (src_xz.h), on liblzma.
 * Every offset read from the file is checked against the region before use.
 */
#include "source/src_xz.h"

#include <errno.h>
#include <lzma.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/src_pread.h"

#define XZ_HDR LZMA_STREAM_HEADER_SIZE
#define XZ_CHUNK (256u << 10)

/* Drops the stream padding (zero 4-byte words) at the end; *end shrinks. */
static sym_errc skip_padding(int fd, uint64_t off, uint64_t *end, sym_error *err)
{
	uint8_t w[4];
	while (*end >= off + 2 * XZ_HDR + 4) {
		sym_errc rc = src_pread(fd, w, 4, *end - 4, err);
		if (rc)
			return rc;
		if (w[0] | w[1] | w[2] | w[3])
			return SYM_OK;
		*end -= 4;
	}
	return sym_error_set(err, SYM_E_INVALID, "xz: stream too short");
}

/* Decodes the index of backward_size bytes that ends at idx_end. */
static sym_errc read_index(int fd, uint64_t idx_start, uint64_t len, lzma_index **ix,
			   sym_error *err)
{
	uint8_t *buf = malloc(len);
	if (!buf)
		return sym_error_set(err, SYM_E_NOMEM, "xz: out of memory for the index");
	sym_errc rc = src_pread(fd, buf, len, idx_start, err);
	if (rc) {
		free(buf);
		return rc;
	}
	uint64_t memlimit = SRC_XZ_INDEX_MEMLIMIT;
	size_t pos = 0;
	lzma_ret r = lzma_index_buffer_decode(ix, &memlimit, NULL, buf, &pos, len);
	free(buf);
	if (r == LZMA_MEMLIMIT_ERROR)
		return sym_error_set(err, SYM_E_TOO_LARGE, "xz: index too large");
	if (r != LZMA_OK || pos != len)
		return sym_error_set(err, SYM_E_INVALID, "xz: bad index (lzma error %d)", (int)r);
	return SYM_OK;
}

/* Copies the blocks of ix into out, checking each one lies inside the stream. */
static sym_errc copy_blocks(lzma_index *ix, uint64_t stream_len, src_xz_index *out,
			    sym_error *err)
{
	lzma_vli n = lzma_index_block_count(ix);
	if (n > SRC_XZ_MAX_BLOCKS)
		return sym_error_set(err, SYM_E_TOO_LARGE, "xz: %llu blocks, over the cap",
				     (unsigned long long)n);
	out->blocks = calloc(n ? n : 1, sizeof(*out->blocks));
	if (!out->blocks)
		return sym_error_set(err, SYM_E_NOMEM, "xz: out of memory");
	lzma_index_iter it;
	lzma_index_iter_init(&it, ix);
	uint64_t upos = 0;
	while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK)) {
		src_xz_block *b = &out->blocks[out->n_blocks];
		b->coff = it.block.compressed_stream_offset;
		b->csize = it.block.total_size;
		b->uoff = it.block.uncompressed_stream_offset;
		b->usize = it.block.uncompressed_size;
		if (b->coff < XZ_HDR || b->csize > stream_len || b->coff > stream_len - b->csize ||
		    b->uoff != upos)
			return sym_error_set(err, SYM_E_INVALID,
					     "xz: index block %zu points outside the stream",
					     out->n_blocks);
		upos += b->usize;
		out->n_blocks++;
	}
	out->usize = upos;
	return SYM_OK;
}

sym_errc src_xz_index_read(int fd, uint64_t off, uint64_t size, src_xz_index *out,
			   sym_error *err)
{
	memset(out, 0, sizeof(*out));
	uint64_t end = off + size;
	if (size < 2 * XZ_HDR || end < off)
		return sym_error_set(err, SYM_E_INVALID, "xz: stream too short");
	sym_errc rc = skip_padding(fd, off, &end, err);
	if (rc)
		return rc;
	uint8_t hdr[XZ_HDR], ftr[XZ_HDR];
	lzma_stream_flags hf, ff;
	if ((rc = src_pread(fd, hdr, XZ_HDR, off, err)) ||
	    (rc = src_pread(fd, ftr, XZ_HDR, end - XZ_HDR, err)))
		return rc;
	if (lzma_stream_header_decode(&hf, hdr) != LZMA_OK)
		return sym_error_set(err, SYM_E_INVALID, "xz: bad stream header");
	if (lzma_stream_footer_decode(&ff, ftr) != LZMA_OK)
		return sym_error_set(err, SYM_E_INVALID, "xz: bad stream footer");
	if (lzma_stream_flags_compare(&hf, &ff) != LZMA_OK)
		return sym_error_set(err, SYM_E_INVALID, "xz: header and footer disagree");
	uint64_t stream_len = end - off;
	if (ff.backward_size > stream_len - 2 * XZ_HDR)
		return sym_error_set(err, SYM_E_INVALID, "xz: index points outside the file");
	lzma_index *ix = NULL;
	if ((rc = read_index(fd, end - XZ_HDR - ff.backward_size, ff.backward_size, &ix, err)))
		return rc;
	/* One stream only: the index must account for every byte before it. */
	if (lzma_index_total_size(ix) + ff.backward_size + 2 * XZ_HDR != stream_len) {
		lzma_index_end(ix, NULL);
		return sym_error_set(err, SYM_E_UNSUPPORTED,
				     "xz: several streams, or an index that lies about sizes");
	}
	out->check = (uint32_t)ff.check;
	rc = copy_blocks(ix, stream_len, out, err);
	lzma_index_end(ix, NULL);
	if (rc)
		src_xz_index_free(out);
	return rc;
}

void src_xz_index_free(src_xz_index *ix)
{
	if (!ix)
		return;
	free(ix->blocks);
	memset(ix, 0, sizeof(*ix));
}

size_t src_xz_find_block(const src_xz_index *ix, uint64_t upos)
{
	size_t lo = 0, hi = ix->n_blocks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const src_xz_block *b = &ix->blocks[mid];
		if (upos < b->uoff)
			hi = mid;
		else if (upos >= b->uoff + b->usize)
			lo = mid + 1;
		else
			return mid;
	}
	return ix->n_blocks;
}

/* Reads and decodes the block header at the block's start into *block. */
static sym_errc open_block(int fd, uint64_t at, uint32_t check, const src_xz_block *b,
			   lzma_block *block, lzma_filter *filters, uint8_t *hbuf, sym_error *err)
{
	sym_errc rc = src_pread(fd, hbuf, 1, at, err);
	if (rc)
		return rc;
	memset(block, 0, sizeof(*block));
	block->version = 1;
	block->check = (lzma_check)check;
	block->filters = filters;
	block->header_size = lzma_block_header_size_decode(hbuf[0]);
	if (hbuf[0] == 0 || block->header_size > b->csize)
		return sym_error_set(err, SYM_E_INVALID, "xz: bad block header");
	if ((rc = src_pread(fd, hbuf, block->header_size, at, err)))
		return rc;
	if (lzma_block_header_decode(block, NULL, hbuf) != LZMA_OK)
		return sym_error_set(err, SYM_E_INVALID, "xz: bad block header");
	/* The header's size, when present, must agree with the index. */
	if (block->uncompressed_size != LZMA_VLI_UNKNOWN && block->uncompressed_size != b->usize) {
		lzma_filters_free(filters, NULL);
		return sym_error_set(err, SYM_E_INVALID, "xz: block size disagrees with the index");
	}
	return SYM_OK;
}

/* Feeds the decoder its next input bytes when it has none. */
static sym_errc feed(int fd, lzma_stream *s, uint8_t *in, uint64_t *in_pos, uint64_t *in_left,
		     sym_error *err)
{
	if (s->avail_in || !*in_left)
		return SYM_OK;
	size_t n = *in_left < XZ_CHUNK ? (size_t)*in_left : XZ_CHUNK;
	sym_errc rc = src_pread(fd, in, n, *in_pos, err);
	if (rc)
		return rc;
	s->next_in = in;
	s->avail_in = n;
	*in_pos += n;
	*in_left -= n;
	return SYM_OK;
}

/* A block decoded to its last byte: its end (padding, check) is read too,
 * so that a corrupt block whose bytes still decode fails its check. */
static sym_errc finish_block(int fd, lzma_stream *s, uint8_t *in, uint64_t *in_pos,
			     uint64_t *in_left, sym_error *err)
{
	for (;;) {
		sym_errc rc = feed(fd, s, in, in_pos, in_left, err);
		if (rc)
			return rc;
		uint8_t extra[16];
		s->next_out = extra;
		s->avail_out = sizeof(extra);
		lzma_ret r = lzma_code(s, *in_left ? LZMA_RUN : LZMA_FINISH);
		if (s->avail_out != sizeof(extra))
			return sym_error_set(err, SYM_E_INVALID, "xz: block longer than its index says");
		if (r == LZMA_STREAM_END)
			return SYM_OK;
		if (r != LZMA_OK)
			return sym_error_set(err, SYM_E_INVALID, "xz: corrupt block (lzma error %d%s)",
					     (int)r, r == LZMA_DATA_ERROR ? ", check failed" : "");
		if (s->avail_in == 0 && *in_left == 0)
			return sym_error_set(err, SYM_E_INVALID, "xz: block truncated");
	}
}

/* Runs the decoder over the block's bytes until skip + len bytes are out;
 * to the block's end (its check verified) when that is its last byte. */
static sym_errc run_block(int fd, uint64_t at, lzma_stream *s, const src_xz_block *b,
			  uint64_t skip, uint8_t *out, size_t len, uint8_t *in, sym_error *err)
{
	uint8_t drop[64 << 10];
	uint64_t in_left = b->csize, in_pos = at, skipped = 0;
	size_t written = 0;
	bool ended = false;
	while (written < len) {
		sym_errc rc = feed(fd, s, in, &in_pos, &in_left, err);
		if (rc)
			return rc;
		if (skipped < skip) {
			uint64_t want = skip - skipped;
			s->next_out = drop;
			s->avail_out = want < sizeof(drop) ? (size_t)want : sizeof(drop);
		} else {
			s->next_out = out + written;
			s->avail_out = len - written;
		}
		size_t before = s->avail_out;
		lzma_ret r = lzma_code(s, in_left ? LZMA_RUN : LZMA_FINISH);
		size_t got = before - s->avail_out;
		if (skipped < skip)
			skipped += got;
		else
			written += got;
		if (r == LZMA_STREAM_END && written < len)
			return sym_error_set(err, SYM_E_INVALID, "xz: block shorter than its index says");
		ended = r == LZMA_STREAM_END;
		if (r != LZMA_OK && r != LZMA_STREAM_END)
			return sym_error_set(err, SYM_E_INVALID, "xz: corrupt block (lzma error %d)",
					     (int)r);
		if (got == 0 && s->avail_in == 0 && in_left == 0)
			return sym_error_set(err, SYM_E_INVALID, "xz: block truncated");
	}
	if (!ended && skip + len == b->usize)
		return finish_block(fd, s, in, &in_pos, &in_left, err);
	return SYM_OK;
}

sym_errc src_xz_decode_block(int fd, uint64_t stream_off, uint32_t check, const src_xz_block *b,
			     uint64_t skip, uint8_t *out, size_t len, sym_error *err)
{
	if (skip > b->usize || len > b->usize - skip)
		return sym_error_set(err, SYM_E_INVALID, "xz: range outside the block");
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	uint8_t hbuf[LZMA_BLOCK_HEADER_SIZE_MAX];
	lzma_block block;
	uint64_t at = stream_off + b->coff;
	sym_errc rc = open_block(fd, at, check, b, &block, filters, hbuf, err);
	if (rc)
		return rc;
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret r = lzma_block_decoder(&s, &block);
	lzma_filters_free(filters, NULL);
	if (r != LZMA_OK) {
		lzma_end(&s);
		return sym_error_set(err, SYM_E_INVALID, "xz: unsupported block (lzma error %d)",
				     (int)r);
	}
	uint8_t *in = malloc(XZ_CHUNK);
	if (!in) {
		lzma_end(&s);
		return sym_error_set(err, SYM_E_NOMEM, "xz: out of memory");
	}
	/* The block's input bytes follow its header. */
	src_xz_block body = *b;
	body.csize = b->csize - block.header_size;
	rc = run_block(fd, at + block.header_size, &s, &body, skip, out, len, in, err);
	free(in);
	lzma_end(&s);
	return rc;
}

typedef struct range_job {
	int fd;
	uint64_t stream_off;
	const src_xz_index *ix;
	size_t first, last, step, start; /* blocks start, start+step, ... of first..last */
	uint64_t upos;
	uint8_t *out;
	size_t len;
	sym_error err;
	sym_errc rc;
} range_job;

/* Decodes every step-th overlapping block from job->start. */
static void *range_run(void *arg)
{
	range_job *j = arg;
	for (size_t i = j->start; i <= j->last && j->rc == SYM_OK; i += j->step) {
		const src_xz_block *b = &j->ix->blocks[i];
		uint64_t lo = j->upos > b->uoff ? j->upos : b->uoff;
		uint64_t hi = b->uoff + b->usize;
		if (hi > j->upos + j->len)
			hi = j->upos + j->len;
		j->rc = src_xz_decode_block(j->fd, j->stream_off, j->ix->check, b, lo - b->uoff,
					    j->out + (lo - j->upos), (size_t)(hi - lo), &j->err);
	}
	return NULL;
}

sym_errc src_xz_decode_range(int fd, uint64_t stream_off, const src_xz_index *ix, uint64_t upos,
			     uint8_t *out, size_t len, sym_error *err)
{
	if (len == 0)
		return SYM_OK;
	if (upos > ix->usize || len > ix->usize - upos)
		return sym_error_set(err, SYM_E_INVALID, "xz: range past the end of the stream");
	size_t first = src_xz_find_block(ix, upos);
	size_t last = src_xz_find_block(ix, upos + len - 1);
	if (first >= ix->n_blocks || last >= ix->n_blocks)
		return sym_error_set(err, SYM_E_INVALID, "xz: range outside the index");
	range_job a = {fd, stream_off, ix, first, last, 1, first, upos, out, len, {0}, SYM_OK};
	if (first == last) {
		range_run(&a);
	} else {
		range_job b = a;
		a.step = b.step = 2;
		b.start = first + 1;
		pthread_t t;
		bool threaded = pthread_create(&t, NULL, range_run, &b) == 0;
		if (!threaded)
			a.step = 1;
		range_run(&a);
		if (threaded) {
			pthread_join(t, NULL);
			if (a.rc == SYM_OK && b.rc != SYM_OK) {
				a.rc = b.rc;
				a.err = b.err;
			}
		}
	}
	if (a.rc != SYM_OK && err)
		*err = a.err;
	return a.rc;
}
