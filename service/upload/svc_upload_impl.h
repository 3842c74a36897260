/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_upload_impl: shared between the files of service/upload/ only
 * (svc_upload.c: the PUT route on the loop; svc_upload_store.c: the check
 * and the store write on a worker; svc_upload_auth.c: token and peer checks;
 * svc_upload_should.c: the ShouldUpload method).
 */
#ifndef SVC_UPLOAD_IMPL_H
#define SVC_UPLOAD_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_file_write.h"
#include "service/upload/svc_upload.h"
#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_error.h"

/* Results of a PUT, the label of symbolizer_uploads_total. */
enum upload_result {
	UP_STORED,        /* 201: nothing was held */
	UP_REPLACED,      /* 200: a weaker file (or any, with force) was replaced */
	UP_UNCHANGED,     /* 200: the same bytes were held */
	UP_CONFLICT,      /* 409: an equal or better file is held */
	UP_DISABLED,      /* 403: no token configured */
	UP_REMOTE,        /* 403: not from loopback */
	UP_UNAUTHORIZED,  /* 401: no or wrong token */
	UP_BAD_PATH,      /* 400: malformed build ID or kind */
	UP_BAD_ELF,       /* 400: not an ELF, or no DWARF for /debuginfo */
	UP_WRONG_ID,      /* 400: an ELF of another build ID (or none) */
	UP_TOO_LARGE,     /* 413 */
	UP_NO_LENGTH,     /* 411 */
	UP_NO_SPACE,      /* 507: the store's disk cannot take it (it stays writable) */
	UP_ERROR,         /* 500/503: the store failed, busy, shutting down */
	UP_RESULTS
};

/* ShouldUpload answers, the label of symbolizer_should_upload_total (the
 * UploadDecision.Answer values). */
enum { SHOULD_ANSWERS = 6 };

/* One PUT being served. */
typedef struct upload {
	svc_upload *u;
	struct evhttp_request *req;
	struct upload *next_same;    /* queued behind this one for the same build ID */
	struct upload *next_active;  /* the list of build IDs being uploaded */
	sym_build_id id;
	sym_build_id store_id;       /* the worker's: the file's canonical identity
				      * (svc_identity.h), the key it is stored under */
	char hex[SYM_BUILD_ID_HEX_MAX];
	bool want_debuginfo;         /* PUT .../debuginfo */
	bool force;                  /* ?force=1 */
	struct evbuffer *in;         /* the body: evhttp's input buffer, untouched by the
				      * loop until the answer; pulled up on the worker */
	const uint8_t *data;         /* ... into one piece (on the worker) */
	size_t size;
	/* the worker's answer */
	int result;                  /* enum upload_result */
	int status;                  /* HTTP status */
	char text[SYM_ERROR_MSG_MAX + 128];
	bool has_alt;                /* a dwz file: its supplementary file's build ID */
	sym_build_id alt_id;
	/* with the S3 tier (issue 30): the decided write's reservation, and the
	 * S3 write the loop runs between the worker's decision and its commit */
	svc_file_reservation slot;
	bool reserved;
	struct svc_s3_put *s3op;     /* made by the worker, started by the loop */
	int s3_rc;                   /* its result (svc_errc), for the commit */
	char s3_err[SYM_ERROR_MSG_MAX];
} upload;

struct svc_upload {
	svc_upload_options o;
	char *token;                 /* NULL: uploads disabled */
	size_t token_len;
	upload *active;              /* first upload of each build ID in progress */
	unsigned in_flight;          /* uploads accepted, not answered yet */
	uint64_t results[UP_RESULTS];
	uint64_t bytes;              /* body bytes of stored uploads */
	uint64_t should[SHOULD_ANSWERS];
	svc_proxies proxies;         /* --trusted-proxies */
};

/* svc_upload_store.c: on a worker, checks u->data and stores it (or not),
 * filling result, status and text; with the S3 tier, decides and reserves
 * the write and leaves p->s3op for the loop to start (no answer yet). */
void svc_upload_store_work(void *job);
/* svc_upload_store.c: on a worker, after p->s3op's callback: the store's
 * write once S3 holds the file (else a 503), the reservation ended. */
void svc_upload_commit_work(void *job);

/* svc_upload_auth.c: reads the token file into u->token (trailing newline
 * and spaces dropped). False with err set when unreadable or empty. */
bool svc_upload_read_token(svc_upload *u, const char *path, svc_error *err);

#endif
