// SPDX-License-Identifier: Apache-2.0
/*
 * stor_verify: reading the whole store (stor_db.h): stor_foreach over the
 * metadata records, and stor_verify, which checks the invariants between the
 * column families. For tools, tests and operators; slow on a big store.
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#include <rocksdb/c.h>

stor_errc stor_foreach(stor_db *db,
		       bool (*fn)(void *arg, const uint8_t *id, size_t id_len, const stor_meta *m),
		       void *arg, stor_error *err)
{
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[CF_META]);
	stor_errc rc = STOR_OK;
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		if (!stor_id_len_ok(klen)) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: metadata key of %zu bytes", klen);
			break;
		}
		if ((rc = stor_meta_decode((const uint8_t *)v, vlen, &m, err)) != STOR_OK)
			break;
		if (!fn(arg, (const uint8_t *)k, klen, &m))
			break;
	}
	rc = stor_iter_end(it, rc, err, "iterating metadata");
	rocksdb_readoptions_destroy(ro);
	rocksdb_release_snapshot(db->db, snap);
	return rc;
}

/* Hex of a key for messages. */
static void key_hex(const char *k, size_t len, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t n = len < STOR_ID_MAX ? len : STOR_ID_MAX;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[(uint8_t)k[i] >> 4];
		out[2 * i + 1] = d[(uint8_t)k[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The size metadata m gives the value of column family cf. */
static uint64_t cf_size(const stor_meta *m, int cf)
{
	return cf == CF_DEBUGINFO ? m->size : cf == CF_INDEX ? m->index_size : m->layout_size;
}

/* Every key of column family cf must have a meta record whose size field agrees. */
static stor_errc verify_cf(stor_db *db, const rocksdb_readoptions_t *ro, int cf, stor_error *err)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[cf]);
	stor_errc rc = STOR_OK;
	char hex[2 * STOR_ID_MAX + 1];
	for (rocksdb_iter_seek_to_first(it); rc == STOR_OK && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		rocksdb_iter_value(it, &vlen);
		key_hex(k, klen, hex);
		stor_meta m;
		if (!stor_id_len_ok(klen)) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s key of %zu bytes", stor_cf_names[cf], klen);
		} else if (stor_read_meta(db, ro, (const uint8_t *)k, klen, &m, err) != STOR_OK) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s has no readable metadata",
				     stor_cf_names[cf], hex);
		} else if (m.state != STOR_STATE_PRESENT) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s held for a %s entry",
				     stor_cf_names[cf], hex, stor_state_name(m.state));
		} else if (vlen != cf_size(&m, cf)) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s %s is %zu bytes, metadata says %llu",
				     stor_cf_names[cf], hex, vlen, (unsigned long long)cf_size(&m, cf));
		}
	}
	return stor_iter_end(it, rc, err, "verifying");
}

stor_errc stor_verify(stor_db *db, stor_error *err)
{
	const rocksdb_snapshot_t *snap = rocksdb_create_snapshot(db->db);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_snapshot(ro, snap);
	rocksdb_readoptions_set_verify_checksums(ro, 1);
	stor_errc rc = verify_cf(db, ro, CF_DEBUGINFO, err);
	if (rc == STOR_OK)
		rc = verify_cf(db, ro, CF_INDEX, err);
	if (rc == STOR_OK)
		rc = verify_cf(db, ro, CF_LAYOUT, err);
	/* And the other way: metadata promising a file or index must have it. */
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, ro, db->cf[CF_META]);
	char hex[2 * STOR_ID_MAX + 1];
	for (rocksdb_iter_seek_to_first(it); rc == STOR_OK && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		stor_meta m;
		key_hex(k, klen, hex);
		if (!stor_id_len_ok(klen) ||
		    stor_meta_decode((const uint8_t *)v, vlen, &m, err) != STOR_OK) {
			rc = stor_set_err(err, STOR_E_CORRUPT, "store: metadata of %s unreadable", hex);
			break;
		}
		for (int cf = CF_DEBUGINFO; cf <= CF_LAYOUT && rc == STOR_OK; cf++) {
			if (cf == CF_META)
				continue;
			bool want = cf == CF_DEBUGINFO ? m.state == STOR_STATE_PRESENT : cf_size(&m, cf) > 0;
			char *rerr = NULL;
			size_t n = 0;
			char *val = rocksdb_get_cf(db->db, ro, db->cf[cf], k, klen, &n, &rerr);
			if (rerr)
				rc = stor_rocks_err(err, rerr, "verifying");
			else if (want && !val)
				rc = stor_set_err(err, STOR_E_CORRUPT, "store: %s of %s missing", stor_cf_names[cf], hex);
			rocksdb_free(val);
		}
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	rocksdb_release_snapshot(db->db, snap);
	return rc;
}
