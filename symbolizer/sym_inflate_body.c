// SPDX-License-Identifier: Apache-2.0
/*
 * sym_inflate_body: one compressed section's body inflated (see
 * sym_inflate_impl.h): zlib in place with libdeflate's whole-buffer
 * decompressor, else zlib or zstd streamed into a buffer that grows with the
 * bytes actually produced, never past the claimed size.
 */
#include "symbolizer/sym_inflate_impl.h"

#include <libdeflate.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "base/base_buf.h"

/* A buffer that grows as bytes arrive, never past `limit`. */
static sym_errc grow(uint8_t **buf, size_t *cap, size_t need, uint64_t limit, sym_error *err)
{
	if (need <= *cap)
		return SYM_OK;
	if (need > limit)
		return sym_error_set(err, SYM_E_TOO_LARGE, "inflated data larger than claimed");
	/* The section's (buf, cap) as a capped base_buf: room for need bytes, doubling. */
	base_buf b = {.data = *buf, .cap = *cap,
		      .max = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit};
	bool ok = base_buf_reserve(&b, need);
	*buf = b.data;
	*cap = b.cap;
	if (!ok)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory inflating a section");
	return SYM_OK;
}

/*
 * The next buffer size: the claimed size when it is plausible for the
 * compressed bytes at hand (at most 32 times as large), else growth by half.
 * A hostile claim thus costs no more memory than the data really inflates to.
 */
static size_t first_allocation(const struct inflated *s, size_t cap)
{
	size_t want;
	if (cap == 0 && s->claimed / 32 <= s->src_size + 4096)
		want = (size_t)s->claimed;
	else
		want = s->size + (s->size < (1u << 20) ? (1u << 16) : s->size / 2);
	return want > s->claimed ? (size_t)s->claimed : want;
}

/*
 * A zlib body inflated in place, where its claimed size is its room: one call
 * of libdeflate's whole-buffer decompressor (about twice zlib's speed), which
 * checks the Adler-32 as zlib does. The body must fill its claim exactly.
 */
static sym_errc inflate_zlib_whole(struct inflated *s, sym_error *err)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (!d)
		return sym_error_set(err, SYM_E_NOMEM, "zlib: init failed");
	size_t got = 0;
	enum libdeflate_result r = libdeflate_zlib_decompress(d, s->src, s->src_size, s->buf,
							      (size_t)s->claimed, &got);
	libdeflate_free_decompressor(d);
	if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
		return sym_error_set(err, SYM_E_BAD_DWARF, "zlib: section inflates past its claimed size");
	if (r != LIBDEFLATE_SUCCESS)
		return sym_error_set(err, SYM_E_BAD_DWARF, "zlib: corrupt or truncated stream");
	s->size = got;
	if (s->size != s->claimed)
		return sym_error_set(err, SYM_E_BAD_DWARF,
				     "zlib: section inflates to %zu bytes, header claims %llu",
				     s->size, (unsigned long long)s->claimed);
	return SYM_OK;
}

static sym_errc inflate_zlib(struct inflated *s, sym_error *err)
{
	if (s->in_place)
		return inflate_zlib_whole(s, err);
	z_stream zs = {0};
	size_t cap = 0;
	sym_errc rc = SYM_OK;
	if (inflateInit(&zs) != Z_OK)
		return sym_error_set(err, SYM_E_NOMEM, "zlib: init failed");
	zs.next_in = (Bytef *)s->src;
	size_t in_left = s->src_size;
	for (;;) {
		if (zs.avail_in == 0 && in_left) {
			zs.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
			in_left -= zs.avail_in;
		}
		size_t want = first_allocation(s, cap);
		if (s->size == cap) {
			if (cap >= s->claimed) {
				/* Full: only the stream end may follow. */
				uint8_t probe;
				zs.next_out = &probe;
				zs.avail_out = 1;
				int zr = inflate(&zs, Z_NO_FLUSH);
				if (zr == Z_STREAM_END && zs.avail_out == 1)
					break;
				rc = sym_error_set(err, SYM_E_BAD_DWARF,
						   "zlib: section inflates past its claimed size");
				goto out;
			}
			if ((rc = grow(&s->buf, &cap, want, s->claimed, err)))
				goto out;
		}
		size_t room = cap - s->size;
		zs.next_out = s->buf + s->size;
		zs.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
		uInt before = zs.avail_out;
		int zr = inflate(&zs, Z_NO_FLUSH);
		s->size += before - zs.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
			rc = sym_error_set(err, SYM_E_BAD_DWARF, "zlib: truncated stream");
			goto out;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			rc = sym_error_set(err, SYM_E_BAD_DWARF, "zlib: %s",
					   zs.msg ? zs.msg : "corrupt stream");
			goto out;
		}
	}
	if (s->size != s->claimed)
		rc = sym_error_set(err, SYM_E_BAD_DWARF,
				   "zlib: section inflates to %zu bytes, header claims %llu",
				   s->size, (unsigned long long)s->claimed);
out:
	inflateEnd(&zs);
	return rc;
}

static sym_errc inflate_zstd(struct inflated *s, sym_error *err)
{
	ZSTD_DStream *zs = ZSTD_createDStream();
	size_t cap = s->in_place ? (size_t)s->claimed : 0;
	sym_errc rc = SYM_OK;
	if (!zs)
		return sym_error_set(err, SYM_E_NOMEM, "zstd: init failed");
	ZSTD_inBuffer in = {s->src, s->src_size, 0};
	for (;;) {
		if (s->size == cap) {
			if (cap >= s->claimed) {
				uint8_t probe;
				ZSTD_outBuffer o = {&probe, 1, 0};
				size_t zr = ZSTD_decompressStream(zs, &o, &in);
				if (!ZSTD_isError(zr) && zr == 0 && o.pos == 0)
					break;
				rc = sym_error_set(err, SYM_E_BAD_DWARF,
						   "zstd: section inflates past its claimed size");
				goto out;
			}
			size_t want = first_allocation(s, cap);
			if ((rc = grow(&s->buf, &cap, want, s->claimed, err)))
				goto out;
		}
		ZSTD_outBuffer out = {s->buf, cap, s->size};
		size_t zr = ZSTD_decompressStream(zs, &out, &in);
		s->size = out.pos;
		if (ZSTD_isError(zr)) {
			rc = sym_error_set(err, SYM_E_BAD_DWARF, "zstd: %s", ZSTD_getErrorName(zr));
			goto out;
		}
		if (zr == 0 && in.pos == in.size)
			break;
		if (in.pos == in.size && out.pos < out.size) {
			rc = sym_error_set(err, SYM_E_BAD_DWARF, "zstd: truncated stream");
			goto out;
		}
	}
	if (s->size != s->claimed)
		rc = sym_error_set(err, SYM_E_BAD_DWARF,
				   "zstd: section inflates to %zu bytes, header claims %llu",
				   s->size, (unsigned long long)s->claimed);
out:
	ZSTD_freeDStream(zs);
	return rc;
}

sym_errc sym_inflate_body(struct inflated *s)
{
	s->rc = s->method == COMP_ZSTD ? inflate_zstd(s, &s->err) : inflate_zlib(s, &s->err);
	return s->rc;
}
