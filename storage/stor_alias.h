/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_alias: identity aliases in the store: alias key -> canonical key (both
 * as sym_build_id_key makes them), so a file stored under one identity (its
 * GNU build ID, or its file hash when it has no GNU note) is found by every
 * other identity it has (its Go build ID, its file hash). Kept in the default
 * column family under the prefix "alias/"; small and not counted in the
 * store's size bound, like the catalogue. Reads and writes from any thread.
 */
#ifndef STOR_ALIAS_H
#define STOR_ALIAS_H

#include <stddef.h>
#include <stdint.h>

#include "storage/stor_db.h"

/* Records alias -> canonical (overwriting an older record of alias). An alias
 * equal to its canonical key is not written (STOR_OK). */
stor_errc stor_put_alias(stor_db *db, const uint8_t *alias, size_t alias_len,
			 const uint8_t *canon, size_t canon_len, stor_error *err);

/* The canonical key of alias into canon (STOR_ID_MAX bytes) and *canon_len;
 * STOR_E_NOT_FOUND when there is none. */
stor_errc stor_get_alias(stor_db *db, const uint8_t *alias, size_t alias_len, uint8_t *canon,
			 size_t *canon_len, stor_error *err);

#endif
