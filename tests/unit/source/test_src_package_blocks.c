// SPDX-License-Identifier: Apache-2.0
/*
 * test_src_package_blocks: one corrupt xz block of a .deb loses only the
 * members that overlap it (issue 25, item 11). A .deb is built in memory:
 * a tar of 40 members of 20000 bytes each (distinct bytes per member),
 * compressed by liblzma's multi-threaded encoder into 64K blocks, one byte
 * of a middle block's compressed data flipped. The scan succeeds, reports
 * the lost range and why, lists members before and after the bad block, and
 * every member outside the lost range reads back byte-identical. Also the
 * tar header check the resync relies on, and an unbroken package (no loss).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source/src_package.h"
#include "source/src_package_impl.h"
#include "test.h"

#define MEMBERS 40
#define MEMBER_SIZE 20000u

static void tar_header(unsigned char *h, const char *name, unsigned size)
{
	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	snprintf((char *)h + 124, 12, "%011o", size);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static unsigned char member_byte(int m, unsigned i)
{
	uint32_t x = (uint32_t)m * 2654435761u + i * 40503u;
	x ^= x >> 13;
	return (unsigned char)(x * 2246822519u >> 24);
}

static unsigned char *make_tar(size_t *len)
{
	size_t each = 512 + (MEMBER_SIZE + 511) / 512 * 512;
	*len = MEMBERS * each + 1024;
	unsigned char *tar = calloc(1, *len);
	for (int m = 0; m < MEMBERS; m++) {
		unsigned char *h = tar + (size_t)m * each;
		char name[64];
		snprintf(name, sizeof(name), "./usr/share/doc/t/%02d.txt", m);
		tar_header(h, name, MEMBER_SIZE);
		for (unsigned i = 0; i < MEMBER_SIZE; i++)
			h[512 + i] = member_byte(m, i);
	}
	return tar;
}

static unsigned char *xz_blocks(const unsigned char *in, size_t len, size_t *out_len)
{
	lzma_mt mt = {.threads = 1, .block_size = 64 * 1024, .preset = 1,
		      .check = LZMA_CHECK_CRC64};
	lzma_stream s = LZMA_STREAM_INIT;
	if (lzma_stream_encoder_mt(&s, &mt) != LZMA_OK)
		return NULL;
	size_t cap = len + len / 2 + 65536;
	unsigned char *out = malloc(cap);
	s.next_in = in;
	s.avail_in = len;
	s.next_out = out;
	s.avail_out = cap;
	lzma_ret r;
	while ((r = lzma_code(&s, LZMA_FINISH)) == LZMA_OK)
		;
	*out_len = cap - s.avail_out;
	lzma_end(&s);
	if (r != LZMA_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

/* The .deb in a memfd; *payload_off: where data.tar.xz starts. */
static int make_deb(const unsigned char *xz, size_t xz_len, size_t *payload_off)
{
	int fd = memfd_create("deb", 0);
	char hdr[61];
	dprintf(fd, "!<arch>\n");
	snprintf(hdr, sizeof(hdr), "%-16s%-12d%-6d%-6d%-8s%-10zu`\n", "data.tar.xz", 0, 0, 0,
		 "100644", xz_len);
	*payload_off = 8 + 60;
	if (write(fd, hdr, 60) != 60 || write(fd, xz, xz_len) != (ssize_t)xz_len)
		return -1;
	return fd;
}

typedef struct seen {
	int n;
	uint64_t off[MEMBERS], size[MEMBERS];
	char path[MEMBERS][64];
} seen;

static bool on_member(void *arg, const src_pkg_member *m)
{
	seen *s = arg;
	if (s->n < MEMBERS) {
		s->off[s->n] = m->offset;
		s->size[s->n] = m->size;
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", m->path);
		s->n++;
	}
	return true;
}

static int scan(int fd, seen *s, src_pkg_layout *l, src_pkg_scan_stats *st, sym_error *err)
{
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	src_pkg_reason r;
	memset(s, 0, sizeof(*s));
	return src_package_scan(fd, "t.deb", &lim, l, on_member, s, st, &r, err);
}

/* Members read back whole and compared; returns how many were. */
static int read_back(int fd, const seen *s, const src_pkg_layout *l, const src_pkg_scan_stats *st)
{
	int ok = 0;
	for (int i = 0; i < s->n; i++) {
		if (src_pkg_scan_lost(st, s->off[i], s->size[i]))
			continue;
		int m = atoi(s->path[i] + strlen("usr/share/doc/t/"));
		void *data = NULL;
		sym_error err = {0};
		CHECK(src_package_extract(fd, l, s->path[i], s->off[i], s->size[i], &data, &err) ==
		      SYM_OK);
		bool same = data && s->size[i] == MEMBER_SIZE;
		for (unsigned k = 0; same && k < MEMBER_SIZE; k++)
			same = ((unsigned char *)data)[k] == member_byte(m, k);
		CHECK(same);
		ok += same;
		free(data);
	}
	return ok;
}

TEST(corrupt_block_loses_only_its_members)
{
	size_t tar_len, xz_len, off;
	unsigned char *tar = make_tar(&tar_len);
	unsigned char *xz = xz_blocks(tar, tar_len, &xz_len);
	REQUIRE(xz);
	int fd = make_deb(xz, xz_len, &off);
	REQUIRE(fd >= 0);
	seen s;
	src_pkg_layout l;
	src_pkg_scan_stats st;
	sym_error err = {0};
	/* Unbroken: every member, nothing lost. */
	REQUIRE(scan(fd, &s, &l, &st, &err) == SYM_OK);
	CHECK_EQ_U(s.n, MEMBERS);
	CHECK_EQ_U(st.n_lost, 0);
	REQUIRE(l.xz.n_blocks >= 8);
	size_t bad = l.xz.n_blocks / 2;
	const src_xz_block b = l.xz.blocks[bad];
	CHECK_EQ_U(read_back(fd, &s, &l, &st), MEMBERS);
	src_pkg_layout_free(&l);
	/* One byte flipped in the middle of a middle block's data. */
	unsigned char c;
	REQUIRE(pread(fd, &c, 1, (off_t)(off + b.coff + b.csize / 2)) == 1);
	c ^= 0x55;
	REQUIRE(pwrite(fd, &c, 1, (off_t)(off + b.coff + b.csize / 2)) == 1);
	CHECK(scan(fd, &s, &l, &st, &err) == SYM_OK);
	CHECK_EQ_U(st.n_lost, 1);
	CHECK_EQ_U(st.lost[0].off, b.uoff);
	CHECK_EQ_U(st.lost[0].end, b.uoff + b.usize);
	CHECK(strstr(st.damage, "xz block") != NULL);
	CHECK(strstr(st.damage, "corrupt") != NULL || strstr(st.damage, "check") != NULL);
	int lost = 0, after = 0;
	for (int i = 0; i < s.n; i++) {
		lost += src_pkg_scan_lost(&st, s.off[i], s.size[i]);
		after += s.off[i] >= b.uoff + b.usize;
	}
	/* The members wholly in other blocks are all there; a 64K block
	 * holds at most 4 members' bytes. */
	int gone = MEMBERS - (s.n - lost);
	CHECK(gone >= 1 && gone <= 5);
	CHECK(after > 0);
	CHECK_EQ_U(read_back(fd, &s, &l, &st), (uint64_t)(s.n - lost));
	src_pkg_layout_free(&l);
	close(fd);
	free(xz);
	free(tar);
}

TEST(tar_header_check)
{
	unsigned char h[512];
	tar_header(h, "./usr/bin/x", 12);
	CHECK(src_tar_header_ok(h));
	h[5] ^= 1;  /* the name changed, the checksum not */
	CHECK(!src_tar_header_ok(h));
	tar_header(h, "./usr/bin/x", 12);
	memcpy(h + 257, "ustaz", 5);
	CHECK(!src_tar_header_ok(h));
	memset(h, 0, sizeof(h));
	CHECK(!src_tar_header_ok(h));
}

TEST_MAIN()
