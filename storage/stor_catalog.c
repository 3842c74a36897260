// SPDX-License-Identifier: Apache-2.0
/*
 * stor_catalog: the package catalogue's records in the "catalog" column
 * family (stor_catalog.h). Keys: 'p' + package path; 'b' + kind + build ID;
 * 's' + member path + NUL + package path (a source: only that package writes
 * it). Records are little-endian with a version word; a record that fails its
 * checks reads as STOR_E_CORRUPT (version 1, before sources, also does: the
 * scanner then scans the package again).
 */
#include "storage/stor_catalog.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"

#define PKG_VERSION 2u        /* 1: key lengths of one byte, no sources */
#define KEY_MAX (2 * STOR_CAT_PATH_MAX + 2)

typedef struct rd {
	const uint8_t *p, *end;
	bool ok;
} rd;

static void take(rd *r, void *out, size_t n)
{
	if (!r->ok || (size_t)(r->end - r->p) < n) {
		r->ok = false;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

/* A string of u16 length into out (out_size bytes with its NUL). */
static void take_str(rd *r, char *out, size_t out_size)
{
	uint16_t n = 0;
	take(r, &n, 2);
	if (n >= out_size)
		r->ok = false;
	take(r, out, r->ok ? n : 0);
	out[r->ok ? n : 0] = '\0';
}

static bool put_str(base_buf *b, const char *s)
{
	uint16_t n = (uint16_t)strnlen(s, STOR_CAT_PATH_MAX - 1);
	return base_buf_append(b, &n, 2) && base_buf_append(b, s, n);
}

static size_t pkg_key(const char *path, char *key)
{
	size_t n = strnlen(path, STOR_CAT_PATH_MAX - 1);
	key[0] = 'p';
	memcpy(key + 1, path, n);
	return n + 1;
}

static size_t id_key(const uint8_t *id, size_t len, stor_kind kind, char *key)
{
	key[0] = 'b';
	key[1] = (char)kind;
	memcpy(key + 2, id, len);
	return len + 2;
}

/* 's' + member + NUL + package; 0 when either is too long. */
static size_t src_key(const char *member, const char *pkg, char *key)
{
	size_t m = strlen(member), p = strlen(pkg);
	if (m == 0 || m >= STOR_CAT_PATH_MAX || p >= STOR_CAT_PATH_MAX)
		return 0;
	key[0] = 's';
	memcpy(key + 1, member, m);
	key[1 + m] = '\0';
	memcpy(key + 2 + m, pkg, p);
	return m + p + 2;
}

static bool encode_entry(base_buf *b, const char *pkg, const stor_cat_entry *e)
{
	return base_buf_append(b, &e->offset, 8) && base_buf_append(b, &e->size, 8) &&
	       put_str(b, pkg) && put_str(b, e->member);
}

static bool decode_entry(const char *v, size_t n, stor_cat_entry *e)
{
	rd r = {(const uint8_t *)v, (const uint8_t *)v + n, true};
	take(&r, &e->offset, 8);
	take(&r, &e->size, 8);
	take_str(&r, e->package, sizeof(e->package));
	take_str(&r, e->member, sizeof(e->member));
	return r.ok && r.p == r.end;
}

/* Reads a value of the catalogue (malloc'ed by RocksDB; NULL when absent). */
static char *get(stor_db *db, const char *key, size_t klen, size_t *n, stor_error *err,
		 stor_errc *rc)
{
	char *rerr = NULL;
	char *v = rocksdb_get_cf(db->db, db->ropts, db->cf[CF_CATALOG], key, klen, n, &rerr);
	*rc = rerr ? stor_rocks_err(err, rerr, "catalogue read") : STOR_OK;
	return v;
}

/* Deletes, in b, the entries the old record of the package lists (those it still owns). */
static stor_errc drop_entries(stor_db *db, rocksdb_writebatch_t *b, const char *path,
			      const char *v, size_t n, stor_error *err)
{
	rd r = {(const uint8_t *)v, (const uint8_t *)v + n, true};
	stor_cat_package pkg;
	uint32_t ver = 0, layout_len = 0, nkeys = 0;
	take(&r, &ver, 4);
	take(&r, &pkg, sizeof(pkg));
	take(&r, &layout_len, 4);
	if (r.ok && (size_t)(r.end - r.p) >= layout_len)
		r.p += layout_len;
	take(&r, &nkeys, 4);
	for (uint32_t i = 0; i < nkeys && r.ok; i++) {
		uint16_t klen = 0;
		char key[KEY_MAX];
		take(&r, &klen, ver == 1 ? 1 : 2);
		if (klen > sizeof(key))
			break;
		take(&r, key, klen);
		if (!r.ok)
			break;
		if (klen > 0 && key[0] == 's') {  /* a source key names its package */
			rocksdb_writebatch_delete_cf(b, db->cf[CF_CATALOG], key, klen);
			continue;
		}
		size_t en;
		stor_errc rc;
		char *ev = get(db, key, klen, &en, err, &rc);
		if (rc)
			return rc;
		stor_cat_entry *e = ev ? malloc(sizeof(*e)) : NULL;
		if (e && decode_entry(ev, en, e) && !strcmp(e->package, path))
			rocksdb_writebatch_delete_cf(b, db->cf[CF_CATALOG], key, klen);
		free(e);
		rocksdb_free(ev);
	}
	return STOR_OK;
}

/* The package record: header, layout, and the keys of its entries and sources. */
static bool encode_package(base_buf *out, const char *path, const stor_cat_package *pkg,
			   const void *layout, size_t layout_len, const stor_cat_entry *entries,
			   size_t n, const stor_cat_source *sources, size_t n_sources)
{
	uint32_t ver = PKG_VERSION, ll = (uint32_t)layout_len, nk = (uint32_t)(n + n_sources);
	bool ok = base_buf_append(out, &ver, 4) && base_buf_append(out, pkg, sizeof(*pkg)) &&
		  base_buf_append(out, &ll, 4) && (!ll || base_buf_append(out, layout, ll)) &&
		  base_buf_append(out, &nk, 4);
	char key[KEY_MAX];
	for (size_t i = 0; ok && i < n + n_sources; i++) {
		uint16_t kl = (uint16_t)(i < n ? id_key(entries[i].id, entries[i].id_len,
							entries[i].kind, key)
					       : src_key(sources[i - n].member, path, key));
		ok = base_buf_append(out, &kl, 2) && base_buf_append(out, key, kl);
	}
	return ok;
}

/* The source records, into b. */
static stor_errc put_sources(stor_db *db, rocksdb_writebatch_t *b, const char *path,
			     const stor_cat_source *sources, size_t n, stor_error *err)
{
	char key[KEY_MAX];
	for (size_t i = 0; i < n; i++) {
		size_t kl = src_key(sources[i].member, path, key);
		if (kl == 0)
			return stor_set_err(err, STOR_E_INVALID, "catalogue: bad source path");
		uint64_t v[2] = {sources[i].offset, sources[i].size};
		rocksdb_writebatch_put_cf(b, db->cf[CF_CATALOG], key, kl, (const char *)v, sizeof(v));
	}
	return STOR_OK;
}

stor_errc stor_cat_put_package(stor_db *db, const char *path, const stor_cat_package *pkg,
			       const void *layout, size_t layout_len, const stor_cat_entry *entries,
			       size_t n, const stor_cat_source *sources, size_t n_sources,
			       stor_error *err)
{
	char pk[STOR_CAT_PATH_MAX + 1];
	size_t pkl = pkg_key(path, pk);
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	size_t on;
	stor_errc rc;
	char *old = get(db, pk, pkl, &on, err, &rc);
	if (!rc && old)
		rc = drop_entries(db, b, path, old, on, err);
	rocksdb_free(old);
	base_buf rec, eb;
	base_buf_init(&rec, SIZE_MAX);
	base_buf_init(&eb, SIZE_MAX);
	for (size_t i = 0; !rc && i < n; i++) {
		char key[2 + STOR_ID_MAX];
		size_t kl = id_key(entries[i].id, entries[i].id_len, entries[i].kind, key);
		eb.len = 0;
		if (entries[i].id_len == 0 || entries[i].id_len > STOR_ID_MAX ||
		    !encode_entry(&eb, path, &entries[i]))
			rc = stor_set_err(err, STOR_E_INVALID, "catalogue: bad entry");
		else
			rocksdb_writebatch_put_cf(b, db->cf[CF_CATALOG], key, kl, (char *)eb.data, eb.len);
	}
	if (!rc)
		rc = put_sources(db, b, path, sources, n_sources, err);
	if (!rc && !encode_package(&rec, path, pkg, layout, layout_len, entries, n, sources,
				   n_sources))
		rc = stor_set_err(err, STOR_E_NOMEM, "catalogue: out of memory");
	if (!rc) {
		rocksdb_writebatch_put_cf(b, db->cf[CF_CATALOG], pk, pkl, (char *)rec.data, rec.len);
		char *rerr = NULL;
		rocksdb_write(db->db, db->wnosync, b, &rerr);
		if (rerr)
			rc = stor_rocks_err(err, rerr, "catalogue write");
	}
	base_buf_deinit(&rec);
	base_buf_deinit(&eb);
	rocksdb_writebatch_destroy(b);
	return rc;
}

stor_errc stor_cat_get_package(stor_db *db, const char *path, stor_cat_package *pkg,
			       void **layout, size_t *layout_len, stor_error *err)
{
	char pk[STOR_CAT_PATH_MAX + 1];
	size_t pkl = pkg_key(path, pk), n;
	stor_errc rc;
	char *v = get(db, pk, pkl, &n, err, &rc);
	if (rc || !v)
		return rc ? rc : stor_set_err(err, STOR_E_NOT_FOUND, "catalogue: no such package");
	rd r = {(const uint8_t *)v, (const uint8_t *)v + n, true};
	uint32_t ver = 0, ll = 0;
	take(&r, &ver, 4);
	take(&r, pkg, sizeof(*pkg));
	take(&r, &ll, 4);
	pkg->error[sizeof(pkg->error) - 1] = '\0';
	if (!r.ok || ver != PKG_VERSION || (size_t)(r.end - r.p) < ll) {
		rocksdb_free(v);
		return stor_set_err(err, STOR_E_CORRUPT, "catalogue: bad package record");
	}
	if (layout) {
		*layout = ll ? malloc(ll) : NULL;
		*layout_len = *layout ? ll : 0;
		if (*layout)
			memcpy(*layout, r.p, ll);
	}
	rocksdb_free(v);
	return STOR_OK;
}

stor_errc stor_cat_delete_package(stor_db *db, const char *path, stor_error *err)
{
	char pk[STOR_CAT_PATH_MAX + 1];
	size_t pkl = pkg_key(path, pk), n;
	stor_errc rc;
	char *old = get(db, pk, pkl, &n, err, &rc);
	if (rc || !old)
		return rc;
	rocksdb_writebatch_t *b = rocksdb_writebatch_create();
	rc = drop_entries(db, b, path, old, n, err);
	rocksdb_free(old);
	rocksdb_writebatch_delete_cf(b, db->cf[CF_CATALOG], pk, pkl);
	char *rerr = NULL;
	if (!rc)
		rocksdb_write(db->db, db->wnosync, b, &rerr);
	if (rerr)
		rc = stor_rocks_err(err, rerr, "catalogue delete");
	rocksdb_writebatch_destroy(b);
	return rc;
}

stor_errc stor_cat_lookup(stor_db *db, const uint8_t *id, size_t id_len, stor_kind kind,
			  stor_cat_entry *out, stor_error *err)
{
	if (id_len == 0 || id_len > STOR_ID_MAX)
		return stor_set_err(err, STOR_E_INVALID, "catalogue: build ID of %zu bytes", id_len);
	char key[2 + STOR_ID_MAX];
	size_t kl = id_key(id, id_len, kind, key), n;
	stor_errc rc;
	char *v = get(db, key, kl, &n, err, &rc);
	if (rc || !v)
		return rc ? rc : stor_set_err(err, STOR_E_NOT_FOUND, "catalogue: not found");
	bool ok = decode_entry(v, n, out);
	rocksdb_free(v);
	if (!ok)
		return stor_set_err(err, STOR_E_CORRUPT, "catalogue: bad entry record");
	memcpy(out->id, id, id_len);
	out->id_len = (uint8_t)id_len;
	out->kind = kind;
	return STOR_OK;
}

/* Bytes at the start of a and b that agree. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;
	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

stor_errc stor_cat_find_source(stor_db *db, const char *member, const char *near,
			       stor_cat_entry *out, stor_error *err)
{
	char prefix[STOR_CAT_PATH_MAX + 2];
	size_t ml = strlen(member);
	if (ml == 0 || ml >= STOR_CAT_PATH_MAX)
		return stor_set_err(err, STOR_E_NOT_FOUND, "catalogue: no such source");
	prefix[0] = 's';
	memcpy(prefix + 1, member, ml + 1);  /* with its NUL: the separator */
	size_t pl = ml + 2, best = 0;
	bool found = false;
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, db->ropts, db->cf[CF_CATALOG]);
	for (rocksdb_iter_seek(it, prefix, pl); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kl, vl;
		const char *k = rocksdb_iter_key(it, &kl);
		const char *v = rocksdb_iter_value(it, &vl);
		if (kl < pl || memcmp(k, prefix, pl) != 0)
			break;
		if (kl - pl >= STOR_CAT_PATH_MAX || vl != 16)
			continue;
		char pkg[STOR_CAT_PATH_MAX];
		memcpy(pkg, k + pl, kl - pl);
		pkg[kl - pl] = '\0';
		size_t score = near ? common_prefix(pkg, near) : 0;
		if (found && score <= best)
			continue;
		found = true;
		best = score;
		memset(out, 0, sizeof(*out));
		memcpy(out->package, pkg, kl - pl + 1);
		memcpy(out->member, member, ml + 1);
		memcpy(&out->offset, v, 8);
		memcpy(&out->size, v + 8, 8);
	}
	stor_errc rc = stor_iter_end(it, STOR_OK, err, "reading the catalogue");
	if (!rc && !found)
		rc = stor_set_err(err, STOR_E_NOT_FOUND, "catalogue: no package holds %.200s", member);
	return rc;
}

stor_errc stor_cat_foreach_package(stor_db *db,
				   bool (*fn)(void *arg, const char *path,
					      const stor_cat_package *pkg),
				   void *arg, stor_error *err)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(db->db, db->ropts, db->cf[CF_CATALOG]);
	char path[STOR_CAT_PATH_MAX];
	for (rocksdb_iter_seek(it, "p", 1); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t kl, vl;
		const char *k = rocksdb_iter_key(it, &kl);
		const char *v = rocksdb_iter_value(it, &vl);
		if (kl < 2 || k[0] != 'p')
			break;
		if (kl - 1 >= sizeof(path) || vl < 4 + sizeof(stor_cat_package))
			continue;
		memcpy(path, k + 1, kl - 1);
		path[kl - 1] = '\0';
		stor_cat_package pkg;
		memcpy(&pkg, v + 4, sizeof(pkg));
		pkg.error[sizeof(pkg.error) - 1] = '\0';
		if (!fn(arg, path, &pkg))
			break;
	}
	return stor_iter_end(it, STOR_OK, err, "listing the catalogue");
}
