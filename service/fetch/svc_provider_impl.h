/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_provider_impl: an upstream as a provider, behind one table of
 * operations (as drgn's drgn_debug_info_finder_ops and curl's struct
 * Curl_protocol): internal to service/fetch/.
 *
 * A provider is one configured upstream of one protocol. Its ops start one
 * request for a build ID and a kind (debuginfo, executable, a source file),
 * cancel it, and classify what came back: found (a file, to be checked and
 * stored), not found, too large, a retryable error (counted against the
 * server's circuit breaker, retried with backoff) or rejected (a final error
 * that says nothing of the server's health: our side failed, a redirect the
 * policy refuses, a client error). The walk, the download queue, the breakers
 * and the source relay drive providers through these ops only: they never
 * see a URL path. Every provider runs over the fetcher's libcurl transport
 * (svc_upstream_http.h), so a request's raw result is an svc_http_result.
 *
 * The protocols are rows of svc_provider_kinds (svc_provider_table.c), chosen
 * by the configured URL's scheme: a new protocol is its own file with a
 * const svc_provider_ops and one row there (docs/internals/adding-a-source.md).
 *
 * Loop thread only.
 */
#ifndef SVC_PROVIDER_IMPL_H
#define SVC_PROVIDER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/core/svc_config.h"
#include "service/core/svc_error.h"
#include "service/fetch/svc_upstream_http.h"
#include "symbolizer/sym_build_id.h"

/* What a request asks for. */
typedef enum svc_provider_want {
	SVC_WANT_DEBUGINFO = 0,
	SVC_WANT_EXECUTABLE,
	SVC_WANT_SOURCE,         /* a source file of the build ID (ask.path) */
} svc_provider_want;

typedef struct svc_provider_ask {
	const char *hex;         /* the build ID, lowercase hex */
	svc_provider_want want;
	const char *path;        /* SOURCE: the file's path as the client gave it */
	int64_t total_ms;        /* the request's deadline from now */
	uint64_t max_size;       /* cap on the body */
	uint8_t id_kind;         /* sym_id_kind of the identity (0: GNU build ID) */
} svc_provider_ask;

/* What an answer means (classify). */
typedef enum svc_answer_class {
	SVC_ANSWER_FOUND = 0,    /* a file: body or fd */
	SVC_ANSWER_NOT_FOUND,
	SVC_ANSWER_TOO_LARGE,    /* over the cap (every server has the same cap) */
	SVC_ANSWER_RETRY,        /* a server's failure: retry, count against its breaker */
	SVC_ANSWER_REJECTED,     /* a final error, not the server's health */
} svc_answer_class;

typedef struct svc_provider_answer {
	svc_answer_class cls;
	bool answered;           /* the server answered (a complete response) */
	bool ours;               /* REJECTED: our side failed (worth a log line) */
	char why[200];           /* what it said, short: "HTTP 404", "timeout: ..." */
	char detail[200];        /* the longer text for errors ("" : why) */
	/* FOUND: the file, taken from the raw result (body or fd, one of them). */
	uint8_t *body;
	int fd;
	size_t size;
} svc_provider_answer;

/* What every provider of a fetcher shares. */
typedef struct svc_provider_env {
	svc_http *http;          /* the transport */
	const svc_config *cfg;   /* timeouts, progress, netrc, redirects */
	const char *spool_dir;   /* bodies land here; NULL: in memory */
	struct svc_s3 *s3;       /* the S3 tier's client (svc_s3.h); NULL: none */
} svc_provider_env;

typedef struct svc_provider svc_provider;
typedef struct svc_provider_req svc_provider_req;

typedef struct svc_provider_ops {
	const char *name;        /* "debuginfod" */
	/* The identity kinds it can be asked for: bit (1u << sym_id_kind) each
	 * (debuginfod: GNU build IDs only, the protocol has no other name). */
	unsigned id_kinds;
	/* One upstream at url (as configured, credentials included); peer: of
	 * the peer tier. NULL with err set. */
	svc_provider *(*create)(const svc_provider_env *env, const char *url, bool peer,
				svc_error *err);
	void (*destroy)(svc_provider *p);
	/* Starts one request; done is called later on the loop, exactly once,
	 * unless cancelled. NULL (err set) when it cannot start. */
	svc_provider_req *(*start)(svc_provider *p, const svc_provider_ask *ask,
				   svc_http_done_fn done, void *arg, svc_error *err);
	/* Stops a request that has not ended; done is not called. */
	void (*cancel)(svc_provider_req *req);
	/* What the ended request's raw result means; a FOUND file is moved into
	 * out (res keeps nothing of it). */
	void (*classify)(svc_provider *p, const svc_provider_ask *ask, svc_http_result *res,
			 svc_provider_answer *out);
} svc_provider_ops;

/* Every provider starts with this header (an implementation embeds it first). */
struct svc_provider {
	const svc_provider_ops *ops;
};

/* A row of the table: a protocol, and the URL schemes it serves. */
typedef struct svc_provider_kind {
	const char *name;
	const char *const *schemes;  /* NULL-terminated, lowercase */
	const svc_provider_ops *ops;
} svc_provider_kind;

/* The table, ended by a row with a NULL name. */
extern const svc_provider_kind svc_provider_kinds[];

/* The row whose scheme url has; NULL (err: the scheme and the known ones) when none. */
const svc_provider_kind *svc_provider_kind_for(const char *url, svc_error *err);

/* A provider for url through the table; NULL with err set (prefixed with url
 * for display). */
svc_provider *svc_provider_create(const svc_provider_env *env, const char *url,
				  const char *display, bool peer, svc_error *err);

static inline void svc_provider_destroy(svc_provider *p)
{
	if (p)
		p->ops->destroy(p);
}

/* ---- debuginfod over libcurl (svc_provider_debuginfod.c) ---- */

extern const svc_provider_ops svc_provider_debuginfod_ops;

/* ---- the shared S3 tier (svc_provider_s3.c), scheme "s3": env->s3 ---- */

extern const svc_provider_ops svc_provider_s3_ops;

/* Longest URL it builds; longer ones are refused, never cut. */
#define SVC_FETCH_URL_MAX 65536

/*
 * A debuginfod URL, "{base}" + the build ID's path + "/{what}", in a
 * malloc'ed string of exactly its length; NULL with SVC_E_INVALID when it
 * would be over SVC_FETCH_URL_MAX bytes, or SVC_E_NOMEM.
 */
char *svc_fetch_url(const char *base, const char *hex, const char *what, svc_error *err);

#endif
