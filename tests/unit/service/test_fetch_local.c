// SPDX-License-Identifier: Apache-2.0
/*
 * test_fetch_local: the fetcher on a real event loop with local debug dirs as
 * the only source (no network): the .build-id layout, the build-ID check,
 * single flight, asynchronous callbacks, store caching and the negative cache,
 * the executable fallback, and shutdown with fetches in flight. The ELF files
 * are the c_stripped fixture's debug file and its stripped executable (same
 * build ID), compiled with -g whatever this tree's build type.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/fetch/svc_fetcher.h"
#include "test.h"

static char self_path[4096], exe_path[4096];
static sym_build_id self_id;

struct ctx {
	int calls;
	svc_fetch_result last;
};

static void on_result(const svc_fetch_result *res, void *arg)
{
	struct ctx *c = arg;
	c->calls++;
	c->last = *res;
}

static bool load_self(void)
{
	if (self_id.len)
		return true;
	snprintf(self_path, sizeof(self_path), "%s/c_stripped.debug", TEST_FIXTURE_DIR);
	snprintf(exe_path, sizeof(exe_path), "%s/c_stripped", TEST_FIXTURE_DIR);
	size_t size;
	uint8_t *data = test_read_file(self_path, &size);
	sym_elf_info info;
	bool ok = data && sym_elf_probe(data, size, &info, NULL) == SYM_OK &&
		  info.build_id.len >= 2 && info.has_debug_info;
	if (ok)
		self_id = info.build_id;
	free(data);
	return ok;
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[20000];
	if ((size_t)snprintf(cmd, sizeof(cmd), fmt, a, b) >= sizeof(cmd))
		return -1;
	return system(cmd);
}

/* DIR/.build-id/xx/rest[.debug] <- src */
static void place(const char *dir, const sym_build_id *id, const char *suffix, const char *src)
{
	char hex[SYM_BUILD_ID_HEX_MAX], path[8192], sub[4096];
	sym_build_id_to_hex(id, hex);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	snprintf(path, sizeof(path), "%s/%s%s", sub, hex + 2, suffix);
	if (sh("mkdir -p '%s' && true '%s'", sub, "") != 0 || sh("cp '%s' '%s'", src, path) != 0)
		fprintf(stderr, "cannot place %s\n", path);
}

struct env {
	char dir[64];
	char debug_dir[128];
	char data_dir[128];
	struct event_base *base;
	stor_db *store;
	svc_config cfg;
	svc_fetcher *f;
};

static bool env_init(struct env *e, bool with_debug_dir)
{
	memset(e, 0, sizeof(*e));
	if (!load_self()) {
		fprintf(stderr, "cannot read the c_stripped.debug fixture and its build ID\n");
		return false;
	}
	strcpy(e->dir, "/tmp/fetch_local_XXXXXX");
	if (!mkdtemp(e->dir))
		return false;
	snprintf(e->debug_dir, sizeof(e->debug_dir), "%s/debug", e->dir);
	snprintf(e->data_dir, sizeof(e->data_dir), "%s/data", e->dir);
	mkdir(e->debug_dir, 0755);
	svc_config_init(&e->cfg);
	char arg_dir[256], arg_data[256];
	snprintf(arg_dir, sizeof(arg_dir), "--debug-dir=%s", with_debug_dir ? e->debug_dir : "");
	snprintf(arg_data, sizeof(arg_data), "--data-dir=%s", e->data_dir);
	char *argv[] = {arg_dir, arg_data, "--debuginfod-upstream-servers=", "--negative-cache-ttl=1h"};
	base_flag_group g = svc_config_flags(&e->cfg);
	char why[BASE_FLAG_ERR_MAX];
	for (int i = 0; i < 4;)
		if (base_flag_parse(&g, 1, 4, argv, &i, why, sizeof(why)) != BASE_FLAG_TAKEN)
			return false;
	if (svc_config_finish(&e->cfg, NULL, NULL) != SVC_OK)
		return false;
	stor_options so;
	stor_options_init(&so);
	so.path = e->data_dir;
	so.sync_writes = false;
	if (stor_open(&so, &e->store, NULL) != STOR_OK)
		return false;
	e->base = event_base_new();
	svc_fetcher_options fo = {.base = e->base, .store = e->store, .config = &e->cfg};
	svc_error err = {0};
	e->f = svc_fetcher_create(&fo, &err);
	if (!e->f)
		fprintf(stderr, "fetcher: %s\n", err.msg);
	return e->f != NULL;
}

static void env_run(struct env *e, struct ctx *c, int want_calls)
{
	while (c->calls < want_calls)
		if (event_base_loop(e->base, EVLOOP_ONCE) < 0)
			break;
}

static void env_deinit(struct env *e)
{
	svc_fetcher_destroy(e->f);
	stor_close(e->store);
	if (e->base)
		event_base_free(e->base);
	svc_config_deinit(&e->cfg);
	sh("rm -rf '%s'%s", e->dir, "");
}

TEST(local_hit_single_flight_then_cached)
{
	struct env e;
	REQUIRE(env_init(&e, true));
	place(e.debug_dir, &self_id, ".debug", self_path);
	struct ctx c = {0};
	for (int i = 0; i < 5; i++)
		REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
					on_result, &c) == SVC_OK);
	/* Callbacks never run inside svc_fetch_start. */
	CHECK_EQ_U(c.calls, 0);
	env_run(&e, &c, 5);
	CHECK_EQ_U(c.calls, 5);
	CHECK_EQ_U(c.last.status, SVC_FETCH_OK);
	CHECK_EQ_U(c.last.kind, STOR_KIND_DEBUGINFO);
	CHECK(!c.last.cached);
	CHECK_STREQ(c.last.source, e.debug_dir);
	CHECK(sym_build_id_equal(&c.last.build_id, &self_id));
	svc_fetcher_stats st;
	svc_fetcher_get_stats(e.f, &st);
	CHECK_EQ_U(st.started, 5);
	CHECK_EQ_U(st.joined, 4);
	CHECK_EQ_U(st.local_hits, 1);
	CHECK_EQ_U(st.in_flight, 0);

	/* The store holds the same bytes; the next fetch is a cache hit. */
	stor_blob b;
	stor_meta m;
	REQUIRE(stor_get_file(e.store, self_id.bytes, self_id.len, &b, &m, NULL) == STOR_OK);
	CHECK_EQ_U(b.size, c.last.size);
	CHECK_STREQ(m.source, e.debug_dir);
	stor_blob_release(&b);
	struct ctx c2 = {0};
	REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c2) == SVC_OK);
	env_run(&e, &c2, 1);
	CHECK(c2.last.cached);
	CHECK_EQ_U(c2.last.status, SVC_FETCH_OK);
	stor_stats ss;
	stor_get_stats(e.store, &ss);
	CHECK_EQ_U(ss.pinned, 0); /* pins released after the callbacks */
	env_deinit(&e);
}

TEST(not_found_is_negative_cached)
{
	struct env e;
	REQUIRE(env_init(&e, true));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("abcdef0123", 10, &id));
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	env_run(&e, &c, 1);
	CHECK_EQ_U(c.last.status, SVC_FETCH_NOT_FOUND);
	CHECK(!c.last.cached);
	CHECK(strstr(c.last.error, "1 debug dir") != NULL);
	stor_meta m;
	REQUIRE(stor_get_meta(e.store, id.bytes, id.len, &m, NULL) == STOR_OK);
	CHECK_EQ_U(m.state, STOR_STATE_NOT_FOUND);
	CHECK(m.neg_expiry > m.fetch_time + 3500 * 1000);
	/* Even once the file appears, the negative entry answers until it expires. */
	place(e.debug_dir, &self_id, ".debug", self_path);
	struct ctx c2 = {0};
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c2) == SVC_OK);
	env_run(&e, &c2, 1);
	CHECK(c2.last.cached);
	CHECK_EQ_U(c2.last.status, SVC_FETCH_NOT_FOUND);
	env_deinit(&e);
}

TEST(wrong_build_id_is_rejected)
{
	struct env e;
	REQUIRE(env_init(&e, true));
	sym_build_id other;
	REQUIRE(sym_build_id_from_hex("0011223344556677", 16, &other));
	place(e.debug_dir, &other, ".debug", self_path); /* our file, another ID's path */
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &other, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	env_run(&e, &c, 1);
	CHECK_EQ_U(c.last.status, SVC_FETCH_NOT_FOUND);
	CHECK(strstr(c.last.error, "build ID mismatch") != NULL);
	stor_blob b;
	CHECK(stor_get_file(e.store, other.bytes, other.len, &b, NULL, NULL) == STOR_E_NOT_FOUND);
	env_deinit(&e);
}

TEST(executable_fallback)
{
	struct env e;
	REQUIRE(env_init(&e, true));
	const char *stripped = exe_path;
	place(e.debug_dir, &self_id, "", stripped); /* .build-id/xx/rest: the executable */
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	env_run(&e, &c, 1);
	CHECK_EQ_U(c.last.status, SVC_FETCH_OK);
	CHECK_EQ_U(c.last.kind, STOR_KIND_EXECUTABLE);
	CHECK(strstr(c.last.error, "no debuginfo") != NULL);
	stor_meta m;
	REQUIRE(stor_get_meta(e.store, self_id.bytes, self_id.len, &m, NULL) == STOR_OK);
	CHECK_EQ_U(m.kind, STOR_KIND_EXECUTABLE);
	CHECK(m.neg_expiry > m.fetch_time);
	/* A debuginfo-only fetch (the dwz case) does not take an executable. */
	sym_build_id id2;
	REQUIRE(sym_build_id_from_hex("aabbccdd", 8, &id2));
	place(e.debug_dir, &id2, "", stripped);
	struct ctx c2 = {0};
	REQUIRE(svc_fetch_start(e.f, &id2, SVC_FETCH_DEBUGINFO, SVC_FETCH_POLICY_FULL,
				on_result, &c2) == SVC_OK);
	env_run(&e, &c2, 1);
	CHECK_EQ_U(c2.last.status, SVC_FETCH_NOT_FOUND);
	env_deinit(&e);
}

TEST(no_sources_and_bad_calls)
{
	struct env e;
	REQUIRE(env_init(&e, false));
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	env_run(&e, &c, 1);
	CHECK_EQ_U(c.last.status, SVC_FETCH_NOT_FOUND);
	sym_build_id empty = {0};
	CHECK(svc_fetch_start(e.f, &empty, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_E_INVALID);
	CHECK(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				NULL, &c) == SVC_E_INVALID);
	svc_error err = {0};
	CHECK(svc_fetcher_create(NULL, &err) == NULL && err.code == SVC_E_INVALID);
	svc_fetcher_destroy(NULL);
	env_deinit(&e);
}

TEST(shutdown_answers_waiters)
{
	struct env e;
	REQUIRE(env_init(&e, true));
	place(e.debug_dir, &self_id, ".debug", self_path);
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	REQUIRE(svc_fetch_start(e.f, &self_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	svc_fetcher_destroy(e.f);
	e.f = NULL;
	CHECK_EQ_U(c.calls, 2);
	CHECK_EQ_U(c.last.status, SVC_FETCH_ERROR);
	CHECK(strstr(c.last.error, "shutting down") != NULL);
	stor_stats ss;
	stor_get_stats(e.store, &ss);
	CHECK_EQ_U(ss.pinned, 0);
	env_deinit(&e);
}

TEST(check_file)
{
	src_kind kind;
	sym_elf_info info;
	sym_error err = {0};
	REQUIRE(load_self());
	CHECK(src_check_file("not an elf", 10, &self_id, &kind, &info, &err) != SYM_OK);
	CHECK(err.msg[0] != '\0');
}

TEST_MAIN()
