/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_catalog: the catalogue of package archives in the store ("catalog"
 * column family): which build IDs the packages under --package-dir hold, and
 * where.
 *
 *   build ID + kind -> (package path, member path, offset and size of the
 *                       member in the uncompressed payload)
 *   member path + package path -> (offset and size of the member): a source
 *                       file the package holds (a member that is not ELF)
 *   package path    -> its identity (size, mtime, inode), scan status and
 *                      error, the payload layout blob (opaque here: the xz
 *                      block index, see source/src_package.h), and the keys of
 *                      the entries it wrote.
 *
 * stor_cat_put_package replaces everything of one package in one write batch
 * (entries it no longer has are dropped); stor_cat_delete_package drops a
 * package and its entries. An entry another package rewrote since is left to
 * that package. Catalogue entries are not counted in the store's size bound
 * (they are small). One writer at a time (the package scanner); reads from
 * any thread.
 */
#ifndef STOR_CATALOG_H
#define STOR_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/stor_db.h"

#define STOR_CAT_PATH_MAX 1024   /* bytes of a package or member path, NUL included */

typedef struct stor_cat_entry {
	uint8_t id[STOR_ID_MAX];
	uint8_t id_len;
	stor_kind kind;          /* DEBUGINFO or EXECUTABLE */
	uint64_t offset;         /* in the uncompressed payload */
	uint64_t size;
	char package[STOR_CAT_PATH_MAX];
	char member[STOR_CAT_PATH_MAX];
} stor_cat_entry;

/* A source file of a package, for stor_cat_put_package. */
typedef struct stor_cat_source {
	const char *member;      /* normalized member path: no leading "./" or "/" */
	uint64_t offset;         /* in the uncompressed payload */
	uint64_t size;
} stor_cat_source;

typedef struct stor_cat_package {
	uint64_t size;           /* identity: a change in any of them means rescan */
	int64_t mtime_ns;
	uint64_t inode;
	uint32_t members;        /* entries it holds */
	bool failed;             /* the scan failed: error says why, no entries */
	char error[STOR_ERROR_MAX];
} stor_cat_package;

/* Replaces the package's record, entries and sources (entries[i].package is
 * ignored: path is used). layout may be NULL. */
stor_errc stor_cat_put_package(stor_db *db, const char *path, const stor_cat_package *pkg,
			       const void *layout, size_t layout_len, const stor_cat_entry *entries,
			       size_t n, const stor_cat_source *sources, size_t n_sources,
			       stor_error *err);

/* The package's record; *layout (malloc'ed, may be NULL) when asked for. */
stor_errc stor_cat_get_package(stor_db *db, const char *path, stor_cat_package *pkg,
			       void **layout, size_t *layout_len, stor_error *err);

stor_errc stor_cat_delete_package(stor_db *db, const char *path, stor_error *err);

/* The entry of (id, kind); STOR_E_NOT_FOUND when no package holds it. */
stor_errc stor_cat_lookup(stor_db *db, const uint8_t *id, size_t id_len, stor_kind kind,
			  stor_cat_entry *out, stor_error *err);

/*
 * A package's source file at member (a normalized member path). When several
 * packages hold one, the one whose path shares the longest prefix with near
 * (the package of the build ID's debug file; NULL or "": the first in path
 * order). out gets package, member, offset and size (id_len 0);
 * STOR_E_NOT_FOUND when no package holds it.
 */
stor_errc stor_cat_find_source(stor_db *db, const char *member, const char *near,
			       stor_cat_entry *out, stor_error *err);

/* Calls fn for each package record (path order); fn returns false to stop. */
stor_errc stor_cat_foreach_package(stor_db *db,
				   bool (*fn)(void *arg, const char *path,
					      const stor_cat_package *pkg),
				   void *arg, stor_error *err);

#endif
