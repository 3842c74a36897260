/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_pread: reading exactly len bytes at an offset of a file (pread, again
 * on EINTR and short reads), for the package readers (src_package_*, src_xz).
 */
#ifndef SRC_PREAD_H
#define SRC_PREAD_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_error.h"

/* SYM_E_IO on a read error, SYM_E_INVALID when the file ends first ("truncated"). */
sym_errc src_pread(int fd, void *buf, size_t len, uint64_t off, sym_error *err);

#endif
