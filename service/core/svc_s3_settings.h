/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_s3_settings: the operator's settings of the shared S3 tier (issue 30)
 * and the flags that set them, a group of their own next to svc_config's
 * (the daemon lists both; svc_config embeds this struct, so the fetcher's
 * copy of the configuration carries it).
 *
 *   --s3-endpoint URL          http(s)://host[:port] of the S3 API; setting it
 *                              (with --s3-bucket) turns the tier on
 *   --s3-bucket NAME           the bucket (3-63 of [a-z0-9.-])
 *   --s3-prefix P              key prefix, objects are P/v1/<kind>/ab/cdef.../<what>
 *   --s3-region R              SigV4 region (us-east-1)
 *   --s3-credentials-file F    the access key and secret (AWS shared-credentials
 *                              lines aws_access_key_id / aws_secret_access_key);
 *                              absent: $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY
 *   --s3-virtual-host          bucket.host addressing (default: path style)
 *   --s3-timeout DUR           deadline of one S3 request (30s)
 *   --s3-write-behind N        objects queued for write-behind at most (256)
 *
 * Credentials are never part of these settings: the fetcher reads them when it
 * creates the S3 client (svc_s3.h), and no log line, error or metric shows them.
 */
#ifndef SVC_S3_SETTINGS_H
#define SVC_S3_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base_flag.h"
#include "service/core/svc_error.h"

typedef struct svc_s3_settings {
	char endpoint[512];          /* "" = no S3 tier */
	char bucket[64];
	char prefix[256];
	char region[64];
	char credentials_file[1024];
	bool virtual_host;
	int64_t timeout_ms;
	int write_behind;
} svc_s3_settings;

void svc_s3_settings_init(svc_s3_settings *s);

/* The flags above bound to s. */
base_flag_group svc_s3_settings_flags(svc_s3_settings *s);

/* Whether the tier is configured (an endpoint). */
static inline bool svc_s3_enabled(const svc_s3_settings *s)
{
	return s->endpoint[0] != '\0';
}

/* Checks a configured tier (a bucket, a valid name, an http(s) endpoint). */
svc_errc svc_s3_settings_check(const svc_s3_settings *s, svc_error *err);

#endif
