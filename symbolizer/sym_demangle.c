// SPDX-License-Identifier: Apache-2.0
/*
 * sym_demangle: the libiberty bridge (see sym_demangle_impl.h).
 */
#include "symbolizer/sym_demangle_impl.h"

#include <demangle.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * Whether a _Z name may be legacy Rust: libiberty's own first filter (it ends
 * in E after a "17h" + 16 hex digits hash segment), applied before its
 * character scan of the whole name, so C++ names skip the Rust attempt.
 */
static bool may_be_legacy_rust(const char *name)
{
	size_t n = strlen(name);
	return n > 21 && name[n - 1] == 'E' && memcmp(name + n - 20, "17h", 3) == 0;
}

char *sym_demangle(const char *name)
{
	/* _Z: Itanium C++ and legacy Rust; _R: Rust v0. DMGL_AUTO tries Rust
	 * first, then the Itanium ABI (and nothing else for these prefixes). */
	if (!sym_is_mangled(name))
		return NULL;
	int style = name[1] == 'R' || may_be_legacy_rust(name) ? DMGL_AUTO : DMGL_GNU_V3;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | style);
}
