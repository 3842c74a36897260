/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_demangle: C++ and Rust (legacy and v0) demangling through libiberty's
 * cplus_demangle, the demangler binutils and gdb use. No hand-written parsing.
 */
#ifndef SYM_DEMANGLE_IMPL_H
#define SYM_DEMANGLE_IMPL_H

/* A malloc'ed demangled name with parameters, or NULL if `name` is not mangled. */
char *sym_demangle(const char *name);

/* Whether name has a mangling prefix sym_demangle knows (_Z, _R), demangled or not. */
static inline int sym_is_mangled(const char *name)
{
	return name && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

#endif
