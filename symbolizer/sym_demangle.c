// SPDX-License-Identifier: Apache-2.0
/*
 * sym_demangle: the libiberty bridge (see sym_demangle_impl.h).
 */
#include "symbolizer/sym_demangle_impl.h"

#include <demangle.h>
#include <stddef.h>

char *sym_demangle(const char *name)
{
	/* _Z: Itanium C++ and legacy Rust; _R: Rust v0. DMGL_AUTO tries Rust first. */
	if (!sym_is_mangled(name))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
