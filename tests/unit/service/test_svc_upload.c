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

TEST(trusted_proxies_name_the_client)
{
	svc_proxies p;
	svc_error err = {0};
	char out[64];
	REQUIRE(svc_proxies_parse(&p, "127.0.0.1, 10.0.0.0/8,::1", &err));
	CHECK_EQ_U(p.n, 3);
	/* A peer that is not trusted is the client, whatever it says. */
	REQUIRE(svc_proxies_client(&p, "192.0.2.7", "127.0.0.1", out, sizeof(out)));
	CHECK_STREQ(out, "192.0.2.7");
	/* A trusted peer: the rightmost untrusted hop of X-Forwarded-For. */
	REQUIRE(svc_proxies_client(&p, "127.0.0.1", "127.0.0.1, 203.0.113.9, 10.1.2.3", out,
				   sizeof(out)));
	CHECK_STREQ(out, "203.0.113.9");
	REQUIRE(svc_proxies_client(&p, "::ffff:127.0.0.1", "::1", out, sizeof(out)));
	CHECK_STREQ(out, "::1");
	REQUIRE(svc_proxies_client(&p, "127.0.0.1", NULL, out, sizeof(out)));
	CHECK_STREQ(out, "127.0.0.1");
	/* Malformed or huge: unknown (the upload is refused). */
	CHECK(!svc_proxies_client(&p, "127.0.0.1", "203.0.113.9, not-an-ip", out, sizeof(out)));
	CHECK(!svc_proxies_client(&p, "127.0.0.1", "", out, sizeof(out)) || out[0]);
	char *huge = malloc(SVC_FORWARDED_MAX + 10);
	REQUIRE(huge);
	memset(huge, '1', SVC_FORWARDED_MAX + 9);
	huge[SVC_FORWARDED_MAX + 9] = '\0';
	CHECK(!svc_proxies_client(&p, "127.0.0.1", huge, out, sizeof(out)));
	free(huge);
	/* No list: nobody is trusted. */
	REQUIRE(svc_proxies_parse(&p, NULL, &err));
	REQUIRE(svc_proxies_client(&p, "127.0.0.1", "203.0.113.9", out, sizeof(out)));
	CHECK_STREQ(out, "127.0.0.1");
	/* Bad lists name the entry. */
	CHECK(!svc_proxies_parse(&p, "10.0.0.0/33", &err) && strstr(err.msg, "10.0.0.0/33"));
	CHECK(!svc_proxies_parse(&p, "nginx", &err) && strstr(err.msg, "nginx"));
	CHECK(!svc_proxies_parse(&p, "10.0.0.0/", &err));
	/* A /8 block matches inside and not outside. */
	REQUIRE(svc_proxies_parse(&p, "10.0.0.0/8", &err));
	REQUIRE(svc_proxies_client(&p, "10.200.0.1", "198.51.100.1", out, sizeof(out)));
	CHECK_STREQ(out, "198.51.100.1");
	REQUIRE(svc_proxies_client(&p, "11.0.0.1", "198.51.100.1", out, sizeof(out)));
	CHECK_STREQ(out, "11.0.0.1");
}

TEST_MAIN()
