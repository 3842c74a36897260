// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload_store: an upload's check and store write, on a worker
 * (svc_upload.h): src_check_file as for every fetched file, then the rank of
 * the new file against the held one (executable < debug file without lines <
 * debug file with lines), then the write. The loop runs at most one of these
 * per build ID at a time (svc_upload.c), so the compare and the write are not
 * raced by another upload.
 */
#include "service/upload/svc_upload_impl.h"
#include "service/core/svc_build_id.h"
#include "service/core/svc_identity.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "source/src_source.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_file_id.h"

enum { RANK_NONE, RANK_EXECUTABLE, RANK_NO_LINES, RANK_LINES };

static const char *const rank_names[] = {"nothing", "an executable without DWARF",
					 "a debug file without line info",
					 "a debug file with line info"};

static int rank_of(src_kind kind, const sym_elf_info *info)
{
	if (kind != SRC_KIND_DEBUGINFO)
		return RANK_EXECUTABLE;
	return info->has_debug_line ? RANK_LINES : RANK_NO_LINES;
}

static void answer(upload *p, int result, int status, const char *fmt, const char *a,
		   const char *b)
{
	p->result = result;
	p->status = status;
	snprintf(p->text, sizeof(p->text), fmt, a, b);
}

/* The held file's rank, and whether it has the uploaded bytes. */
static bool held_file(upload *p, const stor_meta *m, int *rank, bool *same)
{
	stor_blob b;
	stor_error serr;
	if (stor_get_file(p->u->o.store, SVC_STORE_KEY(&p->store_id), &b, NULL, &serr) != STOR_OK) {
		answer(p, UP_ERROR, 500, "store: %s%s", serr.msg, "");
		return false;
	}
	*same = b.size == p->size && memcmp(b.data, p->data, p->size) == 0;
	*rank = RANK_EXECUTABLE;
	sym_elf_info info;
	sym_error err;
	if (m->kind == STOR_KIND_DEBUGINFO)
		*rank = sym_elf_probe(b.data, b.size, &info, &err) == SYM_OK && info.has_debug_line
				? RANK_LINES
				: RANK_NO_LINES;
	stor_blob_release(&b);
	return true;
}

/* The ELF check; false with the answer set when the body is refused. */
static bool check(upload *p, src_kind *kind, sym_elf_info *info)
{
	sym_error err = {0};
	if (src_check_file(p->data, p->size, &p->id, kind, info, &err) != SYM_OK) {
		bool id = strstr(err.msg, "build ID") || strstr(err.msg, "build-ID");
		answer(p, id ? UP_WRONG_ID : UP_BAD_ELF, 400, "%s%s", err.msg,
		       id ? "" : " (the body must be the ELF file itself)");
		return false;
	}
	if (p->want_debuginfo && *kind != SRC_KIND_DEBUGINFO) {
		answer(p, UP_BAD_ELF, 400,
		       "no DWARF (.debug_info) in the file: PUT it to /buildid/%s/executable%s",
		       p->hex, "");
		return false;
	}
	return true;
}

void svc_upload_store_work(void *job)
{
	upload *p = job;
	stor_db *db = p->u->o.store;
	src_kind kind;
	sym_elf_info info;
	/* One piece, here rather than on the loop: a big body is a big memcpy
	 * (evbuffer frees each chain as it is copied: about one body of memory). */
	if (!(p->data = evbuffer_pullup(p->in, -1)))
		return answer(p, UP_ERROR, 500, "out of memory%s%s", "", "");
	if (!check(p, &kind, &info))
		return;
	/* The file's key: its GNU build ID, else its file hash; its other
	 * identities become aliases of it (also when it is held already). */
	sym_build_id ids[SYM_ID_KINDS];
	const sym_build_id *canon = sym_file_ids_canonical(ids, sym_file_ids(p->data, p->size, ids));
	p->store_id = canon ? *canon : p->id;
	svc_identity_record(db, p->data, p->size, &p->store_id);
	stor_meta old;
	stor_error serr = {0};
	stor_errc rc = stor_get_meta(db, SVC_STORE_KEY(&p->store_id), &old, &serr);
	if (rc != STOR_OK && rc != STOR_E_NOT_FOUND)
		return answer(p, UP_ERROR, 500, "store: %s%s", serr.msg, "");
	bool held = rc == STOR_OK && old.state == STOR_STATE_PRESENT;
	int old_rank = RANK_NONE, new_rank = rank_of(kind, &info);
	bool same = false;
	if (held && !held_file(p, &old, &old_rank, &same))
		return;
	if (same)
		return answer(p, UP_UNCHANGED, 200, "unchanged: the store holds this file already%s%s",
			      "", "");
	if (held && new_rank <= old_rank && !p->force)
		return answer(p, UP_CONFLICT, 409,
			      "the store holds %s already, as good as or better than this one "
			      "(%s); ?force=1 replaces it",
			      rank_names[old_rank], rank_names[new_rank]);
	stor_meta m;
	memset(&m, 0, sizeof(m));
	m.kind = kind == SRC_KIND_DEBUGINFO ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
	snprintf(m.source, sizeof(m.source), "upload");
	if (info.has_alt && info.alt_build_id.len) {
		m.alt_len = (uint8_t)info.alt_build_id.len;
		memcpy(m.alt_id, info.alt_build_id.bytes, m.alt_len);
		p->has_alt = true;
		p->alt_id = info.alt_build_id;
	}
	/* The store never lets an executable replace debug info: a forced
	 * downgrade deletes the entry first (not atomic: a reader between the
	 * two writes finds nothing, as before a first upload). */
	if (held && old.kind == STOR_KIND_DEBUGINFO && m.kind == STOR_KIND_EXECUTABLE &&
	    stor_delete(db, SVC_STORE_KEY(&p->store_id), &serr) != STOR_OK)
		return answer(p, UP_ERROR, 500, "store: %s%s", serr.msg, "");
	rc = stor_put_file(db, SVC_STORE_KEY(&p->store_id), &m, p->data, p->size, &serr);
	if (rc == STOR_E_TOO_LARGE)
		return answer(p, UP_TOO_LARGE, 413, "%s%s", serr.msg, "");
	if (rc == STOR_E_NOSPACE)
		return answer(p, UP_NO_SPACE, 507, "%s%s", serr.msg, "");
	if (rc != STOR_OK)
		return answer(p, UP_ERROR, 500, "store: %s%s", serr.msg, "");
	if (held)
		answer(p, UP_REPLACED, 200, "replaced %s with %s", rank_names[old_rank],
		       rank_names[new_rank]);
	else
		answer(p, UP_STORED, 201, "stored %s%s", rank_names[new_rank], "");
}
