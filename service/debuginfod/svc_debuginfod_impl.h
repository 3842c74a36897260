/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_debuginfod_impl: shared between the files of service/debuginfod/ only.
 */
#ifndef SVC_DEBUGINFOD_IMPL_H
#define SVC_DEBUGINFOD_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "service/debuginfod/svc_debuginfod.h"
#include "source/src_source.h"
#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"

struct evhttp_request;
struct evbuffer;

/* What a request asks for; K_INVALID counts malformed paths. */
enum { K_DEBUGINFO, K_EXECUTABLE, K_SECTION, K_SOURCE, K_STATUS, K_INVALID, K_COUNT };

/* Longest source path asked for, canonical (bytes, without the NUL). */
#define SVC_DEBUGINFOD_SOURCE_MAX 4095

/* The part of a path after /buildid/ ("ID/debuginfo", "ID/executable",
 * "ID/section/NAME", "ID/source/PATH", "ID/status", percent-encoded) into hex
 * (SYM_BUILD_ID_HEX_MAX bytes), id, kind and arg (SVC_DEBUGINFOD_SOURCE_MAX +
 * 1 bytes): the section's name, or the source's canonical absolute path
 * (base_path_canon). False when malformed (svc_debuginfod_path.c). */
bool svc_debuginfod_parse_path(const char *encoded, char *hex, sym_build_id *id, int *kind,
			       char *arg);

/* ?kind=go|htlhash on a /buildid/ID/... URL: id re-read as that kind's
 * identity from its hex (htlhash: 32 digits; go: the 64-digit SHA-256 of the
 * Go build ID string, as /status shows it). True when there is no kind or it
 * is gnu; false for an unknown kind or an ID of the wrong length. */
bool svc_debuginfod_query_kind(const char *query, const char *hex, sym_build_id *id);

enum { SVC_DBG_MAX_CODES = 8 };

struct svc_debuginfod {
	svc_debuginfod_options o;
	struct {
		int code;
		uint64_t n;
	} counts[K_COUNT][SVC_DBG_MAX_CODES];
	uint64_t bytes;
	struct svc_dbg_body *bodies;  /* files being sent */
	src_source **sources;  /* the local debug dirs, for executables */
	size_t n_sources;
};

/* The reply, counted by kind and status (svc_debuginfod.c). */
void svc_dbg_reply(svc_debuginfod *d, struct evhttp_request *req, int kind, int status,
		   struct evbuffer *body);
/* An error reply with a one-line text (Retry-After with a 503). */
void svc_dbg_reply_error(svc_debuginfod *d, struct evhttp_request *req, int kind, int status,
			 const char *text);
/* Last-Modified of a time in Unix ms. */
void svc_dbg_last_modified(struct evhttp_request *req, int64_t unix_ms);

/* ---- svc_debuginfod_range.c ---- */

typedef enum svc_dbg_range {
	SVC_DBG_RANGE_NONE = 0,        /* no Range, or one not read: the whole file (200) */
	SVC_DBG_RANGE_OK,              /* bytes first..last (206) */
	SVC_DBG_RANGE_UNSATISFIABLE,   /* starts past the end (416) */
} svc_dbg_range;

/* A Range header's one byte range of a file of size bytes. */
svc_dbg_range svc_dbg_range_parse(const char *header, uint64_t size, uint64_t *first,
				  uint64_t *last);

/* /buildid/ID/source/PATH (svc_debuginfod_source.c): path canonical, absolute;
 * relay: the fetcher whose upstreams are asked when no package holds it
 * (NULL: none, past the hop limit), asked under policy. */
void svc_debuginfod_source(svc_debuginfod *d, struct evhttp_request *req, const sym_build_id *id,
			   const char *path, uint64_t max_size, svc_fetcher *relay,
			   svc_fetch_policy policy);

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
