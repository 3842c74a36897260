// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_debuginfod_path: the path of a debuginfod request after /buildid/
 * (service/debuginfod/svc_debuginfod_path.c, base/base_path.c): any bytes,
 * percent-decoded and validated. What it accepts must be safe to use: a build
 * ID of lowercase hex; a section name printable without '/'; a source path
 * absolute, without control bytes, and canonical (no "//", no "." or ".." component, no trailing
 * '/'), which canonicalizing again leaves unchanged. The same bytes as a
 * Range header (svc_debuginfod_range.c): a range it accepts lies inside the
 * file, first <= last < size.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_path.h"
#include "service/debuginfod/svc_debuginfod_impl.h"

static void check_source(const char *p)
{
	size_t n = strlen(p);
	assert(p[0] == '/' && n > 1 && n <= SVC_DEBUGINFOD_SOURCE_MAX && p[n - 1] != '/');
	assert(!strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../"));
	for (size_t i = 0; i < n; i++)
		assert((unsigned char)p[i] >= 0x20 && p[i] != 0x7f);
	assert(strcmp(p + n - 2, "/.") != 0 && (n < 3 || strcmp(p + n - 3, "/..") != 0));
	char again[SVC_DEBUGINFOD_SOURCE_MAX + 1];
	assert(base_path_canon(p, again, sizeof(again)) && strcmp(again, p) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	char hex[SYM_BUILD_ID_HEX_MAX];
	char arg[SVC_DEBUGINFOD_SOURCE_MAX + 1];
	sym_build_id id;
	int kind = -1;
	if (svc_debuginfod_parse_path(in, hex, &id, &kind, arg)) {
		size_t h = strlen(hex);
		assert(h >= 2 && h % 2 == 0 && id.len == h / 2);
		for (size_t i = 0; i < h; i++)
			assert((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
		if (kind == K_SECTION) {
			size_t n = strlen(arg);
			assert(n > 0 && n <= SVC_DEBUGINFOD_SECTION_MAX && !strchr(arg, '/'));
		} else if (kind == K_SOURCE) {
			check_source(arg);
		} else {
			assert(kind == K_DEBUGINFO || kind == K_EXECUTABLE || kind == K_STATUS);
		}
	}
	static const uint64_t sizes[] = {0, 1, 1000, UINT64_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t first = 0, last = 0;
		if (svc_dbg_range_parse(in, sizes[i], &first, &last) == SVC_DBG_RANGE_OK)
			assert(first <= last && last < sizes[i]);
	}
	free(in);
	return 0;
}
