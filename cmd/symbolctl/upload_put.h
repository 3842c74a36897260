/* SPDX-License-Identifier: Apache-2.0 */
/*
 * upload_put: one PUT /buildid/ID/{debuginfo,executable} of symbolctl upload,
 * the file streamed from disk by libcurl with the bearer token, its progress
 * reported as bytes sent.
 */
#ifndef SYMBOLCTL_UPLOAD_PUT_H
#define SYMBOLCTL_UPLOAD_PUT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct upload_put {
	const char *server;      /* base URL */
	const char *hex;         /* build ID */
	const char *kind;        /* "debuginfo" or "executable" */
	const char *path;        /* the file */
	const char *token;
	bool force;              /* ?force=1 */
	/* called as bytes go out (sent of this file) */
	void (*progress)(void *arg, uint64_t sent);
	void *arg;
} upload_put;

typedef struct upload_put_result {
	long http_status;        /* 0: no answer (why says why) */
	char why[512];           /* the server's text, or the transport error */
	char result[32];         /* X-Symbolizer-Upload: stored, replaced, unchanged, ... */
	bool alt_missing;        /* X-Symbolizer-Alt: missing */
} upload_put_result;

/* False when the file cannot be read (why set); true once the server was asked
 * (whatever it answered: see res->http_status). */
bool upload_put_run(const upload_put *p, upload_put_result *res);

#endif
