/*
 * sym_demangle: C++ and Rust (legacy and v0) demangling through libiberty's
 * cplus_demangle, the demangler binutils and gdb use. No hand-written parsing.
 */
#ifndef SYM_DEMANGLE_H
#define SYM_DEMANGLE_H

/* A malloc'ed demangled name with parameters, or NULL if `name` is not mangled. */
char *sym_demangle(const char *name);

#endif
