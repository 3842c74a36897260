// SPDX-License-Identifier: Apache-2.0
/*
 * otlp: `symbolctl otlp IN [-o OUT] [--server URL | --debug-dir DIR]`, an
 * OpenTelemetry profiles export request (opentelemetry-proto v1.11.0; binary
 * protobuf, or Connect JSON when IN starts with '{') symbolized by
 * symbolizerd's SymbolizeOTLP, or with --debug-dir here by the same steps
 * (svc_otlp_local, indexes from ctl_local_index), written in the format it
 * came in.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "base/base_flag.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/ctl_local_index.h"
#include "cmd/symbolctl/exit_codes.h"
#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "service/otlp/svc_otlp_local.h"
#include "service/rpc/svc_client.h"
#include "service/rpc/svc_rpc_json.h"
#include "symbolizer/sym_index.h"

#define DEFAULT_SERVER "http://127.0.0.1:8080"
#define METHOD "symbolizer.v1.SymbolizerService/SymbolizeOTLP"
#define REQ_DESC \
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor

#define MAX_DEBUG_DIRS 16
#define STATUS_OK SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK
#define STATUS_NOT_FOUND SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_NOT_FOUND

struct opts {
	const char *out, *server;
	int64_t wait_ms;
	const char *debug_dirs[MAX_DEBUG_DIRS];
	size_t n_debug_dirs;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl otlp IN [-o OUT] [--server URL | --debug-dir DIR...] [--wait DUR]\n"
		"\n"
		"Symbolizes the OpenTelemetry profiles export request IN\n"
		"(opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest\n"
		"of opentelemetry-proto v1.11.0; binary protobuf, or JSON when it starts with\n"
		"'{'; - for stdin) through symbolizerd's SymbolizeOTLP: each location without\n"
		"lines whose mapping names a file the daemon finds (build_id.gnu, .htlhash,\n"
		".go attributes) gets its lines; the rest is unchanged. OUT (default stdout)\n"
		"is in IN's format.\n"
		"\n"
		"  -o, --output OUT   where to write the request (default stdout)\n"
		"  --server URL       the daemon (default " DEFAULT_SERVER ")\n"
		"  --wait DUR         how long the daemon may look for debug info (default 60s)\n"
		"  --debug-dir DIR    no daemon: symbolize here, with the files under DIR\n"
		"                     (.build-id/xx/rest.debug by GNU build ID, any file by\n"
		"                     Go build ID or file hash) or at the mappings' paths;\n"
		"                     repeatable; exit 1 when some mapping is not found\n"
		"\n" CTL_EXIT_HELP);
}

static bool read_all(const char *path, base_buf *b)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "symbolctl otlp: %s: %s\n", path, strerror(errno));
		return false;
	}
	bool ok;
	while ((ok = base_buf_reserve(b, b->len < (1 << 16) ? (1 << 16) : b->len))) {
		size_t room = b->cap - b->len, got = fread(b->data + b->len, 1, room, f);
		b->len += got;
		if (got < room)
			break;
	}
	ok = ok && !ferror(f);
	if (f != stdin)
		fclose(f);
	if (!ok)
		fprintf(stderr, "symbolctl otlp: %s: read error or out of memory\n", path);
	return ok;
}

static bool write_all(const char *path, const void *buf, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;
	bool ok = f && fwrite(buf, 1, len, f) == len;
	ok = f && (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
	if (!ok)
		fprintf(stderr, "symbolctl otlp: %s: %s\n", path ? path : "stdout", strerror(errno));
	return ok;
}

static bool is_json(const base_buf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] != ' ' && b->data[i] != '\n' && b->data[i] != '\t' && b->data[i] != '\r')
			return b->data[i] == '{';
	return false;
}

/* The answer body[0..size) to OUT (JSON when json); an exit code. */
static int output(const struct opts *o, const uint8_t *body, size_t size, bool json,
		  const svc_rpc_json *codec)
{
	int rc = CTL_EXIT_OK;
	if (json) {
		base_buf text;
		svc_error err = {0};
		base_buf_init(&text, SIZE_MAX);
		if (svc_rpc_json_encode(codec, body, size, &text, &err) != SVC_OK) {
			fprintf(stderr, "symbolctl otlp: the answer: %s\n", err.msg);
			rc = CTL_EXIT_SERVER;
		} else if (!write_all(o->out, text.data, text.len)) {
			rc = CTL_EXIT_IO;
		}
		base_buf_deinit(&text);
	} else if (!write_all(o->out, body, size)) {
		rc = CTL_EXIT_IO;
	}
	return rc;
}

/* The call and the answer in out (JSON when json); an exit code. */
static int run(const struct opts *o, const base_buf *wire, bool json, const svc_rpc_json *codec)
{
	svc_client_call call = {.server = o->server, .method = METHOD, .request = wire->data,
				.request_size = wire->len, .timeout_ms = o->wait_ms};
	svc_client_result res;
	if (svc_client_unary(&call, &res) != SVC_OK) {
		fprintf(stderr, "symbolctl otlp: %s: %s: %s\n", o->server, res.code, res.message);
		svc_client_result_deinit(&res);
		return CTL_EXIT_SERVER;
	}
	int rc = output(o, res.body, res.body_size, json, codec);
	svc_client_result_deinit(&res);
	return rc;
}

/* --debug-dir: the indexes built here, one per mapping row resolved. */
struct held {
	svc_index_entry *entry;
	void *blob;
};

struct local {
	const struct opts *o;
	struct held *held;
	size_t n, cap, bad;
};

static svc_index_entry *hold(struct local *l, void ***blob)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct held *h = realloc(l->held, cap * sizeof(*h));
		if (!h)
			return NULL;
		l->held = h;
		l->cap = cap;
	}
	svc_index_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	l->held[l->n] = (struct held){e, NULL};
	*blob = &l->held[l->n].blob;
	l->n++;
	return e;
}

static void resolve_local(void *arg, size_t row, svc_lookup_mapping *m)
{
	struct local *l = arg;
	char why[512] = "out of memory";
	void **blob = NULL;
	svc_index_entry *e = hold(l, &blob);
	if (e && ctl_local_index("otlp", &m->id, NULL, l->o->debug_dirs, l->o->n_debug_dirs, e,
				 blob, why, sizeof(why))) {
		m->status = STATUS_OK;
		m->entry = e;
		return;
	}
	m->status = STATUS_NOT_FOUND;
	l->bad++;
	fprintf(stderr, "symbolctl otlp: mapping %zu (%s %s): not_found: %s\n", row,
		m->pb->build_id_kind[0] ? m->pb->build_id_kind : "gnu", m->pb->build_id, why);
}

static int run_local(const struct opts *o, const base_buf *wire, bool json,
		     const svc_rpc_json *codec)
{
	struct local l = {.o = o};
	base_buf out;
	base_buf_init(&out, SIZE_MAX);
	svc_otlp_local_stats st;
	svc_error err = {0};
	int rc;
	if (!svc_otlp_local(wire->data, wire->len, resolve_local, &l, &out, &st, &err)) {
		fprintf(stderr, "symbolctl otlp: %s\n", err.msg);
		rc = err.code == SVC_E_NOMEM ? CTL_EXIT_IO : CTL_EXIT_USAGE;
	} else {
		rc = output(o, out.data, out.len, json, codec);
		if (rc == CTL_EXIT_OK && l.bad)
			rc = CTL_EXIT_NOT_FOUND;
	}
	for (size_t i = 0; i < l.n; i++) {
		sym_index_destroy(l.held[i].entry->index);
		free(l.held[i].entry);
		free(l.held[i].blob);
	}
	free(l.held);
	base_buf_deinit(&out);
	return rc;
}

static bool add_debug_dir(void *target, const char *value, char *err, size_t err_size)
{
	struct opts *o = target;
	if (o->n_debug_dirs >= MAX_DEBUG_DIRS) {
		snprintf(err, err_size, "at most %d --debug-dir", MAX_DEBUG_DIRS);
		return false;
	}
	o->debug_dirs[o->n_debug_dirs++] = value;
	return true;
}

static const base_flag otlp_flags[] = {
	{"--output -o", "OUT", BASE_FLAG_STRING, offsetof(struct opts, out), 0, NULL,
	 "where the symbolized request goes"},
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct opts, server), 0, NULL, "the daemon"},
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, wait_ms), 0, NULL,
	 "how long the daemon may look for debug info"},
	{"--debug-dir", "DIR", BASE_FLAG_CUSTOM, 0, 0, add_debug_dir,
	 "no daemon: symbolize here with the files under DIR"},
};

int cmd_otlp(int argc, char **argv)
{
	struct opts o = {.server = DEFAULT_SERVER, .wait_ms = 60000};
	const base_flag_group g = {"Flags", otlp_flags, sizeof(otlp_flags) / sizeof(otlp_flags[0]),
				   &o};
	char **pos;
	int n_pos;
	int rc = ctl_flags_parse("otlp", &g, 1, CTL_FLAGS_HELP_FIRST, argc, argv, &pos, &n_pos,
				 usage);
	if (rc >= 0)
		return rc;
	const char *in = n_pos == 1 ? pos[0] : NULL;
	free(pos);
	if (!in) {
		fprintf(stderr, "symbolctl otlp: %s\n", n_pos ? "one input only" : "no input");
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	base_buf body, wire;
	base_buf_init(&body, SIZE_MAX);
	base_buf_init(&wire, SIZE_MAX);
	svc_rpc_json *codec = svc_rpc_json_create(&REQ_DESC);
	rc = CTL_EXIT_IO;
	if (codec && read_all(in, &body)) {
		bool json = is_json(&body);
		svc_error err = {0};
		if (json && svc_rpc_json_decode(codec, (const char *)body.data, body.len, SIZE_MAX / 1024,
						&wire, &err) != SVC_OK) {
			fprintf(stderr, "symbolctl otlp: %s: %s\n", in, err.msg);
			rc = CTL_EXIT_USAGE;
		} else {
			rc = o.n_debug_dirs ? run_local(&o, json ? &wire : &body, json, codec)
					    : run(&o, json ? &wire : &body, json, codec);
		}
	}
	svc_rpc_json_destroy(codec);
	base_buf_deinit(&body);
	base_buf_deinit(&wire);
	return rc;
}
