// SPDX-License-Identifier: Apache-2.0
/*
 * test_fetch_policy: one fetcher, requests under different policies
 * (svc_fetcher.h, svc_fetch_policy), and the provider table it builds its
 * upstreams from (svc_provider_impl.h):
 *  - a local-only request and a full one for the same build ID are two
 *    flights: the local one does not wait on the full one's download, and
 *    the full one is not ended by the local one's empty answer;
 *  - a request past --max-hops (SVC_FETCH_POLICY_LOCAL) never asks an
 *    upstream, for files or source relays, and remembers nothing negative;
 *  - a request from the peer tier (SVC_FETCH_POLICY_OWNER) asks the
 *    upstreams, never the peer tier;
 *  - an upstream whose URL scheme no provider serves is refused when the
 *    fetcher is made, with an error naming the scheme and the known ones;
 *    an http(s) one gets the debuginfod provider.
 * The upstreams are loopback listeners that never answer: a request to one
 * stays in flight, which the per-server request counts show.
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

/* A loopback listener that never accepts: requests to it hang. */
static int silent_listener(char *url, size_t cap)
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
	snprintf(url, cap, "http://127.0.0.1:%d", ntohs(a.sin_port));
	return fd;
}

struct env {
	char dir[64];
	struct event_base *base;
	stor_db *store;
	svc_config cfg;
	svc_fetcher *f;
	int peer_fd, up_fd;
	char peer[64], up[64];
};

/* A store, a hanging peer and a hanging upstream, no debug dirs. */
static bool env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->peer_fd = silent_listener(e->peer, sizeof(e->peer));
	e->up_fd = silent_listener(e->up, sizeof(e->up));
	strcpy(e->dir, "/tmp/fetch_policy_XXXXXX");
	if (e->peer_fd < 0 || e->up_fd < 0 || !mkdtemp(e->dir))
		return false;
	svc_config_init(&e->cfg);
	e->cfg.negative_cache_ttl_ms = 3600 * 1000;
	if (svc_config_set_upstreams(&e->cfg, e->up, NULL) != SVC_OK ||
	    svc_config_set_peer_servers(&e->cfg, e->peer, NULL) != SVC_OK)
		return false;
	stor_options so;
	stor_options_init(&so);
	so.path = e->dir;
	so.sync_writes = false;
	e->base = event_base_new();
	if (!e->base || stor_open(&so, &e->store, NULL) != STOR_OK)
		return false;
	svc_fetcher_options fo = {.base = e->base, .store = e->store, .config = &e->cfg};
	svc_error err = {0};
	if (!(e->f = svc_fetcher_create(&fo, &err)))
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
	close(e->peer_fd);
	close(e->up_fd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", e->dir);
}

/* Requests so far to the peer (0) and the upstream (1). */
static uint64_t requests(struct env *e, size_t i)
{
	svc_upstream_stats st[2];
	return svc_fetcher_get_upstreams(e->f, st, 2) == 2 ? st[i].requests : 0;
}

/* Runs the loop until cond holds or about two seconds pass. */
#define RUN_UNTIL(e, cond)                                                   \
	for (int spin_ = 0; !(cond) && spin_ < 2000; spin_++) {               \
		event_base_loop((e)->base, EVLOOP_NONBLOCK);                  \
		usleep(1000);                                                  \
	}

TEST(local_and_full_are_two_flights)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("0123456789abcdef", 16, &id));
	struct ctx full = {0}, local = {0}, full2 = {0};
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL, on_result,
				&full) == SVC_OK);
	RUN_UNTIL(&e, requests(&e, 0) == 1);
	CHECK_EQ_U(requests(&e, 0), 1); /* the full flight asks the peer tier first: it hangs */
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_LOCAL, on_result,
				&local) == SVC_OK);
	RUN_UNTIL(&e, local.calls == 1);
	/* Its own flight: answered (nothing local), without waiting on the download. */
	CHECK_EQ_U(local.calls, 1);
	CHECK_EQ_U(local.last.status, SVC_FETCH_NOT_FOUND);
	CHECK(strstr(local.last.error, "0 upstream(s)") != NULL);
	CHECK_EQ_U(full.calls, 0);
	svc_fetcher_stats st;
	svc_fetcher_get_stats(e.f, &st);
	CHECK_EQ_U(st.joined, 0);
	CHECK_EQ_U(st.in_flight, 1);
	/* Past --max-hops: no upstream asked, no negative remembered. */
	CHECK_EQ_U(requests(&e, 0), 1);
	CHECK_EQ_U(requests(&e, 1), 0);
	stor_meta m;
	REQUIRE(stor_get_meta(e.store, id.bytes, id.len, &m, NULL) == STOR_OK);
	CHECK(m.neg_expiry <= base_real_ms());
	/* Another full request joins the full flight. */
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL, on_result,
				&full2) == SVC_OK);
	svc_fetcher_get_stats(e.f, &st);
	CHECK_EQ_U(st.joined, 1);
	bool in_flight = false;
	svc_source_outcome rows[8];
	svc_fetcher_describe(e.f, &id, rows, 8, &in_flight);
	CHECK(in_flight);
	svc_fetcher_destroy(e.f);
	e.f = NULL;
	CHECK_EQ_U(full.calls, 1);
	CHECK_EQ_U(full2.calls, 1);
	CHECK(strstr(full.last.error, "shutting down") != NULL);
	env_deinit(&e);
}

TEST(owner_skips_the_peer_tier)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("fedcba98", 8, &id));
	struct ctx owner = {0};
	REQUIRE(svc_fetch_start(e.f, &id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_OWNER, on_result,
				&owner) == SVC_OK);
	RUN_UNTIL(&e, requests(&e, 1) == 1);
	CHECK_EQ_U(requests(&e, 0), 0);
	CHECK_EQ_U(requests(&e, 1), 1);
	env_deinit(&e);
	CHECK_EQ_U(owner.calls, 1);
}

struct relay {
	int calls;
	svc_fetch_status st;
	char error[256];
};

static void on_relay(void *arg, svc_fetch_status st, svc_http_result *res, const char *from,
		     const char *error)
{
	(void)res;
	(void)from;
	struct relay *r = arg;
	r->calls++;
	r->st = st;
	snprintf(r->error, sizeof(r->error), "%s", error);
}

TEST(local_source_relay_asks_no_upstream)
{
	struct env e;
	REQUIRE(env_init(&e));
	sym_build_id id;
	REQUIRE(sym_build_id_from_hex("abab", 4, &id));
	struct relay r = {0};
	REQUIRE(svc_fetch_source_start(e.f, &id, "/usr/src/a.c", 0, SVC_FETCH_POLICY_LOCAL,
				       on_relay, &r) == SVC_OK);
	RUN_UNTIL(&e, r.calls == 1);
	CHECK_EQ_U(r.calls, 1);
	CHECK_EQ_U(r.st, SVC_FETCH_NOT_FOUND);
	CHECK_STREQ(r.error, "no upstream servers");
	CHECK_EQ_U(requests(&e, 0) + requests(&e, 1), 0);
	env_deinit(&e);
}

TEST(provider_table_chooses_by_scheme)
{
	svc_error err = {0};
	const svc_provider_kind *k = svc_provider_kind_for("https://debuginfod.example/", &err);
	REQUIRE(k != NULL);
	CHECK_STREQ(k->name, "debuginfod");
	CHECK(k->ops == &svc_provider_debuginfod_ops);
	CHECK(svc_provider_kind_for("HTTP://x", &err) == k);
	CHECK(svc_provider_kind_for("gopher://x", &err) == NULL);
	CHECK_EQ_U(err.code, SVC_E_INVALID);
	CHECK(strstr(err.msg, "'gopher'") != NULL && strstr(err.msg, "https") != NULL);
	CHECK(svc_provider_kind_for("no-scheme", &err) == NULL);
}

TEST(unknown_scheme_refused_at_create)
{
	char dir[] = "/tmp/fetch_scheme_XXXXXX";
	REQUIRE(mkdtemp(dir));
	svc_config cfg;
	svc_config_init(&cfg);
	/* Past svc_config's own check, as a config of a later protocol would be. */
	char *urls[] = {"http://ok.example", "ftp://user:secret@files.example/pub"};
	cfg.upstreams = urls;
	cfg.n_upstreams = 2;
	stor_options so;
	stor_options_init(&so);
	so.path = dir;
	so.sync_writes = false;
	stor_db *store = NULL;
	struct event_base *base = event_base_new();
	REQUIRE(base && stor_open(&so, &store, NULL) == STOR_OK);
	svc_fetcher_options fo = {.base = base, .store = store, .config = &cfg};
	svc_error err = {0};
	svc_fetcher *f = svc_fetcher_create(&fo, &err);
	CHECK(f == NULL);
	CHECK_EQ_U(err.code, SVC_E_INVALID);
	CHECK(strstr(err.msg, "ftp://") != NULL);      /* names the upstream */
	CHECK(strstr(err.msg, "secret") == NULL);      /* its userinfo redacted */
	CHECK(strstr(err.msg, "'ftp'") != NULL);       /* and the scheme */
	svc_fetcher_destroy(f);
	/* The same config with http(s) only makes a fetcher of two providers. */
	cfg.n_upstreams = 1;
	REQUIRE((f = svc_fetcher_create(&fo, &err)) != NULL);
	CHECK_EQ_U(f->n_ups, 1);
	CHECK(f->ups[0].prov->ops == &svc_provider_debuginfod_ops);
	svc_fetcher_destroy(f);
	cfg.upstreams = NULL;
	cfg.n_upstreams = 0;
	svc_config_deinit(&cfg);
	stor_close(store);
	event_base_free(base);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

TEST_MAIN()
