/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stor_meta: the metadata record of a store entry as it sits in the "meta"
 * column family (a versioned little-endian encoding of stor_meta), and the
 * error helper the store's files share. Internal to storage/.
 */
#ifndef STOR_META_H
#define STOR_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/stor_db.h"

#define STOR_META_FIXED 48   /* bytes before the variable part */
/* Largest encoded record: fixed part, alt ID, two length-prefixed strings. */
#define STOR_META_MAX (STOR_META_FIXED + STOR_ID_MAX + 2 + STOR_SOURCE_MAX + 2 + STOR_ERROR_MAX + 8)

/* Sets *err (when not NULL) and returns code. */
stor_errc stor_set_err(stor_error *err, stor_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Encodes m into buf (STOR_META_MAX bytes); returns the record's length. */
size_t stor_meta_encode(const stor_meta *m, uint8_t *buf);

/* Decodes a record read from the store (untrusted: every length is checked). */
stor_errc stor_meta_decode(const uint8_t *p, size_t n, stor_meta *m, stor_error *err);

#endif
