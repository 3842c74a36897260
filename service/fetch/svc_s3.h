/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_s3: the client of the shared S3 tier (issue 30): a bucket on any S3
 * API (Ceph RGW, MinIO, AWS), signed with libcurl's SigV4
 * (CURLOPT_AWS_SIGV4), holding uploads (written and verified before they are
 * acknowledged), and the debug files and indexes replicas fetched or built
 * (written behind, through a bounded queue), so another replica, or the same
 * one with a new disk, reads them instead of fetching and building again.
 *
 * Objects are keyed by identity kind and value, in a versioned layout:
 *   PREFIX/v1/<kind>/ab/cdef.../debuginfo | executable | index-vN
 * and carry their SHA-256 (x-amz-meta-sha256, also sent as
 * x-amz-content-sha256, so the server checks the body on the way in); a
 * reader refuses a body whose size or checksum differs (svc_provider_s3.c).
 *
 * Reads of files run on the fetcher's multi handle as a provider
 * (svc_provider_s3.c); writes (svc_s3_put_*: PUT or multipart, then HEAD)
 * on the same multi handle, on the loop, the upload's answer waiting for
 * their callback; the write-behind queue is drained there too, and the
 * resolver's index reads go there (svc_fetcher_s3_read). The one blocking
 * request is the bucket check at start. The credentials live in this object only: no error text, log
 * line or metric carries them; a 401/403 from S3 after start turns the
 * client's credentials state to failing (svc_s3_auth_state: /status,
 * /metrics, one log line per change).
 *
 * Thread-safe (the counters are atomic; settings are read-only after create).
 */
#ifndef SVC_S3_H
#define SVC_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_error.h"
#include "service/core/svc_s3_settings.h"

typedef struct svc_s3 svc_s3;

/* Longest object key (S3 allows 1024 bytes). */
#define SVC_S3_KEY_MAX 1024
/* Largest credentials file read. */
#define SVC_S3_CREDENTIALS_MAX 65536
/* Bytes of a PUT above which it is refused (S3's single PUT limit: 5 GiB). */
#define SVC_S3_PUT_MAX (5ull << 30)
/* Objects of this size and more are written in a multipart upload, in parts
 * of SVC_S3_PART_SIZE (each one request, signed and checked on its own). */
#define SVC_S3_MULTIPART_MIN (64u << 20)
#define SVC_S3_PART_SIZE (16u << 20)

/* Reads the credentials (the file, else the AWS_* variables); NULL with err
 * set (naming the file or variable, never a value) when there are none. */
svc_s3 *svc_s3_create(const svc_s3_settings *s, const char *user_agent, svc_error *err);
/* Frees (what is queued is dropped); svc_s3_detach first when attached. */
void svc_s3_destroy(svc_s3 *s3);

struct event_base;
struct svc_http;
/* The loop's: the multi handle (svc_upstream_http.h) writes go on, and the
 * log sink of state changes (NULL: stderr). False with err set. */
bool svc_s3_attach(svc_s3 *s3, struct event_base *base, struct svc_http *http,
		   void (*log)(void *arg, const char *line), void *log_arg, svc_error *err);
/* Before the multi handle goes: writes in flight stop, with no callback
 * (their owners free them), the write-behind queue stops. Loop thread. */
void svc_s3_detach(svc_s3 *s3);

/* "s3://bucket/prefix", for display and metrics labels. */
const char *svc_s3_name(const svc_s3 *s3);

/* PREFIX/v1/<kind>/ab/cdef.../<what> into out; false when it does not fit. */
bool svc_s3_key(const svc_s3 *s3, const char *kind, const char *hex, const char *what, char *out,
		size_t cap);
/* The object's URL (path style or virtual host); false when it does not fit. */
bool svc_s3_url(const svc_s3 *s3, const char *key, char *out, size_t cap);
/* The request settings of a signed request on an easy handle (a CURL *): the
 * SigV4 scheme, the credentials, and x-amz-content-sha256 (UNSIGNED-PAYLOAD)
 * appended to *headers (a struct curl_slist **). False when out of memory. */
bool svc_s3_sign(const svc_s3 *s3, void *easy, void *headers);
/* The same as svc_http's prepare hook (svc_http_opts.prepare, its arg the
 * svc_s3): a GET of an object is signed with nothing else to set. */
bool svc_s3_sign_hook(const void *s3, void *easy, void *headers);

struct svc_http_result;
/* Whether a 200 answer of svc_http (asked with opts.hash) is the object as it
 * was written: the size it declared, and the body's SHA-256 equal to its
 * x-amz-meta-sha256. A reader serves nothing else. */
bool svc_s3_answer_verifies(const struct svc_http_result *res);

/* The bucket answers our credentials (a list of one key). Blocking. SVC_E_INVALID
 * (the server's error code: InvalidAccessKeyId, SignatureDoesNotMatch,
 * NoSuchBucket) as SVC_E_UNAUTHENTICATED or SVC_E_INVALID, SVC_E_UPSTREAM (unreachable, 5xx). */
svc_errc svc_s3_check(svc_s3 *s3, svc_error *err);

/* An object write (svc_s3_put.c): PUT, or a multipart upload from
 * SVC_S3_MULTIPART_MIN, then a HEAD that verifies size and checksum. */
typedef struct svc_s3_put svc_s3_put;
typedef void (*svc_s3_put_done_fn)(svc_s3_put *op, void *arg);
/* Any thread (a worker: the checksums of the object and its parts are
 * computed here). data must live until svc_s3_put_free unless copy. NULL
 * with err set: SVC_E_TOO_LARGE over SVC_S3_PUT_MAX, SVC_E_NOMEM. */
svc_s3_put *svc_s3_put_new(svc_s3 *s3, const char *key, const uint8_t *data, size_t size,
			   bool copy, svc_error *err);
/* Once written and verified, key is deleted too (204 or 404 both do): an
 * upload's file makes the index built from the file it replaces go. False
 * when the key does not fit. */
bool svc_s3_put_then_delete(svc_s3_put *op, const char *key);
/* Loop: starts (or starts again) the write; done(op, arg) comes from the
 * loop once it is verified or failed. False (nothing called; the reason in
 * svc_s3_put_result) when it could not start. */
bool svc_s3_put_start(svc_s3_put *op, svc_s3_put_done_fn done, void *arg);
/* SVC_OK once written and verified; SVC_E_UPSTREAM when S3 failed, is
 * slow or refused the credentials (the uploader's 503). */
svc_errc svc_s3_put_result(const svc_s3_put *op, svc_error *err);
const char *svc_s3_put_key(const svc_s3_put *op);
size_t svc_s3_put_size(const svc_s3_put *op);
/* Cancels a write in flight (no callback) and frees. NULL is a no-op. */
void svc_s3_put_free(svc_s3_put *op);

/* Queues a copy of data for a write-behind PUT (retried while S3 is down),
 * its checksums computed on the calling thread (a worker); false (counted
 * as dropped) when the queue is full or the client is not attached. */
bool svc_s3_behind(svc_s3 *s3, const char *key, const uint8_t *data, size_t size);

/* Counters, for metrics and tests. */
typedef struct svc_s3_stats {
	uint64_t puts_ok, puts_failed, put_bytes;
	uint64_t behind_queued, behind_written, behind_dropped, behind_retries;
	size_t behind_len;       /* queued now */
	uint64_t gets_ok, gets_missing, gets_failed, gets_bad, get_bytes;
} svc_s3_stats;

void svc_s3_get_stats(const svc_s3 *s3, svc_s3_stats *out);
/* Counts one read (svc_provider_s3.c): ok (bytes), missing, failed (5xx,
 * network), bad (a size or checksum that does not match: never served). */
void svc_s3_count_get(svc_s3 *s3, int what, uint64_t bytes);
enum { SVC_S3_GET_OK, SVC_S3_GET_MISSING, SVC_S3_GET_FAILED, SVC_S3_GET_BAD };

/* The credentials' state: OK until S3 answers a request 401 or 403, FAILING
 * until one succeeds again (each change logged once, no secret). */
typedef enum svc_s3_auth { SVC_S3_AUTH_OK = 0, SVC_S3_AUTH_FAILING } svc_s3_auth;
svc_s3_auth svc_s3_auth_state(const svc_s3 *s3, long *last_status, uint64_t *failures);
/* Every answer S3 gave (any status; svc_provider_s3.c, svc_s3_put.c). */
void svc_s3_note_status(svc_s3 *s3, long status);

/* symbolizer_s3_* families into out. */
void svc_s3_metrics_render(const svc_s3 *s3, base_buf *out);

/* Parses a credentials file's text (AWS shared-credentials lines
 * "aws_access_key_id = V" and "aws_secret_access_key = V"; the first of each
 * wins; '#' and ';' comments, [profile] lines ignored). False with err set
 * (never quoting a value) when one is missing or too long. */
bool svc_s3_credentials_parse(const char *text, size_t len, char *key, size_t key_cap,
			      char *secret, size_t secret_cap, svc_error *err);

#endif
