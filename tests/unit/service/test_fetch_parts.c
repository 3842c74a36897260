// SPDX-License-Identifier: Apache-2.0
/*
 * test_fetch_parts: the pieces of service/fetch/ on their own and through the
 * fetcher: URLs built whole over a long base (and refused past the limit),
 * the bounded download queue (as a structure, and a fetcher whose queue is
 * full refusing a build ID), the circuit breaker's states, the fetcher asking
 * its sources through the source interface in order, and the fetcher's
 * Prometheus families. Uses the room's internal header (svc_fetch_impl.h).
 */
#include <arpa/inet.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "service/fetch/svc_fetch_impl.h"
#include "test.h"

TEST(url_over_a_long_base_is_whole)
{
	size_t lb = 3000; /* over the old 2048-byte buffer */
	char *base = malloc(lb + 1);
	REQUIRE(base);
	memcpy(base, "http://h/", 9);
	memset(base + 9, 'p', lb - 9);
	base[lb] = '\0';
	svc_error err = {0};
	char *url = svc_fetch_url(base, "abcd", "debuginfo", &err);
	REQUIRE(url);
	CHECK_EQ_U(strlen(url), lb + strlen("/buildid/abcd/debuginfo"));
	CHECK(strncmp(url, base, lb) == 0);
	CHECK_STREQ(url + lb, "/buildid/abcd/debuginfo");
	free(url);
	url = svc_fetch_url("https://x", "00ff", "executable", &err);
	CHECK_STREQ(url, "https://x/buildid/00ff/executable");
	free(url);
	free(base);
}

TEST(url_past_the_limit_is_refused)
{
	size_t lb = SVC_FETCH_URL_MAX;
	char *base = malloc(lb + 1);
	REQUIRE(base);
	memset(base, 'p', lb);
	base[lb] = '\0';
	svc_error err = {0};
	CHECK(svc_fetch_url(base, "abcd", "debuginfo", &err) == NULL);
	CHECK_EQ_U(err.code, SVC_E_INVALID);
	CHECK(strstr(err.msg, "over the 65536-byte limit") != NULL);
	free(base);
}

TEST(queue_bound)
{
	svc_fetch_queue q;
	svc_queue_init(&q, 2);
	svc_fetch_flight a = {0}, b = {0}, c = {0};
	CHECK(svc_queue_push(&q, &a));
	CHECK(svc_queue_push(&q, &b));
	CHECK(!svc_queue_push(&q, &c)); /* full: refused, not grown */
	CHECK(!c.queued);
	CHECK_EQ_U(q.len, 2);
	svc_queue_remove(&q, &a);
	CHECK(q.head == &b && q.tail == &b && !a.queued);
	CHECK(svc_queue_push(&q, &c));
	CHECK(q.head == &b && b.qnext == &c && q.tail == &c);
	svc_queue_remove(&q, &a); /* not queued: no-op */
	CHECK_EQ_U(q.len, 2);
	svc_queue_remove(&q, &c);
	svc_queue_remove(&q, &b);
	CHECK(q.head == NULL && q.tail == NULL && q.len == 0);
}

TEST(breaker_states)
{
	svc_breaker b = {0};
	CHECK_EQ_U(svc_breaker_state_at(&b, 1000), SVC_BREAKER_CLOSED);
	CHECK(!svc_breaker_failure(&b, 1000, 2, 500));
	CHECK(svc_breaker_failure(&b, 1000, 2, 500)); /* second in a row: opens */
	CHECK_EQ_U(svc_breaker_state_at(&b, 1499), SVC_BREAKER_OPEN);
	CHECK(!svc_breaker_allows(&b, 1499));
	CHECK_EQ_U(svc_breaker_state_at(&b, 1500), SVC_BREAKER_HALF_OPEN);
	CHECK(svc_breaker_allows(&b, 1500));
	svc_breaker_request(&b, 1500); /* the probe */
	CHECK(!svc_breaker_allows(&b, 1500));
	svc_breaker_request_end(&b);
	CHECK(svc_breaker_failure(&b, 1600, 2, 500)); /* probe failed: open again */
	CHECK_EQ_U(svc_breaker_state_at(&b, 2000), SVC_BREAKER_OPEN);
	CHECK(svc_breaker_success(&b)); /* closes */
	CHECK_EQ_U(svc_breaker_state_at(&b, 2000), SVC_BREAKER_CLOSED);
	CHECK(!svc_breaker_success(&b));
	svc_breaker never = {0};
	for (int i = 0; i < 10; i++)
		CHECK(!svc_breaker_failure(&never, 0, 0, 500)); /* threshold 0: never opens */
}

/* The breaker keeps the last failures, and those that opened it. */
TEST(breaker_remembers_why)
{
	svc_breaker b = {0};
	svc_breaker_failure_note n[SVC_BREAKER_NOTES];
	char why[16], text[256];
	for (int i = 0; i < 6; i++) {
		snprintf(why, sizeof(why), "HTTP %d", 500 + i);
		svc_breaker_note(&b, 1000 + i, why);
		svc_breaker_failure(&b, 1000 + i, 100, 500); /* never opens */
	}
	CHECK_EQ_U(svc_breaker_recent(&b, n), SVC_BREAKER_NOTES);
	CHECK(!strcmp(n[0].why, "HTTP 502") && !strcmp(n[3].why, "HTTP 505"));
	CHECK(n[3].at_ms == 1005);
	CHECK_EQ_U(b.n_opened_by, 0);
	CHECK(svc_breaker_success(&b) == false);
	/* Two failures open it (threshold 2): those two opened it. */
	svc_breaker_note(&b, 2000, "timeout");
	CHECK(!svc_breaker_failure(&b, 2000, 2, 500));
	svc_breaker_note(&b, 2001, "HTTP 503");
	CHECK(svc_breaker_failure(&b, 2001, 2, 500));
	CHECK_EQ_U(b.n_opened_by, 2);
	CHECK(!strcmp(b.opened_by[0].why, "timeout") && !strcmp(b.opened_by[1].why, "HTTP 503"));
	svc_breaker_describe(&b, 2101, text, sizeof(text));
	CHECK(strstr(text, "open for 0.4 s more") && strstr(text, "since 0.1 s ago") &&
	      strstr(text, "last: HTTP 503"));
}

/* ---- a fetcher on an event loop ---- */

struct env {
	char dir[64];
	struct event_base *base;
	stor_db *store;
	svc_config cfg;
	svc_fetcher *f;
};

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

/* A store and a config with the given upstreams ("" none); no debug dirs. */
static bool env_init(struct env *e, const char *upstreams)
{
	memset(e, 0, sizeof(*e));
	strcpy(e->dir, "/tmp/fetch_parts_XXXXXX");
	if (!mkdtemp(e->dir))
		return false;
	svc_config_init(&e->cfg);
	if (svc_config_set_upstreams(&e->cfg, upstreams, NULL) != SVC_OK)
		return false;
	stor_options so;
	stor_options_init(&so);
	so.path = e->dir;
	so.sync_writes = false;
	e->base = event_base_new();
	return e->base && stor_open(&so, &e->store, NULL) == STOR_OK;
}

static bool env_fetcher(struct env *e, src_source *const *sources, size_t n, size_t max_queued)
{
	svc_fetcher_options fo = {.base = e->base, .store = e->store, .config = &e->cfg,
				  .sources = sources, .n_sources = n, .max_queued = max_queued};
	svc_error err = {0};
	e->f = svc_fetcher_create(&fo, &err);
	if (!e->f)
		fprintf(stderr, "fetcher: %s\n", err.msg);
	return e->f != NULL;
}

static void env_deinit(struct env *e)
{
	svc_fetcher_destroy(e->f);
	stor_close(e->store);
	if (e->base)
		event_base_free(e->base);
	svc_config_deinit(&e->cfg);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", e->dir);
}

/* A source that answers from memory and counts its calls. */
struct fake {
	src_source base;
	const char *name;
	const void *data;       /* NULL: never has it */
	size_t size;
	int *order, calls_at;   /* order: shared counter; calls_at: its value at the call */
};

static src_status fake_find(src_source *s, const sym_build_id *id, src_kind want,
			    uint64_t max_size, src_file *out, sym_error *err)
{
	struct fake *fk = (struct fake *)s;
	fk->calls_at = ++*fk->order;
	if (!fk->data) {
		sym_error_set(err, SYM_E_IO, "%s: nothing here", fk->name);
		return SRC_NOT_FOUND;
	}
	src_kind kind;
	if (src_check_file(fk->data, fk->size, id, &kind, &out->info, err) != SYM_OK)
		return SRC_NOT_FOUND;
	out->data = malloc(fk->size);
	memcpy(out->data, fk->data, fk->size);
	out->size = fk->size;
	out->kind = kind;
	out->origin = fk->name;
	return SRC_FOUND;
}

static void fake_destroy(src_source *s)
{
	(void)s;
}

static const src_ops fake_ops = {.name = "fake", .find = fake_find, .destroy = fake_destroy};

TEST(fetcher_asks_sources_in_order)
{
	size_t size;
	uint8_t *dbg = test_read_fixture("c_stripped.debug", &size);
	REQUIRE(dbg);
	sym_elf_info info;
	REQUIRE(sym_elf_probe(dbg, size, &info, NULL) == SYM_OK && info.build_id.len);
	int order = 0;
	struct fake empty = {{&fake_ops}, "empty", NULL, 0, &order, 0};
	struct fake full = {{&fake_ops}, "full", dbg, size, &order, 0};
	struct fake never = {{&fake_ops}, "never", dbg, size, &order, 0};
	src_source *list[] = {&empty.base, &full.base, &never.base};
	struct env e;
	REQUIRE(env_init(&e, ""));
	REQUIRE(env_fetcher(&e, list, 3, 0));
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &info.build_id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	while (c.calls < 1 && event_base_loop(e.base, EVLOOP_ONCE) >= 0)
		;
	CHECK_EQ_U(c.last.status, SVC_FETCH_OK);
	CHECK_EQ_U(c.last.kind, STOR_KIND_DEBUGINFO);
	CHECK_STREQ(c.last.source, "full");
	CHECK_EQ_U(empty.calls_at, 1);
	CHECK_EQ_U(full.calls_at, 2);
	CHECK_EQ_U(never.calls_at, 0); /* the first hit ends the search */
	svc_fetcher_stats st;
	svc_fetcher_get_stats(e.f, &st);
	CHECK_EQ_U(st.local_hits, 1);
	env_deinit(&e);
	free(dbg);
}

/* A loopback listener that never accepts: requests to it hang. */
static int silent_listener(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Runs the loop until the fetcher has `downloads` running and `queued` waiting. */
static bool wait_for(struct env *e, size_t downloads, size_t queued)
{
	for (int i = 0; i < 2000; i++) {
		svc_fetcher_stats st;
		svc_fetcher_get_stats(e->f, &st);
		if (st.downloads == downloads && st.queued == queued)
			return true;
		event_base_loop(e->base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	return false;
}

TEST(full_queue_refuses)
{
	int port = 0;
	int lfd = silent_listener(&port);
	REQUIRE(lfd >= 0);
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct env e;
	REQUIRE(env_init(&e, url));
	e.cfg.max_concurrent_fetches = 1;
	REQUIRE(env_fetcher(&e, NULL, 0, 1)); /* no debug dirs in cfg: upstream only */
	sym_build_id ids[3];
	REQUIRE(sym_build_id_from_hex("a1a1a1a1", 8, &ids[0]));
	REQUIRE(sym_build_id_from_hex("b2b2b2b2", 8, &ids[1]));
	REQUIRE(sym_build_id_from_hex("c3c3c3c3", 8, &ids[2]));
	struct ctx c[3] = {{0}};
	REQUIRE(svc_fetch_start(e.f, &ids[0], SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c[0]) == SVC_OK);
	REQUIRE(wait_for(&e, 1, 0));
	REQUIRE(svc_fetch_start(e.f, &ids[1], SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c[1]) == SVC_OK);
	REQUIRE(wait_for(&e, 1, 1));
	REQUIRE(svc_fetch_start(e.f, &ids[2], SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c[2]) == SVC_OK);
	while (c[2].calls < 1 && event_base_loop(e.base, EVLOOP_ONCE) >= 0)
		;
	CHECK_EQ_U(c[2].last.status, SVC_FETCH_ERROR);
	CHECK(strstr(c[2].last.error, "download queue full") != NULL);
	CHECK(strstr(c[2].last.error, url) != NULL);
	svc_fetcher_stats st;
	svc_fetcher_get_stats(e.f, &st);
	CHECK_EQ_U(st.queued, 1); /* the queue did not grow */
	CHECK_EQ_U(c[0].calls + c[1].calls, 0);
	svc_fetcher_destroy(e.f);
	e.f = NULL;
	CHECK_EQ_U(c[0].calls, 1);
	CHECK_EQ_U(c[1].calls, 1);
	CHECK(strstr(c[1].last.error, "shutting down") != NULL);
	env_deinit(&e);
	close(lfd);
}

TEST(metrics_render)
{
	struct env e;
	REQUIRE(env_init(&e, "http://a.example,http://b.example/x\"y"));
	REQUIRE(env_fetcher(&e, NULL, 0, 0));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("abcdef", 6, &id));
	REQUIRE(stor_put_negative(e.store, id.bytes, id.len, STOR_STATE_NOT_FOUND, "t", "none",
				  base_real_ms() + 60000, NULL) == STOR_OK);
	struct ctx c = {0};
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL,
				on_result, &c) == SVC_OK);
	while (c.calls < 1 && event_base_loop(e.base, EVLOOP_ONCE) >= 0)
		;
	CHECK(c.last.cached);
	base_buf b;
	base_buf_init(&b, 1 << 20);
	svc_fetcher_metrics_render(e.f, &b);
	REQUIRE(base_buf_append(&b, "", 1));
	const char *text = (const char *)b.data;
	const char *want[] = {
		"# HELP symbolizer_fetches_total Fetches of build IDs by outcome (store: already "
		"held; local: a debug dir; upstream: downloaded).\n"
		"# TYPE symbolizer_fetches_total counter\n"
		"symbolizer_fetches_total{outcome=\"store\"} 1\n"
		"symbolizer_fetches_total{outcome=\"local\"} 0\n",
		"symbolizer_fetches_total{outcome=\"too_large\"} 0\n"
		"symbolizer_fetches_total{outcome=\"pending\"} 0\n"
		"# HELP symbolizer_fetches_in_flight Build IDs being fetched now.\n"
		"# TYPE symbolizer_fetches_in_flight gauge\n"
		"symbolizer_fetches_in_flight 0\n"
		"# HELP symbolizer_upstream_requests_total HTTP requests to upstream debuginfod "
		"servers, by server and outcome.\n"
		"# TYPE symbolizer_upstream_requests_total counter\n"
		"symbolizer_upstream_requests_total{server=\"http://a.example\",outcome=\"ok\"} 0\n",
		"symbolizer_upstream_requests_total{server=\"http://b.example/x\\\"y\","
		"outcome=\"skipped\"} 0\n"
		"# HELP symbolizer_upstream_bytes_total Body bytes received from upstream servers "
		"(200 answers).\n"
		"# TYPE symbolizer_upstream_bytes_total counter\n"
		"symbolizer_upstream_bytes_total{server=\"http://a.example\"} 0\n",
		"# TYPE symbolizer_upstream_breaker_open gauge\n"
		"symbolizer_upstream_breaker_open{server=\"http://a.example\"} 0\n"
		"symbolizer_upstream_breaker_open{server=\"http://b.example/x\\\"y\"} 0\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			TEST_FAIL_("missing:\n%s\nin:\n%s", want[i], text);
	base_buf_deinit(&b);
	env_deinit(&e);
}

TEST_MAIN()
