/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_identity: a file's identities and the store's alias entries
 * (docs/internals/identities.md). A file is stored under its canonical
 * identity (its GNU build ID, else its file hash); every other identity it
 * has (Go build ID, file hash) is an alias -> canonical entry (stor_alias.h),
 * written wherever the service sees the file (uploads, fetched files), and
 * read by the resolver before anything else, so any identity finds it.
 * Any thread (RocksDB point reads and writes).
 */
#ifndef SVC_IDENTITY_H
#define SVC_IDENTITY_H

#include <stddef.h>

#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

/* The canonical identity of id: id itself for a GNU build ID or when the store
 * has no alias for it, else the identity its alias names. */
void svc_identity_canonical(stor_db *store, const sym_build_id *id, sym_build_id *out);

/* Computes every identity of the file data[0..size) and writes alias entries
 * from each one to canonical (the identity the file is stored under).
 * Returns how many aliases were written; a store error is logged. */
size_t svc_identity_record(stor_db *store, const void *data, size_t size,
			   const sym_build_id *canonical);

#endif
