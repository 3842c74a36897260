// SPDX-License-Identifier: Apache-2.0
/*
 * test_src_package: the package reader's caps and helpers on packages built in
 * memory: a .deb of many tiny members (the member cap ends the scan with
 * too_many_members; under the cap every entry is listed), path normalization
 * (`..` refused), the layout's catalogue form (round trip, corrupt forms
 * refused), containers that lie (ar size past the end, not a package), and a
 * large executable member (past the size read whole) without a GNU build ID
 * reported under its file hash with its Go build ID as an alias, the hash's
 * tail read through the stream.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source/src_package.h"
#include "source/src_package_impl.h"
#include "test.h"

/* A ustar header for an empty regular file named name. */
static void tar_header(unsigned char *h, const char *name)
{
	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 124, "00000000000", 12);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

/* A .deb (ar with an uncompressed data.tar) of n empty members, in a memfd. */
static int tiny_deb(int n)
{
	size_t tar_len = (size_t)n * 512 + 1024;
	unsigned char *tar = calloc(1, tar_len);
	for (int i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "./usr/share/t/%d", i);
		tar_header(tar + (size_t)i * 512, name);
	}
	int fd = memfd_create("deb", 0);
	char hdr[61];
	dprintf(fd, "!<arch>\n");
	snprintf(hdr, sizeof(hdr), "%-16s%-12d%-6d%-6d%-8s%-10zu`\n", "data.tar", 0, 0, 0, "100644",
		 tar_len);
	if (write(fd, hdr, 60) != 60 || write(fd, tar, tar_len) != (ssize_t)tar_len)
		fd = -1;
	free(tar);
	return fd;
}

static bool count(void *arg, const src_pkg_member *m)
{
	(void)m;
	++*(int *)arg;
	return true;
}

TEST(member_cap)
{
	int fd = tiny_deb(3000);
	REQUIRE(fd >= 0);
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	src_pkg_layout l;
	src_pkg_scan_stats st;
	src_pkg_reason r;
	sym_error err = {0};
	int n = 0;
	CHECK(src_package_scan(fd, "t", &lim, &l, count, &n, &st, &r, &err) == SYM_OK);
	CHECK_EQ_U(st.entries, 3000);
	CHECK_EQ_U(st.sources, 3000);  /* empty, not ELF: each may be a source */
	CHECK_EQ_U(n, 3000);
	CHECK_EQ_U(st.members, 0);
	CHECK_EQ_U(l.comp, SRC_PKG_COMP_NONE);
	src_pkg_layout_free(&l);
	lim.max_members = 1000;
	CHECK(src_package_scan(fd, "t", &lim, &l, count, &n, &st, &r, &err) != SYM_OK);
	CHECK_STREQ(src_pkg_reason_name(r), "too_many_members");
	CHECK_EQ_U(st.entries, 1001);
	src_pkg_layout_free(&l);
	close(fd);
}

TEST(lying_containers)
{
	int fd = memfd_create("bad", 0);
	dprintf(fd, "!<arch>\n%-16s%-12d%-6d%-6d%-8s%-10d`\n", "data.tar.xz", 0, 0, 0, "100644",
		999999);
	for (int i = 0; i < 100; i++)
		dprintf(fd, "xxxxxxxx");
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	src_pkg_layout l;
	src_pkg_scan_stats st;
	src_pkg_reason r;
	sym_error err = {0};
	int n = 0;
	CHECK(src_package_scan(fd, "t", &lim, &l, count, &n, &st, &r, &err) != SYM_OK);
	CHECK_STREQ(src_pkg_reason_name(r), "truncated");
	src_pkg_layout_free(&l);
	close(fd);
	fd = memfd_create("bad", 0);
	for (int i = 0; i < 100; i++)
		dprintf(fd, "not a package ");
	CHECK(src_package_scan(fd, "t", &lim, &l, count, &n, &st, &r, &err) != SYM_OK);
	CHECK_STREQ(src_pkg_reason_name(r), "bad_container");
	src_pkg_layout_free(&l);
	close(fd);
}

TEST(normalize)
{
	char out[256];
	CHECK(src_pkg_normalize("./usr/lib/x", out, sizeof(out)));
	CHECK_STREQ(out, "usr/lib/x");
	CHECK(src_pkg_normalize("/usr/lib/", out, sizeof(out)));
	CHECK_STREQ(out, "usr/lib");
	CHECK(!src_pkg_normalize("usr/../../etc", out, sizeof(out)));
	CHECK(!src_pkg_normalize("..", out, sizeof(out)));
	CHECK(!src_pkg_normalize("./", out, sizeof(out)));
	CHECK(src_pkg_normalize("usr/..x/y", out, sizeof(out)));
}

TEST(layout_round_trip)
{
	src_xz_block blocks[3] = {{12, 100, 0, 1000}, {112, 50, 1000, 1000}, {162, 10, 2000, 5}};
	src_pkg_layout l = {.payload_off = 132, .payload_size = 300, .comp = SRC_PKG_COMP_XZ,
			    .xz = {.check = 4, .usize = 2005, .n_blocks = 3, .blocks = blocks}};
	size_t len = 0;
	void *enc = src_pkg_layout_encode(&l, &len);
	REQUIRE(enc);
	src_pkg_layout back;
	REQUIRE(src_pkg_layout_decode(enc, len, &back, NULL) == SYM_OK);
	CHECK_EQ_U(back.xz.n_blocks, 3);
	CHECK_EQ_U(back.xz.blocks[2].coff, 162);
	CHECK_EQ_U(back.payload_off, 132);
	CHECK(src_pkg_layout_random(&back));
	CHECK_EQ_U(src_xz_find_block(&back.xz, 1999), 1);
	CHECK_EQ_U(src_xz_find_block(&back.xz, 2005), 3);
	src_pkg_layout_free(&back);
	CHECK(src_pkg_layout_decode(enc, len - 1, &back, NULL) != SYM_OK);
	((unsigned char *)enc)[48 + 32 + 16] ^= 1; /* block 1's uncompressed offset */
	CHECK(src_pkg_layout_decode(enc, len, &back, NULL) != SYM_OK);
	free(enc);
}

/* A ustar header for a regular file of size bytes. */
static void tar_header_size(unsigned char *h, const char *name, uint64_t size)
{
	tar_header(h, name);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

static bool keep_member(void *arg, const src_pkg_member *m)
{
	if (!m->source)
		*(src_pkg_member *)arg = *m;
	return true;
}

TEST(large_go_member_aliases)
{
	/* A 64-bit ELF of 9 MiB + 123 bytes whose only note is Go's build ID. */
	static const char go_id[] = "abc/def/ghi/jkl";
	size_t size = (9u << 20) + 123;
	unsigned char *elf = malloc(size);
	REQUIRE(elf);
	for (size_t i = 0; i < size; i++)
		elf[i] = (unsigned char)(i * 131 + (i >> 12));
	memset(elf, 0, 0x1100);
	memcpy(elf, "\177ELF\2\1\1", 7);
	elf[16] = 2, elf[18] = 62, elf[20] = 1;          /* ET_EXEC, x86-64, version */
	elf[32] = 64;                                    /* e_phoff */
	elf[52] = 64, elf[54] = 56, elf[56] = 1;         /* e_ehsize, e_phentsize, e_phnum */
	unsigned char *ph = elf + 64;
	ph[0] = 4;                                       /* PT_NOTE */
	ph[9] = 0x10;                                    /* p_offset 0x1000 */
	uint32_t desc = sizeof(go_id) - 1, nsz = 12 + 4 + ((desc + 3) & ~3u);
	memcpy(ph + 32, &nsz, 4);                        /* p_filesz */
	uint32_t note[3] = {4, desc, 4};
	memcpy(elf + 0x1000, note, 12);
	memcpy(elf + 0x100c, "Go\0\0", 4);
	memcpy(elf + 0x1010, go_id, desc);
	/* The .deb: ar with an uncompressed data.tar of that one member. */
	size_t body = (size + 511) & ~(size_t)511, tar_len = 512 + body + 1024;
	unsigned char *tar = calloc(1, tar_len);
	REQUIRE(tar);
	tar_header_size(tar, "./usr/bin/goprog", size);
	memcpy(tar + 512, elf, size);
	int fd = memfd_create("deb", 0);
	char hdr[61];
	dprintf(fd, "!<arch>\n");
	snprintf(hdr, sizeof(hdr), "%-16s%-12d%-6d%-6d%-8s%-10zu`\n", "data.tar", 0, 0, 0, "100644",
		 tar_len);
	REQUIRE(write(fd, hdr, 60) == 60 && write(fd, tar, tar_len) == (ssize_t)tar_len);
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	src_pkg_layout l;
	src_pkg_scan_stats st;
	src_pkg_reason r;
	sym_error err = {0};
	src_pkg_member m = {0};
	CHECK(src_package_scan(fd, "t", &lim, &l, keep_member, &m, &st, &r, &err) == SYM_OK);
	CHECK_EQ_U(st.members, 1);
	sym_build_id htl, go;
	sym_htlhash(elf, size, &htl);
	REQUIRE(sym_go_build_id_of_text(go_id, desc, &go));
	CHECK(sym_build_id_equal(&m.id, &htl));
	CHECK_EQ_U(m.kind, SRC_KIND_EXECUTABLE);
	CHECK_EQ_U(m.n_aliases, 1);
	CHECK(sym_build_id_equal(&m.aliases[0], &go));
	CHECK_EQ_U(m.size, size);
	src_pkg_layout_free(&l);
	close(fd);
	free(tar);
	free(elf);
}

/* Go notes that lie: sizes past the segment, a string past the cap, truncation. */
TEST(go_note_hostile)
{
	uint8_t n[64] = {0};
	char text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	uint32_t h[3] = {4, 8, 4};
	memcpy(n, h, 12);
	memcpy(n + 12, "Go\0\0", 4);
	memcpy(n + 16, "abcdefgh", 8);
	CHECK(src_note_go_build_id(n, 24, false, text) && !strcmp(text, "abcdefgh"));
	CHECK(!src_note_go_build_id(n, 23, false, text));          /* truncated */
	h[1] = 0xfffffff0u;                                          /* descsz past the end */
	memcpy(n, h, 12);
	CHECK(!src_note_go_build_id(n, sizeof(n), false, text));
	h[0] = 0xfffffff0u, h[1] = 8;                                /* namesz past the end */
	memcpy(n, h, 12);
	CHECK(!src_note_go_build_id(n, sizeof(n), false, text));
	h[0] = 4, h[1] = 0;                                          /* empty string */
	memcpy(n, h, 12);
	CHECK(!src_note_go_build_id(n, sizeof(n), false, text));
	uint8_t big[12 + 4 + 300] = {0};
	uint32_t hb[3] = {4, 300, 4};                                /* over the 256-byte cap */
	memcpy(big, hb, 12);
	memcpy(big + 12, "Go\0\0", 4);
	memset(big + 16, 'a', 300);
	CHECK(!src_note_go_build_id(big, sizeof(big), false, text));
}

TEST_MAIN()
