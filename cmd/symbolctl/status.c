// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl status: why a build ID is (or is not) symbolized, from the
 * daemon's GET /buildid/ID/status (service/http/svc_status.c), printed as
 * lines an operator reads (or the JSON document itself with --json). It asks
 * nothing new of the daemon: no fetch, no build.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/base_flag.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/exit_codes.h"
#include "service/core/svc_build_id.h"
#include "service/rpc/svc_client.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl status [--server URL] [--json] [--timeout DUR] [--kind KIND] BUILDID...\n"
		"\n"
		"Says why each build ID is or is not symbolized by the symbolizerd at URL\n"
		"(its GET /buildid/ID/status): what the store holds, the negative-cache\n"
		"entries and when they expire, each source's last outcome, the upstreams'\n"
		"circuit breakers and the failures that opened them, and the index (loaded,\n"
		"stored, building, queued for build memory, or failed and why). Asks for no\n"
		"fetch and no build.\n"
		"\n"
		"  --server URL    the daemon " CTL_SERVER_HELP "\n"
		"  --json          print the daemon's JSON document as it is\n"
		"  --timeout DUR   deadline of each request (default 10s)\n"
		"  --kind KIND     the IDs are of this identity kind: gnu (default), go (the\n"
		"                  Go build ID string, as `go tool buildid` prints it) or\n"
		"                  htlhash (the OTel file hash, 32 hex digits)\n"
		"\n"
		"1 means some build ID is not symbolized (its state is not ok).\n" CTL_EXIT_HELP);
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : "";
}

static int64_t num(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static json_object *obj(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Unix ms as UTC "2026-01-02T03:04:05Z" ("-" for 0). */
static const char *when(int64_t ms, char *buf, size_t cap)
{
	if (ms <= 0)
		return "-";
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static void print_negative(json_object *doc)
{
	char t[32];
	json_object *neg = obj(doc, "negative_cache"), *st = obj(neg, "store"),
		    *mem = obj(neg, "memory");
	if (st)
		printf("negative   store: %s until %s%s: %s\n", str(st, "state"),
		       when(num(st, "expires_at_ms"), t, sizeof(t)),
		       json_object_get_boolean(obj(st, "expired")) ? " (expired)" : "",
		       str(st, "error"));
	if (mem)
		printf("negative   memory: %s until %s: %s\n", str(mem, "status"),
		       when(num(mem, "expires_at_ms"), t, sizeof(t)), str(mem, "error"));
	if (!st && !mem)
		printf("negative   none\n");
}

static void print_index(json_object *doc)
{
	char t[32];
	json_object *ix = obj(doc, "index"), *fail = obj(ix, "failed");
	printf("index      %s", str(ix, "state"));
	if (num(ix, "memory_bytes"))
		printf(", %lld bytes in memory", (long long)num(ix, "memory_bytes"));
	if (num(ix, "stored_bytes"))
		printf(", %lld bytes stored", (long long)num(ix, "stored_bytes"));
	if (json_object_get_boolean(obj(ix, "from_executable")))
		printf(", from the executable alone");
	printf("\n");
	if (fail)
		printf("           build failed %lld time(s) (%s), not before %s: %s\n",
		       (long long)num(fail, "failures"), str(fail, "status"),
		       when(num(fail, "retry_at_ms"), t, sizeof(t)), str(fail, "error"));
}

static void print_sources(json_object *doc)
{
	char t[32];
	json_object *a = obj(doc, "sources");
	size_t n = a ? json_object_array_length(a) : 0;
	if (!n)
		printf("sources    none asked (since the daemon started)\n");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(a, i);
		const char *err = str(s, "error");
		printf("%s %s %s %s: %s%s%s (%s)\n", i ? "          " : "sources   ", str(s, "type"),
		       str(s, "source"), str(s, "want"), str(s, "outcome"), *err ? ": " : "", err,
		       when(num(s, "at_ms"), t, sizeof(t)));
	}
}

static void print_upstreams(json_object *doc)
{
	char t[32];
	json_object *a = obj(doc, "upstreams");
	size_t n = a ? json_object_array_length(a) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *u = json_object_array_get_idx(a, i), *b = obj(u, "breaker");
		printf("upstream   %s: breaker %s", str(u, "url"), str(b, "state"));
		if (!strcmp(str(b, "state"), "closed")) {
			printf(" (%lld failure(s) in a row)\n", (long long)num(b, "consecutive_failures"));
			continue;
		}
		printf(" since %s, after:", when(num(b, "opened_at_ms"), t, sizeof(t)));
		json_object *by = obj(b, "opened_by");
		for (size_t k = 0; by && k < json_object_array_length(by); k++)
			printf("%s %s", k ? ";" : "", str(json_object_array_get_idx(by, k), "reason"));
		printf("\n");
	}
}

/* One build ID: 0 ok, 1 not symbolized, 3 the daemon could not say. */
static int status_one(const char *server, const sym_build_id *id, bool raw, int64_t timeout_ms)
{
	char path[300], hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(id, hex);
	snprintf(path, sizeof(path), "/buildid/%s/status%s%s", hex,
		 id->kind != SYM_ID_GNU ? "?kind=" : "",
		 id->kind != SYM_ID_GNU ? sym_id_kind_name(id->kind) : "");
	svc_client_result res;
	if (svc_client_get(server, path, timeout_ms, 16 << 20, &res) != SVC_OK) {
		fprintf(stderr, "symbolctl status: %s: %s\n", hex, res.message);
		svc_client_result_deinit(&res);
		return CTL_EXIT_SERVER;
	}
	json_tokener *tok = json_tokener_new();
	json_object *doc = tok ? json_tokener_parse_ex(tok, (const char *)res.body,
						       (int)res.body_size) : NULL;
	if (tok && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(doc);
		doc = NULL;
	}
	json_tokener_free(tok);
	if (raw)
		fwrite(res.body, 1, res.body_size, stdout);
	svc_client_result_deinit(&res);
	if (!doc || !json_object_is_type(doc, json_type_object)) {
		fprintf(stderr, "symbolctl status: %s: not a status document\n", hex);
		json_object_put(doc);
		return CTL_EXIT_SERVER;
	}
	int rc = strcmp(str(doc, "state"), "ok") ? CTL_EXIT_NOT_FOUND : CTL_EXIT_OK;
	if (!raw) {
		char t[32];
		json_object *st = obj(doc, "store");
		printf("build id   %s\nstate      %s: %s\n", str(doc, "build_id"), str(doc, "state"),
		       str(doc, "summary"));
		if (!strcmp(str(st, "state"), "present"))
			printf("store      %s, %lld bytes from %s, stored %s\n", str(st, "kind"),
			       (long long)num(st, "size"), str(st, "source"),
			       when(num(st, "stored_at_ms"), t, sizeof(t)));
		else if (!strcmp(str(st, "state"), "none"))
			printf("store      nothing\n");
		else
			printf("store      no file (a negative record: %s)\n", str(st, "state"));
		print_negative(doc);
		print_index(doc);
		print_sources(doc);
		print_upstreams(doc);
	}
	json_object_put(doc);
	return rc;
}

struct status_opts {
	struct ctl_remote remote;  /* first: --server and --timeout parse into it */
	bool raw;
	const char *kind;          /* --kind: gnu (default), go, htlhash */
};

static const base_flag status_flags[] = {
	{"--server", "URL", BASE_FLAG_CUSTOM, 0, 0, ctl_parse_server, "the daemon to ask"},
	{"--timeout", "DUR", BASE_FLAG_CUSTOM, 0, 0, ctl_parse_timeout, "deadline of each call"},
	{"--json", NULL, BASE_FLAG_BOOL, offsetof(struct status_opts, raw), 0, NULL,
	 "the daemon's JSON as it is"},
	{"--kind", "KIND", BASE_FLAG_STRING, offsetof(struct status_opts, kind), 0, NULL,
	 "the IDs' identity kind: gnu, go (the Go build ID string), htlhash"},
};

int cmd_status(int argc, char **argv)
{
	struct status_opts o = {.remote.server = ctl_default_server(), .remote.timeout_ms = 10000};
	const base_flag_group g = {"Flags", status_flags, 4, &o};
	char **pos;
	int n_pos;
	int prc = ctl_flags_parse("status", &g, 1, 0, argc, argv, &pos, &n_pos, usage);
	if (prc >= 0)
		return prc;
	const char *server = o.remote.server;
	const char **ids = (const char **)pos;
	size_t n_ids = (size_t)n_pos;
	sym_build_id *parsed = calloc(n_ids ? n_ids : 1, sizeof(*parsed));
	for (size_t i = 0; parsed && i < n_ids; i++) {
		const char *a = ids[i];
		if (!o.kind || strcmp(o.kind, "go") != 0)  /* hex: lowercased (a Go ID is not hex) */
			ctl_lower_build_id(a);
		const char *bad = i < 256 ? svc_build_id_check_kind(o.kind, a, &parsed[i])
					  : "more than 256 build IDs";
		if (!bad)
			continue;
		fprintf(stderr, "symbolctl status: bad argument '%s' (%s)\n", a, bad);
		usage(stderr);
		free(parsed);
		free(pos);
		return CTL_EXIT_USAGE;
	}
	if (!parsed) {
		free(pos);
		return CTL_EXIT_USAGE;
	}
	if (!n_ids) {
		fprintf(stderr, "symbolctl status: no build ID given\n");
		usage(stderr);
		free(pos);
		return CTL_EXIT_USAGE;
	}
	bool raw = o.raw;
	int64_t timeout_ms = o.remote.timeout_ms;
	int worst = CTL_EXIT_OK;
	for (size_t i = 0; i < n_ids; i++) {
		if (i && !raw)
			printf("\n");
		int rc = status_one(server, &parsed[i], raw, timeout_ms);
		worst = rc > worst ? rc : worst;
	}
	free(parsed);
	free(pos);
	return worst;
}
