/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug_file: finds the separate debug file of a stripped ELF file as gdb,
 * llvm-symbolizer and eu-addr2line do, for symbolctl addr2line: by build ID
 * under each debug dir (DIR/.build-id/xx/rest.debug), then by .gnu_debuglink
 * (next to the file, in its .debug/ subdir, then DIR + the file's absolute
 * directory), a linked file counting only when its CRC-32 matches the link.
 */
#ifndef SYMBOLCTL_DEBUG_FILE_H
#define SYMBOLCTL_DEBUG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd/symbolctl/file_map.h"
#include "symbolizer/sym_elf.h"

#define DEBUG_FILE_PATH_MAX 4096

typedef struct debug_file_found {
	char path[DEBUG_FILE_PATH_MAX];
	const char *how;  /* "build-id" or "debuglink" */
} debug_file_found;

/*
 * Looks for the debug file of exe (whose probe is info) under dirs[0..n_dirs).
 * True and *out filled when one is found; a candidate whose build ID or CRC
 * does not match is skipped (told on stderr when verbose).
 */
bool debug_file_find(const char *exe, const sym_elf_info *info, const char *const *dirs,
		     size_t n_dirs, bool verbose, debug_file_found *out);

/*
 * symbolctl's one way from a FILE on the command line to the file whose DWARF
 * answers (addr2line -e, layout -e): maps exe into *map, or, when it has no
 * DWARF and its debug file is found (debug_file_find; not with no_lookup),
 * that file instead. *used is the path mapped (a dwz link is relative to it;
 * it points into storage that outlives the call). verbose says which file on
 * stderr, as "symbolctl CMD: ...". -1 (told) when exe cannot be mapped.
 */
int debug_file_open(const char *cmd, const char *exe, const char *const *dirs, size_t n_dirs,
		    bool no_lookup, bool verbose, file_map *map, const char **used);

#endif
