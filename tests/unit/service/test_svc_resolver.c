// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_resolver: the resolver on a real event loop, with a worker pool, a
 * store, and the fetcher with a local debug dir as its only source (no
 * network): single flight through load, fetch and build, answers from the
 * index cache, remembered failures, a waiter that gives up, shutdown with a
 * flight in progress; and the metric families the resolver and the index
 * cache render. Then the resolve-and-wait service (svc_resolve_set: answers
 * now, after a wait, PENDING past the budget, on stop, and past the bound on
 * new lookups) and the layout index as a derived kind (single flight,
 * memory, forgotten on upload). The ELF file is this test program itself.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base_buf.h"
#include "service/core/svc_build_id.h"
#include "service/resolve/svc_resolve_set.h"
#include "service/resolve/svc_resolver.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_index.h"
#include "test.h"

static char self_path[4096];
static sym_build_id self_id;

static bool load_self(void)
{
	if (self_id.len)
		return true;
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		return false;
	self_path[n] = '\0';
	size_t size;
	void *data = test_read_file(self_path, &size);
	sym_elf_info info;
	bool ok = data && sym_elf_probe(data, size, &info, NULL) == SYM_OK &&
		  info.build_id.len >= 2;
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

/* DIR/.build-id/xx/rest.debug <- this program */
static void place_self(const char *dir)
{
	char hex[SYM_BUILD_ID_HEX_MAX], path[8192], sub[4096];
	sym_build_id_to_hex(&self_id, hex);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	snprintf(path, sizeof(path), "%s/%s.debug", sub, hex + 2);
	if (sh("mkdir -p '%s' && true '%s'", sub, "") != 0 || sh("cp '%s' '%s'", self_path, path) != 0)
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
	svc_pool *pool;
	svc_index_cache *cache;
	svc_resolver *r;
};

static bool env_config(struct env *e)
{
	svc_config_init(&e->cfg);
	char arg_dir[256], arg_data[256];
	snprintf(arg_dir, sizeof(arg_dir), "--debug-dir=%s", e->debug_dir);
	snprintf(arg_data, sizeof(arg_data), "--data-dir=%s", e->data_dir);
	char *argv[] = {arg_dir, arg_data, "--debuginfod-upstream-servers=", "--negative-cache-ttl=1h"};
	base_flag_group g = svc_config_flags(&e->cfg);
	char why[BASE_FLAG_ERR_MAX];
	for (int i = 0; i < 4;)
		if (base_flag_parse(&g, 1, 4, argv, &i, why, sizeof(why)) != BASE_FLAG_TAKEN)
			return false;
	return svc_config_finish(&e->cfg, NULL, NULL) == SVC_OK;
}

static bool env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	if (!load_self()) {
		fprintf(stderr, "cannot read this test's own ELF file and build ID\n");
		return false;
	}
	strcpy(e->dir, "/tmp/resolver_XXXXXX");
	if (!mkdtemp(e->dir))
		return false;
	snprintf(e->debug_dir, sizeof(e->debug_dir), "%s/debug", e->dir);
	snprintf(e->data_dir, sizeof(e->data_dir), "%s/data", e->dir);
	mkdir(e->debug_dir, 0755);
	place_self(e->debug_dir);
	if (!env_config(e))
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
	if (!(e->f = svc_fetcher_create(&fo, &err)))
		return false;
	e->pool = svc_pool_create(e->base, 2);
	e->cache = svc_index_cache_create(64u << 20);
	svc_resolver_options ro = {
		.base = e->base,
		.store = e->store,
		.fetcher = e->f,
		.pool = e->pool,
		.cache = e->cache,
		.build_threads = 1,
		.error_ttl_ms = 60000,
		.negative_ttl_ms = 60000,
	};
	e->r = e->pool && e->cache ? svc_resolver_create(&ro) : NULL;
	return e->r != NULL;
}

/* In the order of svc_resolver.h: stop, pool and fetcher, then the resolver. */
static void env_deinit(struct env *e)
{
	if (e->r)
		svc_resolver_stop(e->r);
	svc_pool_destroy(e->pool);
	svc_fetcher_destroy(e->f);
	svc_resolver_destroy(e->r);
	svc_index_cache_destroy(e->cache);
	stor_close(e->store);
	if (e->base)
		event_base_free(e->base);
	svc_config_deinit(&e->cfg);
	sh("rm -rf '%s'%s", e->dir, "");
}

struct answer {
	int calls;
	svc_resolution res;
};

static void on_resolved(void *arg, svc_resolution *res)
{
	struct answer *a = arg;
	a->calls++;
	a->res = *res;
}

static void run_until(struct env *e, const int *calls, int want)
{
	while (*calls < want)
		if (event_base_loop(e->base, EVLOOP_ONCE) < 0)
			break;
}

/* The rendered text of one render function, NUL-terminated (free it). */
static char *rendered(struct env *e, bool cache)
{
	base_buf b;
	base_buf_init(&b, 1 << 20);
	if (cache)
		svc_index_cache_metrics_render(e->cache, &b);
	else
		svc_resolver_metrics_render(e->r, &b);
	base_buf_append(&b, "", 1);
	size_t len;
	return (char *)base_buf_take(&b, &len);
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

TEST(single_flight_then_memory_and_metrics)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct answer a[3] = {{0}};
	svc_resolve_waiter *w[3];
	for (int i = 0; i < 3; i++) {
		svc_resolution now;
		w[i] = svc_resolver_resolve(e.r, &self_id, on_resolved, &a[i], &now);
		REQUIRE(w[i] != NULL);
	}
	CHECK_STREQ(svc_resolver_waiter_stage(w[0]), "loading the index");
	CHECK_EQ_U(svc_resolver_get_stats(e.r)->in_flight, 1);
	int total = 0;
	while (total < 3) {
		REQUIRE(event_base_loop(e.base, EVLOOP_ONCE) >= 0);
		total = a[0].calls + a[1].calls + a[2].calls;
	}
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_U(a[i].calls, 1);
		CHECK_EQ_U(a[i].res.status, SVC_RESOLVE_OK);
		CHECK(a[i].res.entry != NULL && a[i].res.entry == a[0].res.entry);
		svc_resolver_release(e.r, a[i].res.entry);
	}
	const svc_resolver_stats *st = svc_resolver_get_stats(e.r);
	CHECK_EQ_U(st->joined, 2);
	CHECK_EQ_U(st->in_flight, 0);
	CHECK_EQ_U(st->store_index_misses, 1);
	CHECK_EQ_U(st->source_fetches, 1);
	CHECK_EQ_U(st->builds_ok, 1);

	/* Now from memory, without waiting. */
	svc_resolution now;
	CHECK(svc_resolver_resolve(e.r, &self_id, on_resolved, &a[0], &now) == NULL);
	CHECK_EQ_U(now.status, SVC_RESOLVE_OK);
	CHECK(now.entry != NULL);
	svc_resolver_release(e.r, now.entry);
	CHECK_EQ_U(st->memory_hits, 1);
	CHECK_EQ_U(st->memory_misses, 3);

	char *text = rendered(&e, false);
	REQUIRE(text);
	CHECK(starts_with(text, "# HELP symbolizer_cache_requests_total Lookups of a build ID in "
				"each tier (memory, store_index, store_file) by result.\n"
				"# TYPE symbolizer_cache_requests_total counter\n"
				"symbolizer_cache_requests_total{tier=\"memory\",result=\"hit\"} 1\n"
				"symbolizer_cache_requests_total{tier=\"memory\",result=\"miss\"} 3\n"));
	CHECK(strstr(text, "symbolizer_cache_requests_total{tier=\"store_file\",result=\"miss\"} 1\n"
			   "# HELP symbolizer_resolutions_in_flight ") != NULL);
	CHECK(strstr(text, "\nsymbolizer_index_builds_total{result=\"ok\"} 1\n"
			   "symbolizer_index_builds_total{result=\"failed\"} 0\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_index_build_duration_seconds_bucket{le=\"+Inf\"} 1\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_index_build_duration_seconds_count 1\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_debuginfo_rechecks_total{result=\"found\"} 0\n") != NULL);
	free(text);

	text = rendered(&e, true);
	REQUIRE(text);
	CHECK(starts_with(text, "# HELP symbolizer_index_cache_bytes Bytes of the loaded indexes "
				"in memory.\n# TYPE symbolizer_index_cache_bytes gauge\n"
				"symbolizer_index_cache_bytes "));
	CHECK(strstr(text, "\nsymbolizer_index_cache_max_bytes 67108864\n") != NULL);
	CHECK(strstr(text, "\nsymbolizer_index_cache_entries 1\n") != NULL);
	CHECK(strstr(text, "# TYPE symbolizer_index_cache_evictions_total counter\n"
			   "symbolizer_index_cache_evictions_total 0\n") != NULL);
	free(text);
	env_deinit(&e);
}

/* A stored index of the previous format version (the version is the uint32 after
 * the 8-byte magic, docs/internals/index-format.md) is rejected on load and
 * rebuilt from the stored file, and the store then holds the current version. */
TEST(stored_index_of_an_older_version_is_rebuilt)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct answer a = {0};
	svc_resolution now;
	REQUIRE(svc_resolver_resolve(e.r, &self_id, on_resolved, &a, &now) != NULL);
	run_until(&e, &a.calls, 1);
	REQUIRE(a.res.status == SVC_RESOLVE_OK);
	svc_resolver_release(e.r, a.res.entry);
	const svc_resolver_stats *st = svc_resolver_get_stats(e.r);
	CHECK_EQ_U(st->builds_ok, 1);

	stor_blob b;
	REQUIRE(stor_get_index(e.store, SVC_STORE_KEY(&self_id), &b, NULL) == STOR_OK);
	REQUIRE(b.size > 12);
	uint8_t *old = malloc(b.size);
	REQUIRE(old);
	memcpy(old, b.data, b.size);
	size_t size = b.size;
	stor_blob_release(&b);
	uint32_t version = sym_index_format_version() - 1;
	memcpy(old + 8, &version, sizeof(version));
	REQUIRE(stor_put_index(e.store, SVC_STORE_KEY(&self_id), old, size, NULL) == STOR_OK);
	free(old);

	svc_resolver_forget(e.r, &self_id);   /* out of memory: the next one reads the store */
	struct answer c = {0};
	REQUIRE(svc_resolver_resolve(e.r, &self_id, on_resolved, &c, &now) != NULL);
	run_until(&e, &c.calls, 1);
	CHECK_EQ_U(c.res.status, SVC_RESOLVE_OK);
	CHECK(c.res.entry != NULL && c.res.entry->index != NULL);
	if (c.res.entry)
		svc_resolver_release(e.r, c.res.entry);
	CHECK_EQ_U(st->stored_index_rejected, 1);
	CHECK_EQ_U(st->builds_ok, 2);
	char *text = rendered(&e, false);
	REQUIRE(text);
	CHECK(strstr(text, "\nsymbolizer_stored_index_rejected_total 1\n") != NULL);
	free(text);
	REQUIRE(stor_get_index(e.store, SVC_STORE_KEY(&self_id), &b, NULL) == STOR_OK);
	memcpy(&version, (const uint8_t *)b.data + 8, sizeof(version));
	CHECK_EQ_U(version, sym_index_format_version());
	stor_blob_release(&b);
	env_deinit(&e);
}

TEST(not_found_is_remembered)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("abcdef0123", 10, &id));
	struct answer a = {0};
	svc_resolution now;
	REQUIRE(svc_resolver_resolve(e.r, &id, on_resolved, &a, &now) != NULL);
	run_until(&e, &a.calls, 1);
	CHECK_EQ_U(a.res.status, SVC_RESOLVE_NOT_FOUND);
	CHECK(a.res.entry == NULL);
	CHECK(a.res.error[0] != '\0');
	/* Remembered: answered now, with the same text. */
	CHECK(svc_resolver_resolve(e.r, &id, on_resolved, &a, &now) == NULL);
	CHECK_EQ_U(now.status, SVC_RESOLVE_NOT_FOUND);
	CHECK_STREQ(now.error, a.res.error);
	CHECK_EQ_U(svc_resolver_get_stats(e.r)->negative_hits, 1);
	CHECK_EQ_U(a.calls, 1);
	env_deinit(&e);
}

TEST(waiter_gives_up_and_the_work_goes_on)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct answer gone = {0}, stays = {0};
	svc_resolution now;
	svc_resolve_waiter *w = svc_resolver_resolve(e.r, &self_id, on_resolved, &gone, &now);
	REQUIRE(w != NULL);
	REQUIRE(svc_resolver_resolve(e.r, &self_id, on_resolved, &stays, &now) != NULL);
	svc_resolver_cancel(e.r, w);
	run_until(&e, &stays.calls, 1);
	CHECK_EQ_U(gone.calls, 0);
	CHECK_EQ_U(stays.res.status, SVC_RESOLVE_OK);
	svc_resolver_release(e.r, stays.res.entry);
	CHECK(svc_resolver_resolve(e.r, &self_id, on_resolved, &gone, &now) == NULL);
	CHECK_EQ_U(now.status, SVC_RESOLVE_OK);
	svc_resolver_release(e.r, now.entry);
	env_deinit(&e);
}

TEST(shutdown_ends_flights)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct answer a = {0};
	svc_resolution now;
	REQUIRE(svc_resolver_resolve(e.r, &self_id, on_resolved, &a, &now) != NULL);
	svc_resolver_stop(e.r);
	/* A new build ID now is refused at once. */
	sym_build_id other;
	REQUIRE(sym_build_id_from_hex("0123456789", 10, &other));
	CHECK(svc_resolver_resolve(e.r, &other, on_resolved, &a, &now) == NULL);
	CHECK_EQ_U(now.status, SVC_RESOLVE_ERROR);
	CHECK_STREQ(now.error, "shutting down");
	/* The flight (its load finds no index in a fresh store) ends at its next step. */
	env_deinit(&e);
	CHECK_EQ_U(a.calls, 1);
	CHECK_EQ_U(a.res.status, SVC_RESOLVE_ERROR);
	CHECK_STREQ(a.res.error, "shutting down");
}

/* ---- svc_resolve_set ---- */

struct set_answers {
	int answered[4];
	svc_resolve_answer a[4];
	svc_resolve_status status[4];
	svc_index_entry *entry[4];
	char why[4][SYM_ERROR_MSG_MAX];
	int done;
};

static void set_answer(void *arg, size_t i, const svc_resolve_answer *a)
{
	struct set_answers *s = arg;
	s->answered[i]++;
	s->a[i] = *a;
	if (!a->pending) {
		s->status[i] = a->res->status;
		s->entry[i] = a->res->entry;
	} else {
		snprintf(s->why[i], sizeof(s->why[i]), "%s", a->why);
	}
}

static void set_done(void *arg)
{
	((struct set_answers *)arg)->done++;
}

static void set_release(struct env *e, struct set_answers *s)
{
	for (int i = 0; i < 4; i++)
		svc_resolver_release(e->r, s->entry[i]);
}

TEST(resolve_set_waits_then_answers_each_once)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id missing;
	REQUIRE(sym_build_id_from_hex("abcdef0123", 10, &missing));
	struct set_answers s = {0};
	svc_resolve_set *set = svc_resolve_set_create(e.base, e.r, 2, set_answer, &s);
	REQUIRE(set);
	svc_resolve_set_add(set, 0, &self_id, SVC_ARTIFACT_SYMBOLS);
	svc_resolve_set_add(set, 1, &missing, SVC_ARTIFACT_SYMBOLS);
	CHECK(!svc_resolve_set_wait(set, 60000, set_done, &s));
	CHECK(svc_resolve_set_waiting(set));
	run_until(&e, &s.done, 1);
	CHECK_EQ_U(s.done, 1);
	CHECK_EQ_U(s.answered[0], 1);
	CHECK_EQ_U(s.answered[1], 1);
	CHECK(!s.a[0].pending && !s.a[1].pending);
	CHECK_EQ_U(s.status[0], SVC_RESOLVE_OK);
	CHECK(s.entry[0] != NULL);
	CHECK_EQ_U(s.status[1], SVC_RESOLVE_NOT_FOUND);
	svc_resolve_set_destroy(set);
	set_release(&e, &s);

	/* Known now: answered during add, done never runs. */
	struct set_answers t = {0};
	set = svc_resolve_set_create(e.base, e.r, 1, set_answer, &t);
	REQUIRE(set);
	svc_resolve_set_add(set, 0, &self_id, SVC_ARTIFACT_SYMBOLS);
	CHECK_EQ_U(t.answered[0], 1);
	CHECK(svc_resolve_set_wait(set, 60000, set_done, &t));
	CHECK_EQ_U(t.done, 0);
	svc_resolve_set_destroy(set);
	set_release(&e, &t);
	env_deinit(&e);
}

TEST(resolve_set_pending_past_the_budget_and_on_stop)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct set_answers s = {0};
	svc_resolve_set *set = svc_resolve_set_create(e.base, e.r, 1, set_answer, &s);
	REQUIRE(set);
	svc_resolve_set_add(set, 0, &self_id, SVC_ARTIFACT_SYMBOLS);
	CHECK(!svc_resolve_set_wait(set, 0, set_done, &s));
	run_until(&e, &s.done, 1);
	CHECK_EQ_U(s.answered[0], 1);
	CHECK(s.a[0].pending);
	/* What its flight does when the timer fires: loading, or already fetching. */
	bool fetching = strcmp(s.why[0], "fetching debug info") == 0;
	CHECK(fetching || strcmp(s.why[0], "loading the index") == 0 ||
	      strcmp(s.why[0], "building the index") == 0);
	CHECK_EQ_U(s.a[0].retry_after_ms, fetching ? 1000 : 500);
	svc_resolve_set_destroy(set);

	/* Stopped: PENDING now, then done; the work goes on. */
	sym_build_id other;
	REQUIRE(sym_build_id_from_hex("0123456789", 10, &other));
	struct set_answers t = {0};
	set = svc_resolve_set_create(e.base, e.r, 1, set_answer, &t);
	REQUIRE(set);
	svc_resolve_set_add(set, 0, &other, SVC_ARTIFACT_SYMBOLS);
	CHECK(!svc_resolve_set_wait(set, 60000, set_done, &t));
	svc_resolve_set_stop(set);
	CHECK_EQ_U(t.done, 1);
	CHECK(t.a[0].pending);
	CHECK(!svc_resolve_set_waiting(set));
	svc_resolve_set_destroy(set);
	env_deinit(&e);
}

TEST(resolve_set_bounds_new_lookups)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id a, b;
	REQUIRE(sym_build_id_from_hex("0123456789", 10, &a));
	REQUIRE(sym_build_id_from_hex("9876543210", 10, &b));
	struct set_answers s = {0};
	svc_resolve_set *set = svc_resolve_set_create(e.base, e.r, 2, set_answer, &s);
	REQUIRE(set);
	svc_resolve_set_bound_new(set, 1);
	svc_resolve_set_add(set, 0, &a, SVC_ARTIFACT_SYMBOLS);
	svc_resolve_set_add(set, 1, &b, SVC_ARTIFACT_SYMBOLS);
	CHECK_EQ_U(s.answered[1], 1);
	CHECK(s.a[1].pending);
	CHECK_EQ_U(s.a[1].retry_after_ms, 1000);
	CHECK(strstr(s.why[1], "not looked up yet: this call started 1 new lookups") != NULL);
	CHECK(!svc_resolve_set_wait(set, 60000, set_done, &s));
	run_until(&e, &s.done, 1);
	CHECK_EQ_U(s.answered[0], 1);
	CHECK_EQ_U(s.status[0], SVC_RESOLVE_NOT_FOUND);
	svc_resolve_set_destroy(set);
	env_deinit(&e);
}

/* ---- the layout index, a derived kind ---- */

TEST(layout_kind_single_flight_memory_and_forget)
{
	struct env e;
	REQUIRE(env_init(&e));
	struct answer a[2] = {{0}};
	svc_resolution now;
	svc_resolve_waiter *w =
		svc_resolver_resolve_kind(e.r, &self_id, SVC_ARTIFACT_LAYOUT, on_resolved, &a[0], &now);
	REQUIRE(w != NULL);
	/* The file's resolution first (it fetches the file). */
	CHECK_STREQ(svc_resolver_waiter_stage(w), "fetching debug info");
	REQUIRE(svc_resolver_resolve_kind(e.r, &self_id, SVC_ARTIFACT_LAYOUT, on_resolved, &a[1],
					  &now) != NULL);
	while (a[0].calls + a[1].calls < 2)
		REQUIRE(event_base_loop(e.base, EVLOOP_ONCE) >= 0);
	CHECK_EQ_U(a[0].res.status, SVC_RESOLVE_OK);
	REQUIRE(a[0].res.entry != NULL);
	CHECK(a[0].res.entry == a[1].res.entry);
	CHECK(a[0].res.entry->index == NULL && a[0].res.entry->artifact != NULL);
	svc_resolver_release(e.r, a[0].res.entry);
	svc_resolver_release(e.r, a[1].res.entry);
	/* The symbol index was built on the way, once. */
	CHECK_EQ_U(svc_resolver_get_stats(e.r)->builds_ok, 1);

	/* From memory now. */
	CHECK(svc_resolver_resolve_kind(e.r, &self_id, SVC_ARTIFACT_LAYOUT, on_resolved, &a[0],
					&now) == NULL);
	CHECK_EQ_U(now.status, SVC_RESOLVE_OK);
	svc_resolver_release(e.r, now.entry);

	/* An upload forgets both kinds: the layout is loaded from the store again. */
	svc_resolver_forget(e.r, &self_id);
	struct answer b = {0};
	w = svc_resolver_resolve_kind(e.r, &self_id, SVC_ARTIFACT_LAYOUT, on_resolved, &b, &now);
	REQUIRE(w != NULL);
	run_until(&e, &b.calls, 1);
	CHECK_EQ_U(b.res.status, SVC_RESOLVE_OK);
	svc_resolver_release(e.r, b.res.entry);
	CHECK_EQ_U(svc_resolver_get_stats(e.r)->store_index_hits, 1);
	env_deinit(&e);
}

TEST_MAIN()
