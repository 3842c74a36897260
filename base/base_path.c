// SPDX-License-Identifier: Apache-2.0
/*
 * base_path: lexical canonicalization of paths (base_path.h).
 */
#include "base/base_path.h"

#include <string.h>

bool base_path_canon(const char *in, char *out, size_t cap)
{
	if (!in || !*in || cap < 2)
		return false;
	bool abs = in[0] == '/';
	size_t n = 0;   /* bytes of out written (no NUL yet) */
	if (abs)
		out[n++] = '/';
	size_t root = n;  /* out[0..root) is never removed by ".." */
	for (const char *p = in; *p;) {
		while (*p == '/')
			p++;
		size_t seg = strcspn(p, "/");
		if (seg == 0)
			break;
		if (seg == 1 && p[0] == '.') {
			p += seg;
			continue;
		}
		if (seg == 2 && p[0] == '.' && p[1] == '.') {
			if (n == root)
				return false;  /* above the start */
			while (n > root && out[n - 1] != '/')
				n--;
			if (n > root)
				n--;  /* the '/' before the removed component */
			p += seg;
			continue;
		}
		size_t need = (n > root ? 1 : 0) + seg;
		if (n + need + 1 > cap)
			return false;
		if (n > root)
			out[n++] = '/';
		memcpy(out + n, p, seg);
		n += seg;
		p += seg;
	}
	if (n == 0)
		return false;  /* "." or "a/.." */
	out[n] = '\0';
	return true;
}
