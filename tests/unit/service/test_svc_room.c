// SPDX-License-Identifier: Apache-2.0
/*
 * Unit test of the room registry (service/core/svc_room.h) at the composition
 * root: a real svc_server on 127.0.0.1 (port 0), assembled from symbolizerd's
 * table plus one row, the test-only room of room_echo.c, called with libcurl
 * (rpc_fixture.h's client). Its method Echo is served by the generic Connect
 * handler in binary and JSON next to the daemon's methods, its route and its
 * /metrics family are there, its stop runs on graceful shutdown and its
 * destroy once; a server of symbolizerd's own table (svc_server_options_init)
 * beside it does not know Echo. A table serving a method twice is refused.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "base/base_buf.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "rpc_fixture.h"
#include "service/http/svc_rooms.h"
#include "service/http/svc_server.h"
#include "test.h"

extern const svc_room room_echo;                       /* room_echo.c */
extern _Atomic unsigned room_echo_stops, room_echo_destroys;

static const char *const PROTO[] = {"Content-Type: application/proto", NULL};
static const char *const JSON[] = {"Content-Type: application/json", NULL};

/* A server on its own loop thread; stopped through a pipe (no evthread). */
typedef struct served {
	struct event_base *base;
	svc_server *with_echo, *daemon;
	svc_config config[2];
	char dir[64];
	int pipe[2];
	struct event *quit;
	pthread_t thread;
	fixture to_echo, to_daemon;           /* rpc_fixture's client needs the port alone */
} served;

static void on_quit(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	served *sv = arg;
	svc_server_shutdown(sv->with_echo);
	svc_server_shutdown(sv->daemon);
}

static void *loop(void *arg)
{
	served *sv = arg;
	event_base_dispatch(sv->base);
	return NULL;
}

static int port_of(const svc_server *s)
{
	const char *a = strrchr(svc_server_address(s), ':');
	return a ? atoi(a + 1) : 0;
}

/* Each server: its own store under sv->dir, no sources, no upstreams. */
static svc_server *start(served *sv, int i, const svc_room *const *rooms, size_t n_rooms)
{
	char data[128];
	snprintf(data, sizeof(data), "%s/data%d", sv->dir, i);
	svc_config *c = &sv->config[i];
	svc_config_init(c);
	c->data_dir = strdup(data);
	svc_error err = {0};
	if (svc_config_set_upstreams(c, "", &err) != SVC_OK ||
	    svc_config_finish(c, NULL, &err) != SVC_OK)
		return NULL;
	svc_server_options o;
	svc_server_options_init(&o);
	o.listen = "127.0.0.1:0";
	o.workers = 1;
	o.config = c;
	if (rooms) {
		o.rooms = rooms;
		o.n_rooms = n_rooms;
	}
	svc_server *s = svc_server_create(sv->base, &o, &err);
	if (!s)
		fprintf(stderr, "svc_server_create: %s\n", err.msg);
	return s;
}

/* ---- the calls ---- */

static void echo_binary(const fixture *f)
{
	Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
	m.build_id = "abcd";
	Symbolizer__V1__Mapping *maps[] = {&m};
	Symbolizer__V1__Location l = SYMBOLIZER__V1__LOCATION__INIT;
	l.address = 0x1234;
	Symbolizer__V1__Location *locs[] = {&l};
	Symbolizer__V1__SymbolizeRequest q = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	q.n_mappings = 1, q.mappings = maps, q.n_locations = 1, q.locations = locs;
	uint8_t wire[256];
	size_t n = symbolizer__v1__symbolize_request__pack(&q, wire);
	reply r;
	REQUIRE(request(f, "/symbolizer.v1.SymbolizerService/Echo", wire, n, PROTO, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_STREQ(r.ctype, "application/proto");
	Symbolizer__V1__SymbolizeResponse *a =
		symbolizer__v1__symbolize_response__unpack(NULL, r.body.len, r.body.data);
	CHECK(a && a->n_string_table == 2 && strcmp(a->string_table[1], "abcd") == 0 &&
	      a->n_locations == 1 && a->locations[0]->normalized_address == 0x1234);
	if (a)
		symbolizer__v1__symbolize_response__free_unpacked(a, NULL);
	base_buf_deinit(&r.body);
}

static void echo_json(const fixture *f)
{
	const char *q = "{\"mappings\":[{\"buildId\":\"beef\"},{\"buildId\":\"cafe\"}],"
			"\"locations\":[{\"address\":\"16\"}]}";
	reply r;
	REQUIRE(request(f, "/symbolizer.v1.SymbolizerService/Echo", q, strlen(q), JSON, &r));
	CHECK_EQ_U(r.status, 200);
	CHECK_STREQ(r.ctype, "application/json");
	CHECK_STREQ((const char *)r.body.data, "{\"stringTable\":[\"\",\"beef\",\"cafe\"],"
					       "\"locations\":[{\"normalizedAddress\":\"16\"}]}");
	base_buf_deinit(&r.body);
}

/* Bytes that are no SymbolizeRequest: the handler's own Connect error. */
static void echo_invalid(const fixture *f)
{
	static const uint8_t junk[] = {0x0a, 0xff};
	reply r;
	REQUIRE(request(f, "/symbolizer.v1.SymbolizerService/Echo", junk, sizeof(junk), PROTO, &r));
	CHECK_EQ_U(r.status, 400);
	CHECK(strstr((const char *)r.body.data, "\"code\":\"invalid_argument\"") &&
	      strstr((const char *)r.body.data, "Echo: not a SymbolizeRequest"));
	base_buf_deinit(&r.body);
}

static long get(const fixture *f, const char *path, const char *want_in_body)
{
	reply r;
	if (!request(f, path, NULL, 0, NULL, &r))
		return -1;
	if (want_in_body && !strstr((const char *)r.body.data, want_in_body))
		TEST_FAIL_("GET %s: no \"%s\" in:\n%s", path, want_in_body, (char *)r.body.data);
	base_buf_deinit(&r.body);
	return r.status;
}

static long post_json(const fixture *f, const char *method, const char *body)
{
	char path[128];
	snprintf(path, sizeof(path), "/symbolizer.v1.SymbolizerService/%s", method);
	reply r;
	if (!request(f, path, body, strlen(body), JSON, &r))
		return -1;
	base_buf_deinit(&r.body);
	return r.status;
}

/* ---- the test ---- */

TEST(a_room_added_by_one_row)
{
	REQUIRE(curl_global_init(CURL_GLOBAL_DEFAULT) == 0);
	static served sv;
	snprintf(sv.dir, sizeof(sv.dir), "/tmp/test_svc_room.XXXXXX");
	REQUIRE(mkdtemp(sv.dir));
	REQUIRE((sv.base = event_base_new()) != NULL);
	REQUIRE(pipe(sv.pipe) == 0);

	/* The table: symbolizerd's rows, and one more. */
	const svc_room *rooms[16];
	size_t n = 0;
	for (size_t i = 0; i < svc_daemon_n_rooms; i++)
		rooms[n++] = svc_daemon_rooms[i];
	rooms[n++] = &room_echo;

	REQUIRE((sv.with_echo = start(&sv, 0, rooms, n)) != NULL);
	REQUIRE((sv.daemon = start(&sv, 1, NULL, 0)) != NULL);
	sv.to_echo.port = port_of(sv.with_echo);
	sv.to_daemon.port = port_of(sv.daemon);
	sv.quit = event_new(sv.base, sv.pipe[0], EV_READ, on_quit, &sv);
	REQUIRE(sv.quit && event_add(sv.quit, NULL) == 0);
	REQUIRE(pthread_create(&sv.thread, NULL, loop, &sv) == 0);

	echo_binary(&sv.to_echo);
	echo_json(&sv.to_echo);
	echo_invalid(&sv.to_echo);
	/* The daemon's methods and routes are there too, answered as ever. */
	CHECK_EQ_U(post_json(&sv.to_echo, "Symbolize", "{}"), 200);
	CHECK_EQ_U(post_json(&sv.to_echo, "NoSuchMethod", "{}"), 501);
	CHECK_EQ_U(get(&sv.to_echo, "/buildid/zz/debuginfo", NULL), 400);
	CHECK_EQ_U(get(&sv.to_echo, "/healthz", "ok"), 200);
	CHECK_EQ_U(get(&sv.to_echo, "/echo/hello?x=1", "echo hello"), 200);
	CHECK_EQ_U(get(&sv.to_echo, "/metrics", "\nsymbolizer_test_echo_calls_total 3\n"), 200);
	CHECK_EQ_U(get(&sv.to_echo, "/metrics",
		       "symbolizer_rpc_requests_total{method=\"Echo\",code=\"ok\"} 2\n"), 200);
	CHECK_EQ_U(get(&sv.to_echo, "/metrics",
		       "symbolizer_http_requests_total{handler=\"echo\",code=\"200\"} 1\n"), 200);

	/* symbolizerd's table has no Echo, no /echo/, no such family. */
	const char *q = "{\"mappings\":[{\"buildId\":\"beef\"}]}";
	CHECK_EQ_U(post_json(&sv.to_daemon, "Echo", q), 501);
	CHECK_EQ_U(get(&sv.to_daemon, "/echo/hello", NULL), 404);
	reply r;
	REQUIRE(request(&sv.to_daemon, "/metrics", NULL, 0, NULL, &r));
	CHECK(!strstr((const char *)r.body.data, "echo"));
	CHECK(strstr((const char *)r.body.data, "symbolizer_uploads_total") != NULL);
	base_buf_deinit(&r.body);

	/* Graceful shutdown runs the rows' stop; destroy their destroy, once. */
	CHECK_EQ_U(room_echo_stops, 0);
	REQUIRE(write(sv.pipe[1], "q", 1) == 1);
	pthread_join(sv.thread, NULL);
	CHECK_EQ_U(room_echo_stops, 1);
	CHECK_EQ_U(room_echo_destroys, 0);
	event_free(sv.quit);
	svc_server_destroy(sv.with_echo);
	svc_server_destroy(sv.daemon);
	CHECK_EQ_U(room_echo_destroys, 1);
	event_base_free(sv.base);
	close(sv.pipe[0]);
	close(sv.pipe[1]);
	for (int i = 0; i < 2; i++)
		svc_config_deinit(&sv.config[i]);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sv.dir);
	CHECK(system(cmd) == 0);
	curl_global_cleanup();
}

TEST(a_method_twice_is_refused)
{
	static served sv;
	snprintf(sv.dir, sizeof(sv.dir), "/tmp/test_svc_room.XXXXXX");
	REQUIRE(mkdtemp(sv.dir));
	REQUIRE((sv.base = event_base_new()) != NULL);
	const svc_room *rooms[] = {&room_echo, &room_echo};
	CHECK(start(&sv, 0, rooms, 2) == NULL);
	event_base_free(sv.base);
	svc_config_deinit(&sv.config[0]);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sv.dir);
	CHECK(system(cmd) == 0);
}

TEST_MAIN()
