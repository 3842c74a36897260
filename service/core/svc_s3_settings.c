// SPDX-License-Identifier: Apache-2.0
/*
 * svc_s3_settings: the S3 tier's flags and their checks (svc_s3_settings.h).
 */
#include "service/core/svc_s3_settings.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void svc_s3_settings_init(svc_s3_settings *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->region, sizeof(s->region), "us-east-1");
	s->timeout_ms = 30000;
	s->write_behind = 256;
}

static bool copy_into(char *dst, size_t cap, const char *val, char *err, size_t err_size)
{
	if (strlen(val) >= cap) {
		snprintf(err, err_size, "too long (at most %zu bytes)", cap - 1);
		return false;
	}
	snprintf(dst, cap, "%s", val);
	return true;
}

#define SETTER(fn, field)                                                              \
	static bool fn(void *obj, const char *val, char *err, size_t err_size)           \
	{                                                                                \
		svc_s3_settings *s = obj;                                                \
		return copy_into(s->field, sizeof(s->field), val, err, err_size);        \
	}
SETTER(set_endpoint, endpoint)
SETTER(set_bucket, bucket)
SETTER(set_region, region)
SETTER(set_credentials, credentials_file)
#undef SETTER

static bool set_prefix(void *obj, const char *val, char *err, size_t err_size)
{
	svc_s3_settings *s = obj;
	while (*val == '/')
		val++;
	if (!copy_into(s->prefix, sizeof(s->prefix), val, err, err_size))
		return false;
	size_t n = strlen(s->prefix);
	while (n && s->prefix[n - 1] == '/')
		s->prefix[--n] = '\0';
	return true;
}

#define F(name, meta, kind, field, max, help) \
	{name, meta, kind, offsetof(svc_s3_settings, field), max, NULL, help}
#define C(name, meta, fn, help) {name, meta, BASE_FLAG_CUSTOM, 0, 0, fn, help}
static const base_flag flags[] = {
	C("--s3-endpoint", "URL", set_endpoint,
	  "S3 API endpoint, an http or https URL: the shared tier\n"
	  "of uploads, fetched files and indexes; none by default"),
	C("--s3-bucket", "NAME", set_bucket, "the S3 bucket"),
	C("--s3-prefix", "P", set_prefix, "key prefix: objects are P/v1/<kind>/ab/cdef.../<what>"),
	C("--s3-region", "R", set_region, "SigV4 region (us-east-1)"),
	C("--s3-credentials-file", "FILE", set_credentials,
	  "aws_access_key_id / aws_secret_access_key lines;\n"
	  "default $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY"),
	F("--s3-virtual-host", NULL, BASE_FLAG_BOOL, virtual_host, 0,
	  "bucket.host addressing (default: path style)"),
	F("--s3-timeout", "DUR", BASE_FLAG_DURATION, timeout_ms, 0,
	  "deadline of one S3 request (30s)"),
	F("--s3-write-behind", "N", BASE_FLAG_INT, write_behind, 1000000,
	  "objects queued for write-behind at most (256)"),
};
#undef F
#undef C

base_flag_group svc_s3_settings_flags(svc_s3_settings *s)
{
	return (base_flag_group){"Shared S3 tier flags", flags, sizeof(flags) / sizeof(flags[0]),
				 s};
}

static bool bucket_ok(const char *b)
{
	size_t n = strlen(b);
	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '-' ||
		      b[i] == '.'))
			return false;
	return true;
}

svc_errc svc_s3_settings_check(const svc_s3_settings *s, svc_error *err)
{
	if (!svc_s3_enabled(s))
		return s->bucket[0] ? svc_error_set(err, SVC_E_INVALID,
						    "--s3-bucket needs --s3-endpoint")
				    : SVC_OK;
	if (strncasecmp(s->endpoint, "http://", 7) && strncasecmp(s->endpoint, "https://", 8))
		return svc_error_set(err, SVC_E_INVALID,
				     "--s3-endpoint: want an http:// or https:// URL");
	if (strchr(s->endpoint, '@'))
		return svc_error_set(err, SVC_E_INVALID,
				     "--s3-endpoint: no credentials in the URL "
				     "(--s3-credentials-file or AWS_* variables)");
	if (!bucket_ok(s->bucket))
		return svc_error_set(err, SVC_E_INVALID,
				     "--s3-bucket: want 3-63 characters of a-z, 0-9, '-', '.'");
	for (const char *p = s->region; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return svc_error_set(err, SVC_E_INVALID, "--s3-region: bad name");
	if (s->timeout_ms < 1)
		return svc_error_set(err, SVC_E_INVALID, "--s3-timeout must be positive");
	return SVC_OK;
}
