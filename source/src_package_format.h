/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_package_format: the package formats the reader knows, as one data table
 * (src_package_formats[]): for each, its name, the file name extensions that
 * mark it, the magic its first bytes carry, and the open function that finds
 * its compressed payload (src_package_deb.c, src_package_rpm.c).
 *
 * Everyone who asks "is this a package?" reads this table: the catalogue
 * scanner (by file name), the debuginfod route (by the stored file's source
 * path) and the container sniffer (src_pkg_locate, by magic). A new format is
 * one row here plus its open function's file; docs/internals/package-formats.md
 * walks through it. Thread-safe: constant data.
 */
#ifndef SRC_PACKAGE_FORMAT_H
#define SRC_PACKAGE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "source/src_package.h"

/*
 * Finds the payload of a package of this format in fd (file_size bytes, at
 * least SRC_PKG_MIN_SIZE, its magic already checked): fills payload_off,
 * payload_size and is_cpio of *l (comp is sniffed afterwards by the caller).
 */
typedef sym_errc (*src_pkg_open_fn)(int fd, uint64_t file_size, src_pkg_layout *l,
				    src_pkg_reason *reason, sym_error *err);

#define SRC_PKG_MAGIC_MAX 16

typedef struct src_pkg_format {
	const char *name;                /* "deb" */
	const char *const *extensions;   /* NULL-terminated, with the dot */
	uint8_t magic[SRC_PKG_MAGIC_MAX]; /* the file's first magic_len bytes */
	size_t magic_len;
	src_pkg_open_fn open;
} src_pkg_format;

extern const src_pkg_format src_package_formats[];
extern const size_t src_package_format_count;

/* The format one of whose extensions ends path, or NULL: not a package name. */
const src_pkg_format *src_pkg_format_for_path(const char *path);

/* The format whose magic starts head (n bytes read from the file), or NULL. */
const src_pkg_format *src_pkg_format_sniff(const uint8_t *head, size_t n);

#endif
