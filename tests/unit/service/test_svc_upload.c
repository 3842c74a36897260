// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_upload: who may upload (service/upload): the bearer token check
 * (scheme, spaces, prefixes, longer and empty tokens), the peer check
 * (IPv4 and IPv6 loopback, v4-mapped, other addresses, --upload-allow-remote)
 * and the token file (missing, empty, a token with a newline, one with spaces).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/stat.h>

#include "service/upload/svc_upload.h"

#include "test.h"

TEST(token)
{
	const char *t = "s3cret";
	CHECK(svc_upload_token_ok("Bearer s3cret", t, 6));
	CHECK(svc_upload_token_ok("bearer s3cret", t, 6));
	CHECK(svc_upload_token_ok("Bearer   s3cret  ", t, 6));
	CHECK(!svc_upload_token_ok(NULL, t, 6));
	CHECK(!svc_upload_token_ok("", t, 6));
	CHECK(!svc_upload_token_ok("s3cret", t, 6));
	CHECK(!svc_upload_token_ok("Basic s3cret", t, 6));
	CHECK(!svc_upload_token_ok("Bearer s3cre", t, 6));
	CHECK(!svc_upload_token_ok("Bearer s3crett", t, 6));
	CHECK(!svc_upload_token_ok("Bearer S3cret", t, 6));
	CHECK(!svc_upload_token_ok("Bearer ", t, 6));
	CHECK(!svc_upload_token_ok("Bearer s3cret", t, 0));
	CHECK(!svc_upload_token_ok("Bearer x", "", 0));
}

TEST(peer)
{
	CHECK(svc_upload_peer_allowed("127.0.0.1", false));
	CHECK(svc_upload_peer_allowed("127.0.0.2", false));
	CHECK(svc_upload_peer_allowed("127.255.1.9", false));
	CHECK(svc_upload_peer_allowed("::1", false));
	CHECK(svc_upload_peer_allowed("::ffff:127.0.0.5", false));
	CHECK(!svc_upload_peer_allowed("::ffff:10.0.0.5", false));
	CHECK(!svc_upload_peer_allowed("10.0.0.1", false));
	CHECK(!svc_upload_peer_allowed("128.0.0.1", false));
	CHECK(!svc_upload_peer_allowed("192.0.2.2", false));
	CHECK(!svc_upload_peer_allowed("fd00::2", false));
	CHECK(!svc_upload_peer_allowed("::", false));
	CHECK(!svc_upload_peer_allowed("localhost", false));
	CHECK(!svc_upload_peer_allowed("", false));
	CHECK(!svc_upload_peer_allowed(NULL, false));
	CHECK(svc_upload_peer_allowed("192.0.2.2", true));
	CHECK(svc_upload_peer_allowed("fd00::2", true));
}

static svc_upload *with_token_file_mode(const char *content, mode_t mode, svc_error *err)
{
	char path[] = "/tmp/test_svc_upload_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || fchmod(fd, mode) != 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	fputs(content, f);
	fclose(f);
	svc_upload_options o = {.token_file = path, .max_upload_bytes = 1};
	svc_upload *u = svc_upload_create(&o, err);
	unlink(path);
	return u;
}

static svc_upload *with_token_file(const char *content, svc_error *err)
{
	return with_token_file_mode(content, 0600, err);
}

TEST(token_file)
{
	svc_error err = {0};
	svc_upload_options o = {.token_file = "/nonexistent/token"};
	CHECK(svc_upload_create(&o, &err) == NULL && err.code == SVC_E_IO);
	o.token_file = NULL;
	svc_upload *u = svc_upload_create(&o, &err);
	REQUIRE(u);
	CHECK(!svc_upload_enabled(u));
	svc_upload_destroy(u);
	CHECK(with_token_file("", &err) == NULL && err.code == SVC_E_INVALID);
	CHECK(with_token_file("\n\n", &err) == NULL);
	CHECK(with_token_file("two words\n", &err) == NULL);
	/* Too short to be a secret: under 16 bytes. */
	CHECK(with_token_file("abc123\n", &err) == NULL && err.code == SVC_E_INVALID);
	CHECK(strstr(err.msg, "under 16 bytes") != NULL);
	CHECK(with_token_file("0123456789abcde\n", &err) == NULL);
	u = with_token_file("0123456789abcdef\n", &err);
	REQUIRE(u);
	CHECK(svc_upload_enabled(u));
	svc_upload_destroy(u);
	/* Open to the group or others, as sshd refuses a key file: refused. */
	const mode_t open_modes[] = {0644, 0640, 0604, 0620, 0602, 0660};
	for (size_t i = 0; i < sizeof(open_modes) / sizeof(open_modes[0]); i++) {
		err = (svc_error){0};
		CHECK(with_token_file_mode("0123456789abcdef\n", open_modes[i], &err) == NULL);
		CHECK(err.code == SVC_E_INVALID && strstr(err.msg, "chmod 600") != NULL);
	}
	u = with_token_file_mode("0123456789abcdef\n", 0400, &err);
	REQUIRE(u);
	svc_upload_destroy(u);
	svc_upload_destroy(NULL);
}

TEST_MAIN()
