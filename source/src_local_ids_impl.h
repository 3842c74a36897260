/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_local_ids: the identities of the files of a local debug directory that
 * are not named by their path (a .build-id path names a GNU build ID only):
 * the Go build ID and the OTel file hash of every ELF file under the
 * directory, computed when the directory is read (on the first lookup of such
 * an identity, and again on a miss at most every SRC_LOCAL_IDS_RESCAN_MS).
 * Internal to source/ (src_local.c). Safe to call from several workers (one
 * mutex; a scan holds it).
 */
#ifndef SRC_LOCAL_IDS_IMPL_H
#define SRC_LOCAL_IDS_IMPL_H

#include "symbolizer/sym_build_id.h"

#define SRC_LOCAL_IDS_RESCAN_MS 30000
#define SRC_LOCAL_IDS_MAX_FILES 200000  /* files looked at in one scan */
#define SRC_LOCAL_IDS_MAX_DEPTH 16

typedef struct src_local_ids src_local_ids;

src_local_ids *src_local_ids_create(const char *dir);
void src_local_ids_destroy(src_local_ids *t);

/* The path (malloc'ed) of the file under the directory that has identity id
 * (a Go build ID or a file hash); NULL when none has it. */
char *src_local_ids_find(src_local_ids *t, const sym_build_id *id);

#endif
