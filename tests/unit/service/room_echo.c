// SPDX-License-Identifier: Apache-2.0
/*
 * room_echo: a test-only room, added to a server exactly as a room of the
 * daemon is (docs/internals/adding-a-method.md): this one file, and one row in
 * the table the server is given (test_svc_room.c). Never linked into
 * symbolizerd.
 *
 *   Echo  (symbolizer.v1.SymbolizerService, through the generic Connect
 *         handler: binary and JSON) takes a SymbolizeRequest and answers a
 *         SymbolizeResponse whose string table is "" and then the mappings'
 *         build IDs, and whose locations carry the request's addresses as
 *         normalized_address. Echo is not in symbolizer.proto: its row names
 *         the message types, for JSON.
 *   GET /echo/REST  answers "echo REST\n" through the server's reply hook
 *         (counted under handler="echo").
 *   /metrics        symbolizer_test_echo_calls_total.
 * Its stop and destroy are counted in room_echo_stops and room_echo_destroys.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "base/base_expo.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/core/svc_room.h"
#include "service/rpc/svc_rpc.h"

_Atomic unsigned room_echo_stops, room_echo_destroys;  /* read by the test thread */

typedef struct echo {
	const svc_room_ctx *ctx;
	uint64_t calls;
} echo;

/* ---- the method ---- */

static bool answer(svc_rpc_call *call, const Symbolizer__V1__SymbolizeRequest *in)
{
	Symbolizer__V1__SymbolizeResponse out = SYMBOLIZER__V1__SYMBOLIZE_RESPONSE__INIT;
	char **strings = calloc(in->n_mappings + 1, sizeof(*strings));
	Symbolizer__V1__LocationResult *locs = calloc(in->n_locations + 1, sizeof(*locs));
	Symbolizer__V1__LocationResult **loc_ptrs = calloc(in->n_locations + 1, sizeof(*loc_ptrs));
	bool ok = strings && locs && loc_ptrs;
	if (ok) {
		strings[0] = "";
		for (size_t i = 0; i < in->n_mappings; i++)
			strings[i + 1] = in->mappings[i]->build_id;
		for (size_t i = 0; i < in->n_locations; i++) {
			symbolizer__v1__location_result__init(&locs[i]);
			locs[i].normalized_address = in->locations[i]->address;
			loc_ptrs[i] = &locs[i];
		}
		out.n_string_table = in->n_mappings + 1;
		out.string_table = strings;
		out.n_locations = in->n_locations;
		out.locations = loc_ptrs;
		size_t n = symbolizer__v1__symbolize_response__get_packed_size(&out);
		uint8_t *wire = malloc(n ? n : 1);
		ok = wire != NULL;
		if (ok) {
			symbolizer__v1__symbolize_response__pack(&out, wire);
			ok = evbuffer_add(svc_rpc_call_response(call), wire, n) == 0;
		}
		free(wire);
	}
	free(strings);
	free(locs);
	free(loc_ptrs);
	return ok;
}

static void echo_handle(void *obj, svc_rpc_call *call)
{
	echo *e = obj;
	e->calls++;
	size_t n;
	const uint8_t *body = svc_rpc_call_body(call, &n);
	Symbolizer__V1__SymbolizeRequest *in =
		symbolizer__v1__symbolize_request__unpack(NULL, n, body);
	if (!in) {
		svc_rpc_call_failf(call, SVC_E_INVALID, "Echo: not a SymbolizeRequest");
		return;
	}
	bool ok = answer(call, in);
	symbolizer__v1__symbolize_request__free_unpacked(in, NULL);
	if (!ok) {
		svc_rpc_call_failf(call, SVC_E_NOMEM, "Echo: out of memory");
		return;
	}
	svc_rpc_call_ok(call);
}

/* ---- the route ---- */

static bool echo_route(void *obj, struct evhttp_request *req, const char *path,
		       const char *query)
{
	(void)query;
	echo *e = obj;
	struct evbuffer *b = evbuffer_new();
	if (!b) {
		evhttp_send_error(req, 500, NULL);
		return true;
	}
	evbuffer_add_printf(b, "echo %s\n", path + sizeof("/echo/") - 1);
	e->ctx->reply(e->ctx->arg, req, "echo", 200, b);
	evbuffer_free(b);
	return true;
}

/* ---- the row ---- */

static void *echo_create(const svc_room_ctx *ctx, svc_error *err)
{
	echo *e = calloc(1, sizeof(*e));
	if (!e) {
		svc_error_set(err, SVC_E_NOMEM, "echo: out of memory");
		return NULL;
	}
	e->ctx = ctx;
	return e;
}

static void echo_stop(void *obj)
{
	(void)obj;
	room_echo_stops++;
}

static void echo_destroy(void *obj)
{
	room_echo_destroys++;
	free(obj);
}

static void echo_metrics(const void *obj, base_buf *b)
{
	const echo *e = obj;
	base_expo_family(b, "symbolizer_test_echo_calls_total", "counter",
			 "Echo calls (a test-only room).");
	base_expo_u64(b, "symbolizer_test_echo_calls_total", "", e->calls);
}

static const svc_room_method echo_methods[] = {
	{.name = "Echo", .handle = echo_handle,
	 .request = &symbolizer__v1__symbolize_request__descriptor,
	 .response = &symbolizer__v1__symbolize_response__descriptor},
};

static const svc_room_route echo_routes[] = {
	{EVHTTP_REQ_GET, "/echo/", echo_route},
};

const svc_room room_echo = {
	.name = "echo",
	.create = echo_create,
	.stop = echo_stop,
	.destroy = echo_destroy,
	.render_metrics = echo_metrics,
	.methods = echo_methods,
	.n_methods = SVC_ROOM_COUNT(echo_methods),
	.routes = echo_routes,
	.n_routes = SVC_ROOM_COUNT(echo_routes),
};
