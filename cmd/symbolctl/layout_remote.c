// SPDX-License-Identifier: Apache-2.0
/*
 * layout_remote: `symbolctl layout --server URL --build-id HEX` asks symbolizerd's
 * GetTypeLayouts (asking again while it answers PENDING, up to --wait seconds)
 * and prints the answer as `symbolctl layout --json` prints a local file's.
 */
#include "cmd/symbolctl/layout_remote.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/layout_print.h"
#include "cmd/symbolctl/rpc_call.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

static void json_members(Symbolizer__V1__TypeMember **m, size_t n)
{
	printf("[");
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"name\":", i ? "," : "");
		layout_print_json_string(stdout, m[i]->name);
		printf(",\"type\":");
		layout_print_json_string(stdout, m[i]->type);
		printf(",\"offset\":%" PRIu64 ",\"size\":%" PRIu64, m[i]->offset, m[i]->size);
		if (m[i]->bit_size)
			printf(",\"bit_offset\":%u,\"bit_size\":%u", m[i]->bit_offset, m[i]->bit_size);
		if (m[i]->is_base)
			printf(",\"base\":true");
		if (m[i]->is_virtual)
			printf(",\"virtual\":true");
		if (m[i]->offset_unknown)
			printf(",\"offset_unknown\":true");
		if (m[i]->n_dims) {
			printf(",\"dims\":[");
			for (size_t d = 0; d < m[i]->n_dims; d++)
				printf(d ? ",%" PRId64 : "%" PRId64, m[i]->dims[d]);
			printf("]");
		}
		if (m[i]->n_members) {
			printf(",\"members\":");
			json_members(m[i]->members, m[i]->n_members);
		}
		printf("}");
	}
	printf("]");
}

static void json_type(const Symbolizer__V1__TypeResult *t, bool first)
{
	printf("%s{\"query\":", first ? "" : ",");
	layout_print_json_string(stdout, t->query);
	printf(",\"found\":%s,\"layouts\":[", t->found ? "true" : "false");
	for (size_t i = 0; i < t->n_layouts; i++) {
		const Symbolizer__V1__TypeLayout *l = t->layouts[i];
		printf("%s{\"name\":", i ? "," : "");
		layout_print_json_string(stdout, l->name);
		printf(",\"kind\":\"%s\",\"size\":%" PRIu64, l->kind, l->size);
		if (l->alignment)
			printf(",\"alignment\":%u", l->alignment);
		printf(",\"cu\":");
		layout_print_json_string(stdout, l->compile_unit);
		printf(",\"members\":");
		json_members(l->members, l->n_members);
		printf("}");
	}
	printf("]}");
}

static void json_field(const Symbolizer__V1__FieldResult *f, bool first)
{
	printf("%s{\"path\":", first ? "" : ",");
	layout_print_json_string(stdout, f->path);
	if (!f->found) {
		printf(",\"found\":false,\"error\":");
		layout_print_json_string(stdout, f->error);
	} else {
		printf(",\"found\":true,\"offset\":%" PRIu64 ",\"bit_offset\":%u,\"bit_size\":%u,"
		       "\"size\":%" PRIu64 ",\"type\":", f->offset, f->bit_offset, f->bit_size,
		       f->size);
		layout_print_json_string(stdout, f->type);
	}
	printf("}");
}

/* One call; *resp set on success (free_unpacked by the caller); false after
 * saying why. */
static bool ask(const char *server, const Symbolizer__V1__GetTypeLayoutsRequest *req,
		Symbolizer__V1__GetTypeLayoutsResponse **resp)
{
	ProtobufCMessage *msg;
	char why[CTL_RPC_WHY_MAX];
	*resp = NULL;
	if (!ctl_rpc_call(server, "symbolizer.v1.SymbolizerService/GetTypeLayouts", &req->base,
			  &symbolizer__v1__get_type_layouts_response__descriptor, 60000, &msg, why)) {
		fprintf(stderr, "symbolctl layout: %s\n", why);
		return false;
	}
	*resp = (Symbolizer__V1__GetTypeLayoutsResponse *)msg;
	if (!(*resp)->result) {
		fprintf(stderr, "symbolctl layout: %s: the answer has no result\n", server);
		symbolizer__v1__get_type_layouts_response__free_unpacked(*resp, NULL);
		*resp = NULL;
		return false;
	}
	return true;
}

int layout_remote(const char *server, const char *build_id, const char **types, int n_types,
		  const char **fields, int n_fields, int wait_s)
{
	Symbolizer__V1__GetTypeLayoutsRequest req = SYMBOLIZER__V1__GET_TYPE_LAYOUTS_REQUEST__INIT;
	req.build_id = (char *)build_id;
	req.types = (char **)types;
	req.n_types = (size_t)n_types;
	req.fields = (char **)fields;
	req.n_fields = (size_t)n_fields;
	Symbolizer__V1__GetTypeLayoutsResponse *r = NULL;
	for (int waited_ms = 0;;) {
		if (!ask(server, &req, &r))
			return CTL_EXIT_SERVER;
		unsigned retry = r->result->retry_after_ms ? r->result->retry_after_ms : 500;
		if (r->result->status != STATUS(PENDING) || waited_ms >= wait_s * 1000)
			break;
		symbolizer__v1__get_type_layouts_response__free_unpacked(r, NULL);
		r = NULL;
		struct timespec ts = {retry / 1000, (long)(retry % 1000) * 1000000};
		nanosleep(&ts, NULL);
		waited_ms += (int)retry;
	}
	int rc = CTL_EXIT_OK;
	if (r->result->status != STATUS(OK)) {
		fprintf(stderr, "symbolctl: %s: %s: %s\n", build_id,
			protobuf_c_enum_descriptor_get_value(
				&symbolizer__v1__mapping_result__status__descriptor,
				r->result->status)->name, r->result->error);
		rc = CTL_EXIT_NOT_FOUND;
	} else {
		printf("{\"types\":[");
		for (size_t i = 0; i < r->n_types; i++)
			json_type(r->types[i], i == 0);
		printf("],\"fields\":[");
		for (size_t i = 0; i < r->n_fields; i++)
			json_field(r->fields[i], i == 0);
		printf("]}\n");
	}
	symbolizer__v1__get_type_layouts_response__free_unpacked(r, NULL);
	return rc;
}
