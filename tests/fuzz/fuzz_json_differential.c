// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_json_differential: the streaming JSON decoder (svc_rpc_json_decode)
 * against the json-c one it replaced (json_ref_decode.c), on any bytes.
 * First byte: bits 0-1 the message (SymbolizeRequest, GetTypeLayoutsRequest,
 * SymbolizeResponse, OTLP's ExportProfilesServiceRequest with
 * SVC_RPC_JSON_OTLP), bit 2 a cap of 8 objects and arrays, bit 3 a wire cap
 * of 64 bytes. Both must give the same code, the same wire bytes when they
 * accept, and the same message for a refused field; the differences
 * allowed are the streaming decoder's stricter syntax, which refuses what
 * json-c takes outside RFC 8259 (control characters in strings, leading
 * zeros, "1.", "-.5", bare NaN and Infinity), each with its own reason, and
 * which of a full wire cap and a bad field is met first (cap_or_field), and
 * the room a value takes while it is read that a later key replaces
 * (replaced_value_filled_cap). The decoder without its plain path (for
 * objects of integers and booleans) must give exactly what it gives with it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "json_ref_decode.h"
#include "proto/otlp/opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_rpc_json.h"

/* The reasons only the streaming decoder gives: RFC 8259 where json-c is lax. */
static bool stricter(const char *msg)
{
	static const char *const reasons[] = {
		"a control character in a string", "a number with a leading zero",
		"a number without digits after its point",
		"a number without digits before its point", "NaN and Infinity are strings",
		"-Infinity is a string",
	};
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (strstr(msg, reasons[i]))
			return true;
	return false;
}

static bool field_error(const char *msg)
{
	return !strncmp(msg, "invalid JSON request: field ", 28);
}

/*
 * A request that both fills the wire cap and holds a bad field: which one a
 * decoder meets first depends on the order it writes fields in (the
 * document's here, json-c's tree's there), so either answer is right.
 */
static bool cap_or_field(svc_errc a, const svc_error *ea, svc_errc b, const svc_error *eb)
{
	return (a == SVC_E_TOO_LARGE && b == SVC_E_INVALID && field_error(eb->msg)) ||
	       (b == SVC_E_TOO_LARGE && a == SVC_E_INVALID && field_error(ea->msg));
}

/* Object members of a text json-c took in strict mode (no comments): its
 * colons outside strings. */
static size_t members_in_text(const char *s, size_t n)
{
	size_t k = 0;
	bool in_string = false;
	for (size_t i = 0; i < n; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"') {
			in_string = true;
		} else if (s[i] == ':') {
			k++;
		}
	}
	return k;
}

static size_t members_in_tree(json_object *o)
{
	size_t k = 0;
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, v) {
			(void)key;
			k += 1 + members_in_tree(v);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			k += members_in_tree(json_object_array_get_idx(o, i));
	}
	return k;
}

/*
 * A key given twice: the streaming decoder holds the first value's wire
 * while it reads it (it cannot know a later key replaces it), json-c's tree
 * never holds it, so a text whose replaced value fills the wire cap is
 * TOO_LARGE there and taken here. Allowed only when the text has keys json-c
 * dropped and the same document without them (json-c's tree written back)
 * is taken by the streaming decoder under the same caps, with json-c's wire.
 */
static bool replaced_value_filled_cap(const svc_rpc_json *j, const char *text, size_t n,
				      size_t max_containers, size_t cap, const base_buf *w_old)
{
	json_tokener *tok = json_tokener_new_ex(SVC_RPC_JSON_MAX_DEPTH);
	if (!tok)
		abort();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_object *o = json_tokener_parse_ex(tok, text, (int)n);
	json_tokener_free(tok);
	bool ok = false;
	if (o && members_in_text(text, n) > members_in_tree(o)) {
		const char *plain = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		base_buf w;
		base_buf_init(&w, cap);
		svc_error e = {0};
		ok = svc_rpc_json_decode(j, plain, strlen(plain), max_containers, &w, &e) == SVC_OK &&
		     w.len == w_old->len && (!w.len || !memcmp(w.data, w_old->data, w.len));
		base_buf_deinit(&w);
	}
	json_object_put(o);
	return ok;
}

/* The streaming decoder without its plain path (a general codec) gives
 * exactly what it gives with it: the code, the bytes and the message. */
static void plain_path_changes_nothing(const svc_rpc_json *general, const char *text, size_t n,
				       size_t max_containers, size_t cap, svc_errc r,
				       const base_buf *w, const svc_error *e)
{
	base_buf wg;
	base_buf_init(&wg, cap);
	svc_error eg = {0};
	svc_errc rg = svc_rpc_json_decode(general, text, n, max_containers, &wg, &eg);
	if (rg != r || wg.len != w->len || (w->len && memcmp(wg.data, w->data, w->len)) ||
	    (r != SVC_OK && strcmp(eg.msg, e->msg))) {
		fprintf(stderr, "plain path: %d %s (%zu bytes)\ngeneral:    %d %s (%zu bytes)\n",
			(int)r, r ? e->msg : "", w->len, (int)rg, rg ? eg.msg : "", wg.len);
		abort();
	}
	base_buf_deinit(&wg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static svc_rpc_json *codecs[4], *general[4];
	if (!codecs[0]) {
		const ProtobufCMessageDescriptor *types[4] = {
			&symbolizer__v1__symbolize_request__descriptor,
			&symbolizer__v1__get_type_layouts_request__descriptor,
			&symbolizer__v1__symbolize_response__descriptor,
			&opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor,
		};
		for (int i = 0; i < 4; i++) {
			unsigned flags = i == 3 ? SVC_RPC_JSON_OTLP : 0;
			codecs[i] = svc_rpc_json_create_opts(types[i], flags);
			general[i] =
				svc_rpc_json_create_opts(types[i], flags | SVC_RPC_JSON_NO_PLAIN_DECODE);
			if (!codecs[i] || !general[i])
				abort();
		}
	}
	if (size < 1)
		return 0;
	const svc_rpc_json *j = codecs[data[0] & 3];
	size_t max_containers = data[0] & 4 ? 8 : 4096, cap = data[0] & 8 ? 64 : 1u << 20;
	const char *text = (const char *)data + 1;
	base_buf w_new, w_old;
	base_buf_init(&w_new, cap);
	base_buf_init(&w_old, cap);
	svc_error e_new = {0}, e_old = {0};
	svc_errc r_new = svc_rpc_json_decode(j, text, size - 1, max_containers, &w_new, &e_new);
	svc_errc r_old = json_ref_decode(j, text, size - 1, max_containers, &w_old, &e_old);
	plain_path_changes_nothing(general[data[0] & 3], text, size - 1, max_containers, cap, r_new,
				   &w_new, &e_new);
	bool same;
	if (r_new == SVC_OK)
		same = r_old == SVC_OK && w_new.len == w_old.len &&
		       (!w_new.len || !memcmp(w_new.data, w_old.data, w_new.len));
	else if (r_old == SVC_OK)
		same = (r_new == SVC_E_INVALID && stricter(e_new.msg)) ||
		       (r_new == SVC_E_TOO_LARGE &&
			replaced_value_filled_cap(j, text, size - 1, max_containers, cap, &w_old));
	else if (r_new != r_old)
		same = (r_new == SVC_E_INVALID && stricter(e_new.msg)) ||
		       cap_or_field(r_new, &e_new, r_old, &e_old);
	else
		same = !(field_error(e_old.msg) && field_error(e_new.msg)) ||
		       !strcmp(e_old.msg, e_new.msg);
	if (!same) {
		fprintf(stderr, "streaming: %d %s (%zu bytes)\njson-c:    %d %s (%zu bytes)\n",
			(int)r_new, r_new ? e_new.msg : "", w_new.len, (int)r_old,
			r_old ? e_old.msg : "", w_old.len);
		abort();
	}
	base_buf_deinit(&w_new);
	base_buf_deinit(&w_old);
	return 0;
}
