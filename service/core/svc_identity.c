// SPDX-License-Identifier: Apache-2.0
/*
 * svc_identity: canonical identities and alias writes (svc_identity.h).
 */
#include "service/core/svc_identity.h"
#include "service/core/svc_build_id.h"

#include "base/base_log.h"
#include "storage/stor_alias.h"
#include "symbolizer/sym_file_id.h"

void svc_identity_canonical(stor_db *store, const sym_build_id *id, sym_build_id *out)
{
	*out = *id;
	if (!store || id->kind == SYM_ID_GNU)
		return;
	uint8_t canon[STOR_ID_MAX];
	size_t n = 0;
	sym_build_id c;
	if (stor_get_alias(store, SVC_STORE_KEY(id), canon, &n, NULL) == STOR_OK &&
	    sym_build_id_from_key(canon, n, &c))
		*out = c;
}

size_t svc_identity_record(stor_db *store, const void *data, size_t size,
			   const sym_build_id *canonical)
{
	sym_build_id ids[SYM_ID_KINDS];
	size_t n = sym_file_ids(data, size, ids), written = 0;
	svc_store_key ck = svc_store_key_of(canonical);
	for (size_t i = 0; i < n; i++) {
		/* a GNU build ID is always its own key: never an alias */
		if (ids[i].kind == SYM_ID_GNU || sym_build_id_equal(&ids[i], canonical))
			continue;
		stor_error err = {0};
		if (stor_put_alias(store, SVC_STORE_KEY(&ids[i]), ck.bytes, ck.len, &err) != STOR_OK) {
			base_logf(BASE_LOG_WARN, "alias not written", "kind=%s error=%s",
				  sym_id_kind_name(ids[i].kind), err.msg);
			continue;
		}
		written++;
	}
	return written;
}
