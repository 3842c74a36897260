// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload_store: an upload's check and store write, on a worker
 * (svc_upload.h): src_check_file as for every fetched file, then the ranked
 * write every route's file goes through (service/core/svc_file_write.h: the
 * new file against the held one, executable < debug file without lines <
 * debug file with lines, one step per build ID across the process), and the
 * answer that names both ranks. With a shared S3 tier (issue 30), the write
 * is decided and its identity reserved here (svc_file_decide), the file
 * written to S3 and verified on the loop's multi handle (svc_upload.c), and
 * the store's write made by a second job (svc_upload_commit_work) only
 * once S3 holds it: nothing answers 201 for a file that is not durable,
 * and no lock is held across the network.
 */
#include "service/upload/svc_upload_impl.h"
#include "service/core/svc_build_id.h"
#include "service/core/svc_file_write.h"
#include "service/fetch/svc_s3.h"
#include "service/core/svc_identity.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "source/src_source.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_file_id.h"
#include "symbolizer/sym_index.h"

static void answer(upload *p, int result, int status, const char *fmt, const char *a,
		   const char *b)
{
	p->result = result;
	p->status = status;
	snprintf(p->text, sizeof(p->text), fmt, a, b);
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

/* The answer of a ranked write's outcome. */
static void answer_outcome(upload *p, const svc_file_outcome *o, const stor_error *serr)
{
	const char *held = svc_file_rank_name(o->held), *offered = svc_file_rank_name(o->offered);
	switch (o->verdict) {
	case SVC_FILE_SAME:
		return answer(p, UP_UNCHANGED, 200, "unchanged: the store holds this file already%s%s",
			      "", "");
	case SVC_FILE_KEPT:
		return answer(p, UP_CONFLICT, 409,
			      "the store holds %s already, as good as or better than this one "
			      "(%s); ?force=1 replaces it",
			      held, offered);
	case SVC_FILE_FAILED:
		if (o->stored == STOR_E_TOO_LARGE)
			return answer(p, UP_TOO_LARGE, 413, "%s%s", serr->msg, "");
		if (o->stored == STOR_E_NOSPACE)
			return answer(p, UP_NO_SPACE, 507, "%s%s", serr->msg, "");
		return answer(p, UP_ERROR, 500, "store: %s%s", serr->msg, "");
	case SVC_FILE_REFUSED:  /* not used by uploads */
	case SVC_FILE_WRITTEN:
		break;
	}
	if (o->held != SVC_RANK_NONE)
		answer(p, UP_REPLACED, 200, "replaced %s with %s", held, offered);
	else if (o->verdict == SVC_FILE_WRITTEN)
		answer(p, UP_STORED, 201, "stored %s%s", offered, "");
}

/* With the S3 tier: the decision; when it is a write, the identity is
 * reserved and p->s3op made (the checksums computed here, on the worker),
 * for the loop to start. */
static void decide_s3(upload *p, struct svc_s3 *s3, stor_meta *m, const sym_elf_info *info)
{
	svc_file_outcome o;
	stor_error serr = {0};
	if (!svc_file_decide(p->u->o.store, &p->store_id, m, p->data, p->size, info, p->force,
			     &p->slot, &o, &serr))
		return answer_outcome(p, &o, &serr);
	p->reserved = true;
	char key[SVC_S3_KEY_MAX], hex[SYM_BUILD_ID_HEX_MAX];
	const char *idk = sym_id_kind_name(p->store_id.kind);
	sym_build_id_to_hex(&p->store_id, hex);
	svc_error err = {0};
	if (!idk || !svc_s3_key(s3, idk, hex,
				m->kind == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable", key,
				sizeof(key)))
		svc_error_set(&err, SVC_E_INVALID, "s3: no key for %s", hex);
	else
		p->s3op = svc_s3_put_new(s3, key, p->data, p->size, false, &err);
	/* the index a replica built from a file this one replaces goes (asked
	 * always: this replica may never have seen the file S3 holds) */
	char what[32], ikey[SVC_S3_KEY_MAX];
	snprintf(what, sizeof(what), "index-v%u", sym_index_format_version());
	if (p->s3op && (!svc_s3_key(s3, idk, hex, what, ikey, sizeof(ikey)) ||
	     !svc_s3_put_then_delete(p->s3op, ikey))) {
		svc_s3_put_free(p->s3op);
		p->s3op = NULL;
		svc_error_set(&err, SVC_E_INVALID, "s3: no key for %s's index", hex);
	}
	if (p->s3op)
		return;
	svc_file_release(&p->slot);
	p->reserved = false;
	if (err.code == SVC_E_TOO_LARGE)
		answer(p, UP_TOO_LARGE, 413, "%s%s", err.msg, "");
	else
		answer(p, UP_ERROR, 500, "%s%s", err.msg, "");
}

void svc_upload_commit_work(void *job)
{
	upload *p = job;
	p->reserved = false;
	if (p->s3_rc != SVC_OK) {
		svc_file_release(&p->slot);
		if (p->s3_rc == SVC_E_TOO_LARGE)
			return answer(p, UP_TOO_LARGE, 413, "%s%s", p->s3_err, "");
		return answer(p, UP_ERROR, 503,
			      "not stored: the shared S3 tier cannot take it now (%s)%s", p->s3_err,
			      "");
	}
	svc_file_outcome o;
	stor_error serr = {0};
	svc_file_commit(p->u->o.store, &p->slot, p->data, p->size, &o, &serr);
	answer_outcome(p, &o, &serr);
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
	struct svc_s3 *s3 = p->u->o.fetcher ? svc_fetcher_s3(p->u->o.fetcher) : NULL;
	if (s3)
		return decide_s3(p, s3, &m, &info);
	svc_file_outcome o;
	stor_error serr = {0};
	svc_file_write(db, &p->store_id, &m, p->data, p->size, &info, p->force, NULL, NULL, &o,
		       &serr);
	answer_outcome(p, &o, &serr);
}
