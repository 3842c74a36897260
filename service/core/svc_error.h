/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_error: the service's one error vocabulary. Every failure of the
 * service's own (a request refused, a source that failed, shutting down)
 * has a code here; the table in svc_error.c gives each code its stable name,
 * its Connect code and its HTTP status, so the RPC layer, the debuginfod
 * endpoints and the logs all say the same thing. Lower layers keep their own
 * vocabularies (sym_error, stor_error); svc_error_from_sym() and
 * svc_error_from_stor() translate at the boundary.
 *
 * An svc_error is a fixed-size value (reporting never allocates): pass it
 * by pointer, copy it by assignment, never through "%s" into another buffer.
 */
#ifndef SVC_ERROR_H
#define SVC_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

#include "storage/stor_db.h"
#include "symbolizer/sym_error.h"

/* The Connect protocol's codes (https://connectrpc.com/docs/protocol#error-codes). */
typedef enum svc_connect_code {
	SVC_CONNECT_OK = 0,
	SVC_CONNECT_CANCELED,
	SVC_CONNECT_UNKNOWN,
	SVC_CONNECT_INVALID_ARGUMENT,
	SVC_CONNECT_DEADLINE_EXCEEDED,
	SVC_CONNECT_NOT_FOUND,
	SVC_CONNECT_ALREADY_EXISTS,
	SVC_CONNECT_PERMISSION_DENIED,
	SVC_CONNECT_RESOURCE_EXHAUSTED,
	SVC_CONNECT_FAILED_PRECONDITION,
	SVC_CONNECT_ABORTED,
	SVC_CONNECT_OUT_OF_RANGE,
	SVC_CONNECT_UNIMPLEMENTED,
	SVC_CONNECT_INTERNAL,
	SVC_CONNECT_UNAVAILABLE,
	SVC_CONNECT_DATA_LOSS,
	SVC_CONNECT_UNAUTHENTICATED,
	SVC_CONNECT_N_CODES
} svc_connect_code;

typedef enum svc_errc {
	SVC_OK = 0,
	/* A caller's request we refuse. */
	SVC_E_INVALID,          /* malformed request, header or flag value */
	SVC_E_NOT_FOUND,        /* no route, no source has the build ID */
	SVC_E_UNIMPLEMENTED,    /* unknown method or Content-Encoding */
	SVC_E_METHOD,           /* wrong HTTP method for the route (405) */
	SVC_E_MEDIA_TYPE,       /* unsupported Content-Type (415) */
	SVC_E_TOO_LARGE,        /* over a size cap (a body, a batch, a file) */
	SVC_E_OVERLOADED,       /* too many calls in progress */
	SVC_E_UNAUTHENTICATED,  /* missing or wrong credentials */
	/* Ours or our sources'. */
	SVC_E_NOMEM,            /* out of memory */
	SVC_E_DEADLINE,         /* the caller's deadline passed */
	SVC_E_SHUTTING_DOWN,    /* the server is stopping */
	SVC_E_UPSTREAM,         /* sources failed (HTTP errors, timeouts); try again later */
	SVC_E_BAD_FILE,         /* a file failed its checks (not ELF, build ID mismatch) */
	SVC_E_NO_SYMBOLS,       /* a file with neither debug info nor symbols */
	SVC_E_STORE,            /* the store failed */
	SVC_E_NO_SPACE,         /* the store's disk cannot take this file (507) */
	SVC_E_IO,               /* local I/O failed */
	SVC_E_INTERNAL,         /* a bug or an unexpected library failure */
	SVC_E_N_CODES
} svc_errc;

#define SVC_ERROR_MSG_MAX 256

typedef struct svc_error {
	svc_errc code;
	char msg[SVC_ERROR_MSG_MAX];
} svc_error;

/* Sets *err (when not NULL) and returns code, for `return svc_error_set(...)`. */
svc_errc svc_error_set(svc_error *err, svc_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
svc_errc svc_error_vset(svc_error *err, svc_errc code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Prefixes the message with "what: " (context as it propagates up). */
void svc_error_prefix(svc_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets err from a lower layer's error, prefixed with what (may be NULL). */
svc_errc svc_error_from_sym(svc_error *err, const sym_error *from, const char *what);
svc_errc svc_error_from_stor(svc_error *err, stor_errc code, const stor_error *from,
			     const char *what);

/* The table: a stable snake_case name ("too_large"), a Connect code, an HTTP status. */
const char *svc_errc_name(svc_errc code);
svc_connect_code svc_errc_connect(svc_errc code);
int svc_errc_http_status(svc_errc code);

/* Connect's names ("invalid_argument") and the statuses Connect maps them to. */
const char *svc_connect_code_name(svc_connect_code code);
int svc_connect_http_status(svc_connect_code code);

#endif
