// SPDX-License-Identifier: Apache-2.0
/*
 * stor_alias: alias key -> canonical key records (see stor_alias.h).
 */
#include "storage/stor_alias.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#include <stdlib.h>
#include <string.h>

#define PREFIX "alias/"
#define PREFIX_LEN (sizeof(PREFIX) - 1)

static size_t alias_key(const uint8_t *alias, size_t len, char *out)
{
	memcpy(out, PREFIX, PREFIX_LEN);
	memcpy(out + PREFIX_LEN, alias, len);
	return PREFIX_LEN + len;
}

stor_errc stor_put_alias(stor_db *db, const uint8_t *alias, size_t alias_len,
			 const uint8_t *canon, size_t canon_len, stor_error *err)
{
	if (!alias || !canon || !stor_id_len_ok(alias_len) || !stor_id_len_ok(canon_len))
		return stor_set_err(err, STOR_E_INVALID, "alias: key of %zu or %zu bytes", alias_len,
				    canon_len);
	if (alias_len == canon_len && memcmp(alias, canon, alias_len) == 0)
		return STOR_OK;
	char key[PREFIX_LEN + STOR_ID_MAX];
	size_t kl = alias_key(alias, alias_len, key);
	char *rerr = NULL;
	rocksdb_put_cf(db->db, db->wnosync, db->cf[CF_DEFAULT], key, kl, (const char *)canon,
		       canon_len, &rerr);
	return rerr ? stor_rocks_err(err, rerr, "alias write") : STOR_OK;
}

stor_errc stor_get_alias(stor_db *db, const uint8_t *alias, size_t alias_len, uint8_t *canon,
			 size_t *canon_len, stor_error *err)
{
	if (!alias || !stor_id_len_ok(alias_len))
		return stor_set_err(err, STOR_E_INVALID, "alias: key of %zu bytes", alias_len);
	char key[PREFIX_LEN + STOR_ID_MAX];
	size_t kl = alias_key(alias, alias_len, key), n = 0;
	char *rerr = NULL;
	char *v = rocksdb_get_cf(db->db, db->ropts, db->cf[CF_DEFAULT], key, kl, &n, &rerr);
	if (rerr)
		return stor_rocks_err(err, rerr, "alias read");
	if (!v)
		return stor_set_err(err, STOR_E_NOT_FOUND, "alias: none");
	stor_errc rc = STOR_OK;
	if (!stor_id_len_ok(n))
		rc = stor_set_err(err, STOR_E_CORRUPT, "alias: canonical key of %zu bytes", n);
	else {
		memcpy(canon, v, n);
		*canon_len = n;
	}
	rocksdb_free(v);
	return rc;
}
