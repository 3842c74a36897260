/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_local_index: the index of a mapping's file built in this process from
 * local files, with no daemon (`symbolctl pprof --debug-dir`, `symbolctl otlp
 * --debug-dir`).
 */
#ifndef SYMBOLCTL_CTL_LOCAL_INDEX_H
#define SYMBOLCTL_CTL_LOCAL_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "service/resolve/svc_index_cache.h"
#include "symbolizer/sym_build_id.h"

/*
 * The file of identity id: for a GNU build ID, DIR/.build-id/xx/rest.debug
 * under each of dirs[0..n_dirs); for a Go build ID or file hash, the dirs'
 * files that have it (read as the daemon reads a --debug-dir); else the file
 * at the mapping's path `file` (may be NULL) when it has that identity, its
 * debug file then found as addr2line -e finds it. Its index built into
 * *blob (malloc'ed) and loaded into entry. False with why (cmd names the
 * command in messages) when there is none or it does not read.
 */
bool ctl_local_index(const char *cmd, const sym_build_id *id, const char *file,
		     const char *const *dirs, size_t n_dirs, svc_index_entry *entry, void **blob,
		     char *why, size_t why_size);

#endif
