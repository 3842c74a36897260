// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_config: the store/source flags, their value syntax, and the
 * upstream fallbacks (flag, then DEBUGINFOD_URLS, then the default server).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/core/svc_config.h"
#include "service/core/svc_url_display.h"

#include "test.h"

/* One argument through the config's flag table; err gets the text. */
static base_flag_result parse_arg(svc_config *c, int argc, char **argv, int *i, svc_error *err)
{
	base_flag_group g = svc_config_flags(c);
	base_flag_result r = base_flag_parse(&g, 1, argc, argv, i, err->msg, sizeof(err->msg));
	err->code = r == BASE_FLAG_BAD ? SVC_E_INVALID : SVC_OK;
	return r;
}

static int parse_all(svc_config *c, int argc, char **argv, svc_error *err)
{
	for (int i = 0; i < argc;) {
		base_flag_result r = parse_arg(c, argc, argv, &i, err);
		if (r == BASE_FLAG_BAD)
			return -1;
		if (r == BASE_FLAG_UNKNOWN)
			return i + 100; /* unknown at i */
	}
	return 0;
}

/* Runs svc_config_finish with the environment set as given (NULL: unset) and
 * returns its data dir (static). */
static const char *data_dir_with(const char *state, const char *xdg, const char *home,
				 const char *flag)
{
	static char out[PATH_MAX];
	const char *names[] = {"STATE_DIRECTORY", "XDG_STATE_HOME", "HOME"};
	const char *vals[] = {state, xdg, home};
	char *saved[3];
	for (int i = 0; i < 3; i++) {
		const char *v = getenv(names[i]);
		saved[i] = v ? strdup(v) : NULL;
		if (vals[i])
			setenv(names[i], vals[i], 1);
		else
			unsetenv(names[i]);
	}
	svc_config c;
	svc_config_init(&c);
	svc_error err = {0};
	char *argv[] = {"--data-dir", (char *)flag};
	int bad = flag ? parse_all(&c, 2, argv, &err) : 0;
	out[0] = '\0';
	if (!bad && svc_config_finish(&c, NULL, &err) == SVC_OK)
		snprintf(out, sizeof(out), "%s", c.data_dir);
	svc_config_deinit(&c);
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(names[i], saved[i], 1);
		else
			unsetenv(names[i]);
		free(saved[i]);
	}
	return out;
}

TEST(data_dir_default)
{
	/* systemd's StateDirectory= first (the first of several), then XDG, then HOME */
	CHECK_STREQ(data_dir_with("/var/lib/symbolizer", "/x", "/home/u", NULL), "/var/lib/symbolizer");
	CHECK_STREQ(data_dir_with("/var/lib/a:/var/lib/b", NULL, NULL, NULL), "/var/lib/a");
	CHECK_STREQ(data_dir_with(NULL, "/home/u/.st", "/home/u", NULL), "/home/u/.st/symbolizer");
	CHECK_STREQ(data_dir_with(NULL, "relative", "/home/u", NULL),
		    "/home/u/.local/state/symbolizer");
	CHECK_STREQ(data_dir_with(NULL, NULL, "/home/u", NULL), "/home/u/.local/state/symbolizer");
	/* No environment at all: ./symbolizer-data, made absolute */
	char cwd[PATH_MAX], want[PATH_MAX + 32];
	REQUIRE(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "%s/symbolizer-data", strcmp(cwd, "/") ? cwd : "");
	CHECK_STREQ(data_dir_with(NULL, NULL, NULL, NULL), want);
	/* A relative --data-dir is made absolute too: the log names where it is */
	snprintf(want, sizeof(want), "%s/st/x", strcmp(cwd, "/") ? cwd : "");
	CHECK_STREQ(data_dir_with("/var/lib/s", NULL, NULL, "./st/x"), want);
	CHECK_STREQ(data_dir_with(NULL, NULL, NULL, "/abs/dir"), "/abs/dir");
}

TEST(defaults)
{
	svc_config c;
	svc_config_init(&c);
	svc_error err = {0};
	REQUIRE(svc_config_finish(&c, NULL, &err) == SVC_OK);
	char want[PATH_MAX];
	REQUIRE(svc_config_default_data_dir(want, sizeof(want)));
	CHECK_STREQ(c.data_dir, want);
	CHECK(c.data_dir[0] == '/');
	REQUIRE(c.n_debug_dirs == 1);
	CHECK_STREQ(c.debug_dirs[0], "/usr/lib/debug");
	REQUIRE(c.n_upstreams == 1);
	CHECK_STREQ(c.upstreams[0], "https://debuginfod.elfutils.org");
	CHECK_EQ_U(c.negative_cache_ttl_ms, 600000);
	/* Errors are remembered much shorter than "not found". */
	CHECK(c.error_cache_ttl_ms * 10 <= c.negative_cache_ttl_ms);
	CHECK(c.max_concurrent_fetches >= c.max_fetches_per_upstream);
	svc_config_deinit(&c);
}

TEST(flags_both_forms)
{
	svc_config c;
	svc_config_init(&c);
	char *argv[] = {"--data-dir", "/var/lib/s", "--debug-dir=/a", "--debug-dir", "/b",
			"--debuginfod-upstream-servers=http://127.0.0.1:1/,https://x.example/d//",
			"--negative-cache-ttl=5m", "--error-cache-ttl", "1500ms",
			"--upstream-timeout=2", "--max-debuginfo-size=64M", "--max-store-bytes=1g",
			"--max-concurrent-fetches=3", "--max-fetches-per-upstream", "2",
			"--upstream-retries=0", "--upstream-breaker-failures=7",
			"--upstream-breaker-cooldown=1h", "--upstream-min-progress=10k"};
	int argc = (int)(sizeof(argv) / sizeof(argv[0]));
	svc_error err = {0};
	REQUIRE(parse_all(&c, argc, argv, &err) == 0);
	REQUIRE(svc_config_finish(&c, "http://ignored:1", &err) == SVC_OK);
	CHECK_STREQ(c.data_dir, "/var/lib/s");
	REQUIRE(c.n_debug_dirs == 2);
	CHECK_STREQ(c.debug_dirs[0], "/a");
	CHECK_STREQ(c.debug_dirs[1], "/b");
	REQUIRE(c.n_upstreams == 2);
	CHECK_STREQ(c.upstreams[0], "http://127.0.0.1:1");
	CHECK_STREQ(c.upstreams[1], "https://x.example/d");
	CHECK_EQ_U(c.negative_cache_ttl_ms, 300000);
	CHECK_EQ_U(c.error_cache_ttl_ms, 1500);
	CHECK_EQ_U(c.upstream_timeout_ms, 2000);
	CHECK_EQ_U(c.max_debuginfo_size, 64u << 20);
	CHECK_EQ_U(c.max_store_bytes, 1ull << 30);
	CHECK_EQ_U(c.max_concurrent_fetches, 3);
	CHECK_EQ_U(c.max_fetches_per_upstream, 2);
	CHECK_EQ_U(c.upstream_retries, 0);
	CHECK_EQ_U(c.upstream_breaker_failures, 7);
	CHECK_EQ_U(c.upstream_breaker_cooldown_ms, 3600000);
	CHECK_EQ_U(c.upstream_min_progress, 10240);
	svc_config_deinit(&c);
}

TEST(upstream_fallbacks)
{
	svc_error err = {0};
	svc_config c;
	/* DEBUGINFOD_URLS when the flag is absent: space-separated. */
	svc_config_init(&c);
	REQUIRE(svc_config_finish(&c, "http://127.0.0.1:2  http://127.0.0.1:3/", &err) == SVC_OK);
	REQUIRE(c.n_upstreams == 2);
	CHECK_STREQ(c.upstreams[1], "http://127.0.0.1:3");
	svc_config_deinit(&c);
	/* An empty flag: no upstream at all, the variable ignored. */
	svc_config_init(&c);
	char *argv[] = {"--debuginfod-upstream-servers=", "--debug-dir="};
	REQUIRE(parse_all(&c, 2, argv, &err) == 0);
	REQUIRE(svc_config_finish(&c, "http://127.0.0.1:2", &err) == SVC_OK);
	CHECK_EQ_U(c.n_upstreams, 0);
	CHECK_EQ_U(c.n_debug_dirs, 0);
	svc_config_deinit(&c);
	/* A bad URL in the variable is named. */
	svc_config_init(&c);
	CHECK(svc_config_finish(&c, "ftp://x", &err) == SVC_E_INVALID);
	CHECK(strstr(err.msg, "DEBUGINFOD_URLS") && strstr(err.msg, "ftp://x"));
	svc_config_deinit(&c);
}

TEST(bad_values)
{
	const char *bad[][2] = {
		{"--negative-cache-ttl", "ten"}, {"--upstream-timeout", "5y"},
		{"--max-debuginfo-size", "12Q"}, {"--max-store-bytes", "-1"},
		{"--max-concurrent-fetches", "x"}, {"--upstream-retries", "-2"},
		{"--debuginfod-upstream-servers", "127.0.0.1:8002"},
		{"--max-debuginfo-size", "99999999999999999999"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		svc_config c;
		svc_config_init(&c);
		char *argv[] = {(char *)bad[k][0], (char *)bad[k][1]};
		int i = 0;
		svc_error err = {0};
		CHECK(parse_arg(&c, 2, argv, &i, &err) == BASE_FLAG_BAD);
		CHECK(strstr(err.msg, bad[k][0] + 2) || strstr(err.msg, "URL"));
		svc_config_deinit(&c);
	}
	/* A flag at the end without its value. */
	svc_config c;
	svc_config_init(&c);
	char *argv[] = {"--data-dir"};
	int i = 0;
	svc_error err = {0};
	CHECK(parse_arg(&c, 1, argv, &i, &err) == BASE_FLAG_BAD);
	CHECK(strstr(err.msg, "missing value") != NULL);
	/* Not ours: untouched. */
	char *other[] = {"--listen=:8080", "--data-directory=x"};
	i = 0;
	CHECK(parse_arg(&c, 2, other, &i, &err) == BASE_FLAG_UNKNOWN);
	CHECK_EQ_U(i, 0);
	i = 1;
	CHECK(parse_arg(&c, 2, other, &i, &err) == BASE_FLAG_UNKNOWN);
	/* Zero limits are refused at finish. */
	char *zero[] = {"--max-concurrent-fetches=0"};
	i = 0;
	CHECK(parse_arg(&c, 1, zero, &i, &err) == BASE_FLAG_TAKEN);
	CHECK(svc_config_finish(&c, NULL, &err) == SVC_E_INVALID);
	svc_config_deinit(&c);
	svc_config_deinit(NULL);
}

TEST(parsers)
{
	int64_t ms;
	uint64_t sz;
	CHECK(base_parse_duration_ms("0", &ms) && ms == 0);
	CHECK(base_parse_duration_ms("1.5s", &ms) && ms == 1500);
	CHECK(base_parse_duration_ms("2h", &ms) && ms == 7200000);
	CHECK(!base_parse_duration_ms("", &ms));
	CHECK(!base_parse_duration_ms("s", &ms));
	CHECK(base_parse_size("0", &sz) && sz == 0);
	CHECK(base_parse_size("3KiB", &sz) && sz == 3072);
	CHECK(base_parse_size("2T", &sz) && sz == 2ull << 40);
	CHECK(!base_parse_size("1KX", &sz));
	CHECK(!base_parse_size("20000000T", &sz));
}

TEST(url_display_redacts_userinfo)
{
	char out[128];
	const char *cases[][2] = {
		{"http://alice:pw@host:8002/x", "http://***@host:8002/x"},
		{"https://token@host", "https://***@host"},
		{"http://u:p@ss@host/a@b", "http://***@host/a@b"}, /* the last @ of the authority */
		{"http://host/path@x", "http://host/path@x"},      /* an @ in the path is not userinfo */
		{"http://host?q=a@b", "http://host?q=a@b"},
		{"http://host", "http://host"},
		{"", ""},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		svc_url_display(cases[k][0], out, sizeof(out));
		if (strcmp(out, cases[k][1]))
			TEST_FAIL_("%s: got %s, want %s", cases[k][0], out, cases[k][1]);
		CHECK(svc_url_has_userinfo(cases[k][0]) == (strcmp(cases[k][0], cases[k][1]) != 0));
	}
	char tiny[8];
	svc_url_display("http://a:b@longhost", tiny, sizeof(tiny));
	CHECK(strlen(tiny) == 7 && !strstr(tiny, "a:b"));
	char *dup = svc_url_display_dup("http://x:secret@h");
	REQUIRE(dup != NULL);
	CHECK(!strcmp(dup, "http://***@h"));
	free(dup);
	/* A bad URL's error does not show its password either. */
	svc_config c;
	svc_config_init(&c);
	svc_error err = {0};
	CHECK(svc_config_set_upstreams(&c, "ftp://u:secret@h", &err) == SVC_E_INVALID);
	CHECK(!strstr(err.msg, "secret") && strstr(err.msg, "ftp://***@h"));
	svc_config_deinit(&c);
}

TEST(upstream_policy_flags)
{
	svc_config c;
	svc_config_init(&c);
	CHECK(c.upstream_redirects == SVC_REDIRECTS_SAME_HOST && c.upstream_netrc[0] == '\0');
	CHECK(c.upstream_busy_defer_ms == 1000);
	char *argv[] = {"--upstream-redirects=any", "--upstream-netrc", "/etc/netrc",
			"--upstream-busy-defer=250ms"};
	svc_error err = {0};
	CHECK(parse_all(&c, 4, argv, &err) == 0);
	CHECK(c.upstream_redirects == SVC_REDIRECTS_ANY);
	CHECK(!strcmp(c.upstream_netrc, "/etc/netrc"));
	CHECK(c.upstream_busy_defer_ms == 250);
	char *none[] = {"--upstream-redirects=none", "--upstream-netrc="};
	CHECK(parse_all(&c, 2, none, &err) == 0);
	CHECK(c.upstream_redirects == SVC_REDIRECTS_NONE && c.upstream_netrc[0] == '\0');
	char *bad[] = {"--upstream-redirects=sometimes"};
	CHECK(parse_all(&c, 1, bad, &err) == -1);
	CHECK(strstr(err.msg, "same-host") != NULL);
	svc_config_deinit(&c);
}

TEST_MAIN()
