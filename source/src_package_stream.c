// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_stream: the payload of a package as a libarchive read stream
 * (src_package_impl.h). A multi-block xz payload is decoded here, one whole
 * block at a time into one of two buffers, while a second thread decodes the
 * next block; a skip past the current block costs nothing (libarchive skips
 * the data of members it is not asked to read). An uncompressed payload is
 * read with pread and skipped likewise. Other payloads hand libarchive the
 * compressed bytes and let its filters stream them.
 */
#include "source/src_package_impl.h"

#include <archive.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"

#define CHUNK (1u << 20)
/* Largest xz block decoded whole into memory (two such buffers at most). */
#define MAX_BLOCK_BUF (128ull << 20)

typedef struct slot {
	size_t block;            /* which block it holds (n_blocks: none) */
	base_buf buf;            /* the block's bytes (scratch: len unused) */
	sym_errc rc;
	sym_error err;
} slot;

struct src_pkg_stream {
	int fd;
	const src_pkg_layout *l;
	bool random;
	uint64_t pos;            /* uncompressed (random) or compressed (stream) position */
	uint64_t end;
	slot cur, ahead;         /* ahead: decoded by the thread while cur is read */
	pthread_t thread;
	bool thread_running;
	uint64_t blocks;
	size_t bad;              /* a block whose bytes are corrupt (n_blocks: none) */
	uint8_t *chunk;          /* pread buffer (uncompressed or streamed payloads) */
	sym_error err;
};

static bool slot_fill(src_pkg_stream *s, slot *sl, size_t k)
{
	const src_xz_block *b = &s->l->xz.blocks[k];
	sl->block = s->l->xz.n_blocks;
	if (!base_buf_ensure(&sl->buf, b->usize ? (size_t)b->usize : 1)) {
		sl->rc = sym_error_set(&sl->err, SYM_E_NOMEM, "xz: out of memory for a block");
		return false;
	}
	sl->rc = src_xz_decode_block(s->fd, s->l->payload_off, s->l->xz.check, b, 0, sl->buf.data,
				     (size_t)b->usize, &sl->err);
	if (sl->rc == SYM_OK)
		sl->block = k;
	return sl->rc == SYM_OK;
}

static void *ahead_run(void *arg)
{
	src_pkg_stream *s = arg;
	slot_fill(s, &s->ahead, s->ahead.block);
	return NULL;
}

static void ahead_join(src_pkg_stream *s)
{
	if (s->thread_running) {
		pthread_join(s->thread, NULL);
		s->thread_running = false;
	}
}

/* Makes cur hold block k (the one ahead when it is k), and starts k + 1. */
static bool load_block(src_pkg_stream *s, size_t k)
{
	size_t n = s->l->xz.n_blocks;
	ahead_join(s);
	if (s->ahead.block == k && s->ahead.rc == SYM_OK) {
		slot t = s->cur;
		s->cur = s->ahead;
		s->ahead = t;
		s->ahead.block = n;
	} else {
		if (!slot_fill(s, &s->cur, k)) {
			s->err = s->cur.err;
			if (s->cur.rc == SYM_E_INVALID)
				s->bad = k;
			return false;
		}
		s->blocks++;
	}
	if (k + 1 < n) {
		s->ahead.block = k + 1;
		s->ahead.rc = SYM_OK;
		if (pthread_create(&s->thread, NULL, ahead_run, s) == 0) {
			s->thread_running = true;
			s->blocks++;
		} else {
			s->ahead.block = n;
		}
	}
	return true;
}

static la_ssize_t read_random(struct archive *a, void *arg, const void **buf)
{
	src_pkg_stream *s = arg;
	if (s->pos >= s->end)
		return 0;
	if (s->l->comp == SRC_PKG_COMP_NONE) {
		size_t n = s->end - s->pos < CHUNK ? (size_t)(s->end - s->pos) : CHUNK;
		if (src_pread(s->fd, s->chunk, n, s->l->payload_off + s->pos, &s->err)) {
			archive_set_error(a, EIO, "%s", s->err.msg);
			return -1;
		}
		s->pos += n;
		*buf = s->chunk;
		return (la_ssize_t)n;
	}
	size_t k = src_xz_find_block(&s->l->xz, s->pos);
	if (k >= s->l->xz.n_blocks || (s->cur.block != k && !load_block(s, k))) {
		archive_set_error(a, EIO, "%s", s->err.msg[0] ? s->err.msg : "xz: bad position");
		return -1;
	}
	const src_xz_block *b = &s->l->xz.blocks[k];
	uint64_t in = s->pos - b->uoff;
	*buf = s->cur.buf.data + in;
	s->pos = b->uoff + b->usize;
	return (la_ssize_t)(b->usize - in);
}

static la_int64_t skip_random(struct archive *a, void *arg, la_int64_t request)
{
	(void)a;
	src_pkg_stream *s = arg;
	uint64_t left = s->end - s->pos;
	uint64_t n = request < 0 ? 0 : (uint64_t)request < left ? (uint64_t)request : left;
	s->pos += n;
	return (la_int64_t)n;
}

static la_ssize_t read_compressed(struct archive *a, void *arg, const void **buf)
{
	src_pkg_stream *s = arg;
	if (s->pos >= s->end)
		return 0;
	size_t n = s->end - s->pos < CHUNK ? (size_t)(s->end - s->pos) : CHUNK;
	if (src_pread(s->fd, s->chunk, n, s->l->payload_off + s->pos, &s->err)) {
		archive_set_error(a, EIO, "%s", s->err.msg);
		return -1;
	}
	s->pos += n;
	*buf = s->chunk;
	return (la_ssize_t)n;
}

static bool blocks_fit(const src_pkg_layout *l)
{
	for (size_t i = 0; i < l->xz.n_blocks; i++)
		if (l->xz.blocks[i].usize > MAX_BLOCK_BUF)
			return false;
	return true;
}

sym_errc src_pkg_stream_open(int fd, const src_pkg_layout *l, src_pkg_stream **out,
			     struct archive **a, sym_error *err)
{
	return src_pkg_stream_open_at(fd, l, 0, out, a, err);
}

sym_errc src_pkg_stream_open_at(int fd, const src_pkg_layout *l, uint64_t start,
				src_pkg_stream **out, struct archive **a, sym_error *err)
{
	src_pkg_stream *s = calloc(1, sizeof(*s));
	struct archive *ar = archive_read_new();
	if (!s || !ar || !(s->chunk = malloc(CHUNK))) {
		free(s);
		archive_read_free(ar);
		return sym_error_set(err, SYM_E_NOMEM, "package: out of memory");
	}
	s->fd = fd;
	s->l = l;
	s->cur.block = s->ahead.block = s->bad = l->xz.n_blocks;
	base_buf_init(&s->cur.buf, MAX_BLOCK_BUF);
	base_buf_init(&s->ahead.buf, MAX_BLOCK_BUF);
	s->random = src_pkg_layout_random(l) && blocks_fit(l);
	s->end = s->random ? (l->comp == SRC_PKG_COMP_NONE ? l->payload_size : l->xz.usize)
			   : l->payload_size;
	if (start && (!s->random || start > s->end)) {
		src_pkg_stream_close(s, ar);
		return sym_error_set(err, SYM_E_INVALID, "payload: no random access at %llu",
				     (unsigned long long)start);
	}
	s->pos = start;
	if (l->is_cpio)
		archive_read_support_format_cpio(ar);
	else
		archive_read_support_format_tar(ar);
	if (!s->random)
		archive_read_support_filter_all(ar);
	archive_read_set_callback_data(ar, s);
	archive_read_set_read_callback(ar, s->random ? read_random : read_compressed);
	if (s->random)
		archive_read_set_skip_callback(ar, skip_random);
	if (archive_read_open1(ar) != ARCHIVE_OK) {
		sym_error_set(err, SYM_E_INVALID, "payload: %s",
			      archive_error_string(ar) ? archive_error_string(ar) : "unreadable");
		src_pkg_stream_close(s, ar);
		return SYM_E_INVALID;
	}
	*out = s;
	*a = ar;
	return SYM_OK;
}

uint64_t src_pkg_stream_blocks(const src_pkg_stream *s)
{
	return s ? s->blocks : 0;
}

size_t src_pkg_stream_bad_block(const src_pkg_stream *s)
{
	return s->bad;
}

const sym_error *src_pkg_stream_error(const src_pkg_stream *s)
{
	return &s->err;
}

void src_pkg_stream_close(src_pkg_stream *s, struct archive *a)
{
	archive_read_free(a);
	if (!s)
		return;
	ahead_join(s);
	base_buf_deinit(&s->cur.buf);
	base_buf_deinit(&s->ahead.buf);
	free(s->chunk);
	free(s);
}
