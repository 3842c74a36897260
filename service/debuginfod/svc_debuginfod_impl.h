/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_debuginfod_impl: shared between the files of service/debuginfod/ only.
 */
#ifndef SVC_DEBUGINFOD_IMPL_H
#define SVC_DEBUGINFOD_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

/* What a request asks for; K_INVALID counts malformed paths. */
enum { K_DEBUGINFO, K_EXECUTABLE, K_SECTION, K_STATUS, K_INVALID, K_COUNT };

/* The part of a path after /buildid/ ("ID/debuginfo", "ID/executable",
 * "ID/section/NAME", "ID/status", percent-encoded) into hex (SYM_BUILD_ID_HEX_MAX bytes),
 * id, kind and section (SVC_DEBUGINFOD_SECTION_MAX + 1 bytes); false when
 * malformed (svc_debuginfod_path.c). */
bool svc_debuginfod_parse_path(const char *encoded, char *hex, sym_build_id *id, int *kind,
			       char *section);

/* Section bytes of an ELF image (svc_debuginfod_section.c): *out points into
 * data; false when absent, SHT_NOBITS, still compressed, or malformed. */
bool svc_debuginfod_find_section(const void *data, size_t size, const char *name,
				 const void **out, size_t *out_size);

/* A stored file being sent (svc_debuginfod_body.c), shared by the requests
 * sending it at once; freed with the last reference. Loop thread only. */
typedef struct svc_dbg_body {
	struct svc_dbg_body *next, **list;
	sym_build_id id;
	stor_blob blob;
	stor_meta meta;
	unsigned refs;
	bool loading;      /* its first request is reading it; others wait */
	void *waiters;     /* those requests (svc_debuginfod.c's list) */
} svc_dbg_body;

/* The body in flight for id with one more reference, or NULL. */
svc_dbg_body *svc_dbg_body_find(svc_dbg_body **list, const sym_build_id *id);
/* A new body holding *blob (taken: blob->handle_ becomes NULL), one reference. */
svc_dbg_body *svc_dbg_body_add(svc_dbg_body **list, const sym_build_id *id, stor_blob *blob,
			       const stor_meta *meta);
/* A body being read by the caller (loading, no blob yet), one reference. */
svc_dbg_body *svc_dbg_body_start(svc_dbg_body **list, const sym_build_id *id);
/* Takes the body out of the list (its read failed); references stay valid. */
void svc_dbg_body_unlink(svc_dbg_body *b);
void svc_dbg_body_put(svc_dbg_body *b);  /* NULL: no-op */
/* evbuffer cleanup callback: drops the reference arg. */
void svc_dbg_body_written(const void *data, size_t len, void *arg);

#endif
