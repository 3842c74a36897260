/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_shim: RocksDB calls its C API lacks (stor_rocks_shim.cc). Not for use
 * outside storage/.
 */
#ifndef STOR_SHIM_H
#define STOR_SHIM_H

#include <rocksdb/c.h>

/* RocksDB's info log goes to base_log (warnings and errors), no LOG file;
 * no preallocated (fallocate) WAL blocks. */
void stor_shim_options(rocksdb_options_t *opts);
/* DB::Resume(): NULL when writes are allowed again, else the error (free()). */
char *stor_shim_resume(rocksdb_t *db);

#endif
