// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: a package file (.deb/.rpm container, xz index, tar/cpio
 * entries) -> src_package_scan with small caps -> src_package_extract of each
 * member it reports, and the layout's round trip through its catalogue form.
 * Whatever the bytes, the reader either refuses with a reason or reads inside
 * the file, within the caps.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source/src_package.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool on_member(void *arg, const src_pkg_member *m)
{
	(void)arg;
	(void)m;
	return true;
}

typedef struct list {
	src_pkg_member m[8];
	char path[8][256];
	int n;
} list;

static bool keep(void *arg, const src_pkg_member *m)
{
	list *l = arg;
	if (l->n < 8 && m->size <= (1u << 20)) {
		l->m[l->n] = *m;
		strncpy(l->path[l->n], m->path, 255);
		l->path[l->n][255] = '\0';
		l->n++;
	}
	return on_member(arg, m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("pkg", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	lim.max_members = 4096;
	lim.max_member_size = 16u << 20;
	lim.max_probe = 1u << 20;
	lim.max_ms = 5000;
	src_pkg_layout l;
	src_pkg_scan_stats st;
	src_pkg_reason reason;
	list found = {.n = 0};
	if (src_package_scan(fd, "fuzz", &lim, &l, keep, &found, &st, &reason, NULL) == SYM_OK) {
		size_t len = 0;
		void *enc = src_pkg_layout_encode(&l, &len);
		src_pkg_layout back;
		if (enc && src_pkg_layout_decode(enc, len, &back, NULL) == SYM_OK)
			src_pkg_layout_free(&back);
		free(enc);
		for (int i = 0; i < found.n; i++) {
			void *out = NULL;
			if (src_package_extract(fd, &l, found.path[i], found.m[i].offset, found.m[i].size,
						&out, NULL) == SYM_OK)
				free(out);
		}
	}
	src_pkg_layout_free(&l);
	close(fd);
	return 0;
}
