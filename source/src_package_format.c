// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_format: the table of package formats and the two queries on it,
 * by file name and by magic (src_package_format.h). The only place the
 * extensions are written.
 */
#include "source/src_package_format.h"

#include <string.h>

#include "source/src_package_impl.h"

static const char *const deb_extensions[] = {".deb", ".ddeb", NULL};
static const char *const rpm_extensions[] = {".rpm", NULL};

const src_pkg_format src_package_formats[] = {
	/* Debian and Ubuntu (.ddeb: Ubuntu's debug symbol packages): an ar archive. */
	{"deb", deb_extensions, "!<arch>\n", 8, src_pkg_open_deb},
	/* RPM: the lead's magic; two headers, then the cpio payload. */
	{"rpm", rpm_extensions, "\xed\xab\xee\xdb", 4, src_pkg_open_rpm},
};

const size_t src_package_format_count =
	sizeof(src_package_formats) / sizeof(src_package_formats[0]);

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n > k && !strcmp(s + n - k, suffix);
}

const src_pkg_format *src_pkg_format_for_path(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < src_package_format_count; i++)
		for (const char *const *e = src_package_formats[i].extensions; *e; e++)
			if (ends_with(path, n, *e))
				return &src_package_formats[i];
	return NULL;
}

const src_pkg_format *src_pkg_format_sniff(const uint8_t *head, size_t n)
{
	for (size_t i = 0; i < src_package_format_count; i++) {
		const src_pkg_format *f = &src_package_formats[i];
		if (n >= f->magic_len && !memcmp(head, f->magic, f->magic_len))
			return f;
	}
	return NULL;
}
