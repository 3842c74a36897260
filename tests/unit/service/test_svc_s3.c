// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_s3: the S3 tier's pieces that need no server (the requests are
 * tested against a real radosgw and a lying S3 in tests/integration/s3_test.py):
 * the settings' checks and flags, the credentials parser (good, hostile,
 * truncated, huge; errors never quote a value), the key layout and both URL
 * styles, SHA-256, and a client that refuses to start without credentials.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base_sha256.h"

#include "service/core/svc_config.h"
#include "service/fetch/svc_s3.h"
#include "test.h"

static void settings(svc_s3_settings *s, const char *ep, const char *bucket)
{
	svc_s3_settings_init(s);
	snprintf(s->endpoint, sizeof(s->endpoint), "%s", ep);
	snprintf(s->bucket, sizeof(s->bucket), "%s", bucket);
}

TEST(settings_checks)
{
	svc_s3_settings s;
	svc_error err = {0};
	svc_s3_settings_init(&s);
	CHECK(!svc_s3_enabled(&s) && svc_s3_settings_check(&s, &err) == SVC_OK);
	settings(&s, "http://127.0.0.1:7480", "bk");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_E_INVALID && strstr(err.msg, "--s3-bucket"));
	settings(&s, "http://127.0.0.1:7480", "Upper");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_E_INVALID);
	settings(&s, "ftp://h", "bucket");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_E_INVALID && strstr(err.msg, "--s3-endpoint"));
	settings(&s, "http://key:secret@h", "bucket");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_E_INVALID && !strstr(err.msg, "secret@"));
	settings(&s, "https://s3.example", "my.bucket-1");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_OK);
	svc_s3_settings_init(&s);
	snprintf(s.bucket, sizeof(s.bucket), "bucket");
	CHECK(svc_s3_settings_check(&s, &err) == SVC_E_INVALID); /* a bucket, no endpoint */
}

TEST(flags_set_the_config)
{
	svc_config c;
	svc_config_init(&c);
	base_flag_group g = svc_s3_settings_flags(&c.s3);
	char *argv[] = {"x", "--s3-endpoint", "http://h:1/", "--s3-bucket=b-1", "--s3-prefix=/a/b/",
			"--s3-virtual-host", "--s3-region", "eu-west-1", "--s3-write-behind", "7"};
	char why[BASE_FLAG_ERR_MAX];
	for (int i = 1; i < 10;)
		REQUIRE(base_flag_parse(&g, 1, 10, argv, &i, why, sizeof(why)) == BASE_FLAG_TAKEN);
	CHECK_STREQ(c.s3.endpoint, "http://h:1/");
	CHECK_STREQ(c.s3.bucket, "b-1");
	CHECK_STREQ(c.s3.prefix, "a/b");
	CHECK_STREQ(c.s3.region, "eu-west-1");
	CHECK(c.s3.virtual_host);
	CHECK_EQ_U(c.s3.write_behind, 7);
	svc_config_deinit(&c);
}

TEST(credentials_parse)
{
	char k[64], s[64];
	svc_error err = {0};
	const char ok[] = "# comment\n[default]\n  aws_access_key_id = AKID \r\n"
			  "aws_secret_access_key=sec=ret\naws_access_key_id = OTHER\n";
	REQUIRE(svc_s3_credentials_parse(ok, strlen(ok), k, sizeof(k), s, sizeof(s), &err));
	CHECK_STREQ(k, "AKID");
	CHECK_STREQ(s, "sec=ret");
	const char no_secret[] = "aws_access_key_id = AKID\naws_secret_access_key_x = y\n";
	CHECK(!svc_s3_credentials_parse(no_secret, strlen(no_secret), k, sizeof(k), s, sizeof(s),
					&err));
	CHECK(strstr(err.msg, "aws_secret_access_key") && !strstr(err.msg, "AKID"));
	const char empty[] = "aws_access_key_id =\naws_secret_access_key = s\n";
	CHECK(!svc_s3_credentials_parse(empty, strlen(empty), k, sizeof(k), s, sizeof(s), &err));
	char long_value[200];
	snprintf(long_value, sizeof(long_value), "aws_access_key_id = %0150d\n", 7);
	CHECK(!svc_s3_credentials_parse(long_value, strlen(long_value), k, sizeof(k), s, sizeof(s),
					&err));
	CHECK(!strstr(err.msg, "0000"));
	const char nul[] = "aws_access_key_id = a\0b\naws_secret_access_key = s\n";
	CHECK(!svc_s3_credentials_parse(nul, sizeof(nul) - 1, k, sizeof(k), s, sizeof(s), &err));
	char *huge = calloc(1, SVC_S3_CREDENTIALS_MAX + 2);
	REQUIRE(huge);
	memset(huge, '\n', SVC_S3_CREDENTIALS_MAX + 1);
	CHECK(!svc_s3_credentials_parse(huge, SVC_S3_CREDENTIALS_MAX + 1, k, sizeof(k), s,
					sizeof(s), &err));
	free(huge);
}

TEST(keys_and_urls)
{
	svc_s3_settings set;
	settings(&set, "http://127.0.0.1:7480/", "bucket");
	snprintf(set.prefix, sizeof(set.prefix), "pre/fix");
	setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "SECRET", 1);
	svc_error err = {0};
	svc_s3 *s3 = svc_s3_create(&set, "ua", &err);
	REQUIRE(s3);
	CHECK_STREQ(svc_s3_name(s3), "s3://bucket/pre/fix");
	char key[SVC_S3_KEY_MAX], url[2048];
	REQUIRE(svc_s3_key(s3, "gnu", "abcdef01", "debuginfo", key, sizeof(key)));
	CHECK_STREQ(key, "pre/fix/v1/gnu/ab/cdef01/debuginfo");
	REQUIRE(svc_s3_url(s3, key, url, sizeof(url)));
	CHECK_STREQ(url, "http://127.0.0.1:7480/bucket/pre/fix/v1/gnu/ab/cdef01/debuginfo");
	CHECK(!svc_s3_key(s3, "gnu", "ab", "debuginfo", key, sizeof(key)));   /* too short */
	CHECK(!svc_s3_key(s3, "gnu", "abcdef01", "debuginfo", key, 10));    /* no room */
	svc_s3_destroy(s3);
	set.virtual_host = true;
	set.prefix[0] = '\0';
	REQUIRE((s3 = svc_s3_create(&set, "ua", &err)));
	REQUIRE(svc_s3_key(s3, "gnu", "abcdef01", "index-v6", key, sizeof(key)));
	CHECK_STREQ(key, "v1/gnu/ab/cdef01/index-v6");
	REQUIRE(svc_s3_url(s3, key, url, sizeof(url)));
	CHECK_STREQ(url, "http://bucket.127.0.0.1:7480/v1/gnu/ab/cdef01/index-v6");
	svc_s3_stats st;
	svc_s3_get_stats(s3, &st);
	CHECK_EQ_U(st.puts_ok + st.gets_ok + st.behind_queued, 0);
	svc_s3_destroy(s3);
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK(!svc_s3_create(&set, "ua", &err) && strstr(err.msg, "no credentials"));
	snprintf(set.credentials_file, sizeof(set.credentials_file), "/nonexistent/creds");
	CHECK(!svc_s3_create(&set, "ua", &err) && strstr(err.msg, "/nonexistent/creds"));
	unsetenv("AWS_ACCESS_KEY_ID");
}

TEST(sha256)
{
	char hex[65];
	base_sha256_hex((const uint8_t *)"abc", 3, hex);
	CHECK_STREQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_MAIN()
