// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod_body: files being sent, shared between the requests that
 * send the same build ID at the same time (svc_debuginfod_impl.h). The store
 * hands each read its own decompressed buffer (RocksDB blob values are zstd
 * files); sharing it makes N concurrent clients of one file cost one buffer,
 * not N. Loop thread only; the list is short (the files in flight).
 */
#include "service/debuginfod/svc_debuginfod_impl.h"

#include <stdlib.h>

svc_dbg_body *svc_dbg_body_find(svc_dbg_body **list, const sym_build_id *id)
{
	for (svc_dbg_body *b = *list; b; b = b->next) {
		if (sym_build_id_equal(&b->id, id)) {
			b->refs++;
			return b;
		}
	}
	return NULL;
}

svc_dbg_body *svc_dbg_body_start(svc_dbg_body **list, const sym_build_id *id)
{
	svc_dbg_body *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->id = *id;
	b->refs = 1;
	b->loading = true;
	b->list = list;
	b->next = *list;
	*list = b;
	return b;
}

svc_dbg_body *svc_dbg_body_add(svc_dbg_body **list, const sym_build_id *id, stor_blob *blob,
			       const stor_meta *meta)
{
	svc_dbg_body *b = svc_dbg_body_start(list, id);
	if (!b)
		return NULL;
	b->loading = false;
	b->blob = *blob;
	b->meta = *meta;
	blob->handle_ = NULL;  /* owned by the body now */
	return b;
}

void svc_dbg_body_unlink(svc_dbg_body *b)
{
	for (svc_dbg_body **p = b->list; *p; p = &(*p)->next) {
		if (*p == b) {
			*p = b->next;
			break;
		}
	}
	b->next = NULL;
}

void svc_dbg_body_put(svc_dbg_body *b)
{
	if (!b || --b->refs > 0)
		return;
	svc_dbg_body_unlink(b);
	stor_blob_release(&b->blob);
	free(b);
}

/* evbuffer_add_reference's cleanup: the reference a reply held. */
void svc_dbg_body_written(const void *data, size_t len, void *arg)
{
	(void)data, (void)len;
	svc_dbg_body_put(arg);
}
