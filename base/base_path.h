/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_path: the lexical canonical form of a path, without touching the file
 * system. Source paths are compared in this form: the one a debuginfod client
 * asks for, the ones a file's DWARF names (comp_dir joined with a relative
 * name, "src/../include/x.h"), and the members of a package archive.
 */
#ifndef BASE_PATH_H
#define BASE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes the canonical form of in to out (cap bytes with its NUL): repeated
 * '/' collapse, "." components go, ".." removes the component before it, no
 * trailing '/' (except "/" itself). An absolute path stays absolute, a
 * relative one relative. False when a ".." would climb above the start (or
 * the root), when in is empty, or when the result does not fit.
 */
bool base_path_canon(const char *in, char *out, size_t cap);

#endif
