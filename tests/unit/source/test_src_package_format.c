// SPDX-License-Identifier: Apache-2.0
/*
 * test_src_package_format: walks the table of package formats
 * (src_package_formats[]): every row's extensions are recognised by the one
 * query by file name, every row's magic is sniffed back to that row and gets
 * past the container sniffer to the row's open function; a name or magic no
 * row has is refused, by the queries and by the sniffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source/src_package_format.h"
#include "source/src_package_impl.h"
#include "test.h"

/* src_pkg_locate on a file of head (n bytes) padded with zeros. */
static sym_errc locate(const void *head, size_t n, src_pkg_reason *r, sym_error *err)
{
	int fd = memfd_create("pkg", 0);
	uint8_t buf[4096] = {0};
	memcpy(buf, head, n);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return SYM_E_IO;
	src_pkg_layout l = {0};
	sym_errc rc = src_pkg_locate(fd, sizeof(buf), &l, r, err);
	src_pkg_layout_free(&l);
	close(fd);
	return rc;
}

TEST(every_extension_is_recognised)
{
	REQUIRE(src_package_format_count >= 2);
	for (size_t i = 0; i < src_package_format_count; i++) {
		const src_pkg_format *f = &src_package_formats[i];
		REQUIRE(f->name && f->extensions && f->extensions[0] && f->open);
		for (const char *const *e = f->extensions; *e; e++) {
			char path[256];
			snprintf(path, sizeof(path), "/srv/pool/main/x/libx-dbg_1.0_amd64%s", *e);
			CHECK(src_pkg_format_for_path(path) == f);
			snprintf(path, sizeof(path), "y%s", *e);
			CHECK(src_pkg_format_for_path(path) == f);
			/* the extension alone is no file name; a suffix after it is another name */
			CHECK(src_pkg_format_for_path(*e) == NULL);
			snprintf(path, sizeof(path), "y%s.part", *e);
			CHECK(src_pkg_format_for_path(path) == NULL);
		}
	}
}

TEST(every_magic_is_sniffed)
{
	for (size_t i = 0; i < src_package_format_count; i++) {
		const src_pkg_format *f = &src_package_formats[i];
		REQUIRE(f->magic_len > 0 && f->magic_len <= SRC_PKG_MAGIC_MAX);
		CHECK(src_pkg_format_sniff(f->magic, f->magic_len) == f);
		/* one byte short is not enough */
		CHECK(src_pkg_format_sniff(f->magic, f->magic_len - 1) == NULL);
		/* the sniffer hands a file with this magic to the row's open function:
		 * whatever that says of the zeros after it, not "no known magic" */
		src_pkg_reason r = SRC_PKG_OK;
		sym_error err = {0};
		CHECK(locate(f->magic, f->magic_len, &r, &err) != SYM_OK);
		CHECK(strstr(err.msg, "no known magic") == NULL);
	}
}

TEST(unknown_is_refused)
{
	const char *names[] = {"x.tar.gz", "x.debx", "x.dsc", "x.srpm.gz", "deb", "x.DEB", ""};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(src_pkg_format_for_path(names[i]) == NULL);
	const char *head = "PK\x03\x04 a zip, not a package";
	CHECK(src_pkg_format_sniff((const uint8_t *)head, strlen(head)) == NULL);
	src_pkg_reason r = SRC_PKG_OK;
	sym_error err = {0};
	CHECK(locate(head, strlen(head), &r, &err) != SYM_OK);
	CHECK_STREQ(src_pkg_reason_name(r), "bad_container");
	CHECK(strstr(err.msg, "no known magic") != NULL);
}

TEST_MAIN()
