/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_goname: Go function names as the Go runtime and pprof print them. A
 * generic instantiation's type arguments, as a Go unit's DWARF and newer
 * pclntabs spell them (main.Map[go.shape.int_0,go.shape.string_1]), print as
 * [...] (runtime/symtab.go's funcNamePiecesForPrint: from the first '[' to
 * the last ']'); everything else (main.(*T).Method, main.f.func1) is printed
 * as it is. Go names are never given to the C++/Rust demangler.
 */
#ifndef SYM_GONAME_IMPL_H
#define SYM_GONAME_IMPL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes the printed form of name into buf (cap bytes, NUL-terminated) and
 * returns true when it differs from name; false (buf untouched) otherwise.
 */
bool sym_goname_print(const char *name, char *buf, size_t cap);

#endif
