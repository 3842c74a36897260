// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl symbolize: a client of symbolizerd. Sends addresses of one build ID
 * to the daemon's Symbolize RPC and prints the answers in llvm-symbolizer's
 * format, like `symbolctl addr2line`, so the two diff cleanly. A mapping the
 * daemon answers PENDING for (fetch or index build in progress) is asked
 * again after its retry hint, until --wait runs out.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/llvm_format.h"
#include "cmd/symbolctl/rpc_call.h"
#include "cmd/symbolctl/mapping_status.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "base/base_flag.h"

#define BATCH_MAX 10000
#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct opts {
	const char *server;
	const char *build_id;
	const char *id_kind;     /* --kind: the build ID's identity kind ("" : gnu) */
	const char *section;
	Symbolizer__V1__AddressKind kind;
	uint64_t memory_start, memory_limit, file_offset;
	bool no_inline, no_demangle, return_addresses;
	int64_t wait_ms;
	int64_t timeout_ms;
	int failed;  /* the worst CTL_EXIT_* so far (1 < 3 < 4) */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl symbolize [--server URL] --build-id HEX [FLAGS] [ADDR...]\n"
		"\n"
		"Asks symbolizerd to symbolize addresses (hex, with or without 0x) of the ELF\n"
		"file with that build ID, from the arguments or, when there are none, one per\n"
		"line on stdin, and prints the frames as llvm-symbolizer does.\n"
		"\n"
		"  --server URL           the daemon " CTL_SERVER_HELP "\n"
		"  --build-id HEX         GNU build ID of the file\n"
		"  --kind KIND            --build-id is another identity: go (the Go build ID\n"
		"                         string) or htlhash (the OTel file hash)\n"
		"  --runtime              addresses are process addresses of a mapping:\n"
		"    --memory-start A     where the mapping starts (hex)\n"
		"    --memory-limit A     where it ends (hex; optional)\n"
		"    --file-offset O      the file offset it maps (hex)\n"
		"    (a kernel module: --memory-start is where its section, .text or --section,\n"
		"     is loaded; vmlinux: the runtime _stext, the KASLR slide found as pprof does)\n"
		"  --offsets              addresses are offsets in the file\n"
		"  --section NAME         addresses are offsets within section NAME (e.g. .text of\n"
		"                         a kernel module); with --runtime, the section whose\n"
		"                         runtime address --memory-start is\n"
		"  --return-addresses     addresses are return addresses (looked up at -1)\n"
		"  --no-inlines           only the function the code belongs to\n"
		"  --no-demangle          linkage names as in the symbol table\n"
		"  --wait DUR             how long to keep asking while the daemon fetches or\n"
		"                         indexes the file (default 60s)\n"
		"  --timeout DUR          deadline of each call (Connect-Timeout-Ms; default 30s)\n"
		"  --protocol NAME      connect (the default), grpc (HTTP/2) or grpc-web\n"
		"\n"
		"1 means the daemon's answer for the build ID was not OK (not_found, error,\n"
		"pending when --wait ran out, ...) or an input line was not an address; 3 that\n"
		"a call failed (daemon down, Connect error, timeout).\n" CTL_EXIT_HELP);
}

/* One call; returns the response (caller frees) or NULL after printing why. */
static Symbolizer__V1__SymbolizeResponse *call_once(const struct opts *o, const uint64_t *addrs,
						    size_t n, uint32_t max_wait_ms)
{
	Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
	m.build_id = (char *)o->build_id;
	m.build_id_kind = (char *)(o->id_kind ? o->id_kind : "");
	m.address_kind = o->kind;
	m.memory_start = o->memory_start;
	m.memory_limit = o->memory_limit;
	m.file_offset = o->file_offset;
	m.section = (char *)(o->section ? o->section : "");
	Symbolizer__V1__Mapping *mp = &m;
	Symbolizer__V1__Location *locs = calloc(n, sizeof(*locs));
	Symbolizer__V1__Location **lp = calloc(n, sizeof(*lp));
	Symbolizer__V1__SymbolizeResponse *resp = NULL;
	if (!locs || !lp)
		goto out;
	for (size_t i = 0; i < n; i++) {
		Symbolizer__V1__Location l = SYMBOLIZER__V1__LOCATION__INIT;
		l.address = addrs[i];
		l.is_return_address = o->return_addresses;
		locs[i] = l;
		lp[i] = &locs[i];
	}
	Symbolizer__V1__Options op = SYMBOLIZER__V1__OPTIONS__INIT;
	op.no_inline = o->no_inline;
	op.no_demangle = o->no_demangle;
	op.max_wait_ms = max_wait_ms;
	Symbolizer__V1__SymbolizeRequest req = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	req.n_mappings = 1;
	req.mappings = &mp;
	req.n_locations = n;
	req.locations = lp;
	req.options = &op;
	ProtobufCMessage *msg;
	char why[CTL_RPC_WHY_MAX];
	if (!ctl_rpc_call(o->server, "symbolizer.v1.SymbolizerService/Symbolize", &req.base,
			  &symbolizer__v1__symbolize_response__descriptor, o->timeout_ms, &msg,
			  why)) {
		fprintf(stderr, "symbolctl symbolize: %s\n", why);
		goto out;
	}
	resp = (Symbolizer__V1__SymbolizeResponse *)msg;
	if (resp->n_locations != n || resp->n_mappings != 1) {
		fprintf(stderr, "symbolctl symbolize: the response does not match the request\n");
		symbolizer__v1__symbolize_response__free_unpacked(resp, NULL);
		resp = NULL;
	}
out:
	free(locs);
	free(lp);
	return resp;
}

static const char *str(const Symbolizer__V1__SymbolizeResponse *r, uint64_t i)
{
	return i < r->n_string_table ? r->string_table[i] : "";
}

static void print_location(const Symbolizer__V1__SymbolizeResponse *r, size_t i)
{
	const Symbolizer__V1__LocationResult *lr = r->locations[i];
	llvm_frame frames[128];
	size_t n = 0;
	for (size_t j = 0; j < lr->n_lines && n < 128; j++) {
		const Symbolizer__V1__Line *l = lr->lines[j];
		llvm_frame f = {0};
		if (l->function_index < r->n_functions) {
			const Symbolizer__V1__Function *fn = r->functions[l->function_index];
			f.function = str(r, fn->name);
			f.file = str(r, fn->filename);
		}
		f.line = l->line > 0 && l->line <= UINT32_MAX ? (uint32_t)l->line : 0;
		f.column = l->column > 0 && l->column <= UINT32_MAX ? (uint32_t)l->column : 0;
		frames[n++] = f;
	}
	llvm_format_frames(stdout, frames, n);
}

static void fail(struct opts *o, int code)
{
	if (code > o->failed)
		o->failed = code;
}

/* Symbolizes one batch, asking again while the daemon answers PENDING. */
static int run_batch(struct opts *o, const uint64_t *addrs, size_t n)
{
	int64_t give_up = base_mono_ms() + o->wait_ms;
	for (;;) {
		int64_t left = give_up - base_mono_ms();
		uint32_t max_wait = left > 0 ? (uint32_t)(left < 10000 ? left : 10000) : 1;
		Symbolizer__V1__SymbolizeResponse *r = call_once(o, addrs, n, max_wait);
		if (!r) {
			for (size_t i = 0; i < n; i++)
				llvm_format_frames(stdout, NULL, 0);
			fail(o, CTL_EXIT_SERVER);
			return fflush(stdout) == 0 ? 0 : -1;
		}
		const Symbolizer__V1__MappingResult *m = r->mappings[0];
		if (m->status == STATUS(PENDING) && base_mono_ms() < give_up) {
			int64_t sleep_ms = m->retry_after_ms ? m->retry_after_ms : 500;
			if (sleep_ms > give_up - base_mono_ms())
				sleep_ms = give_up - base_mono_ms();
			symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
			if (sleep_ms > 0) {
				struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000};
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (m->status != STATUS(OK)) {
			fprintf(stderr, "symbolctl symbolize: build id %s: %s%s%s\n", o->build_id,
				mapping_status_name(m->status), m->error[0] ? ": " : "", m->error);
			fail(o, CTL_EXIT_NOT_FOUND);
		}
		for (size_t i = 0; i < n; i++)
			print_location(r, i);
		symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
		return fflush(stdout) == 0 ? 0 : -1;
	}
}

/* Reads stdin lines; sends a batch when BATCH_MAX is reached or no more input
 * is ready right now, so a pipe gets each answer before it sends the next. */
static int run_stdin(struct opts *o)
{
	uint64_t *addrs = malloc(BATCH_MAX * sizeof(*addrs));
	char line[4096];
	size_t n = 0;
	int rc = 0;
	if (!addrs)
		return -1;
	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		bool ready = poll(&p, 1, 0) > 0;
		if (n > 0 && (!ready || n == BATCH_MAX)) {
			if (run_batch(o, addrs, n) != 0) {
				rc = -1;
				break;
			}
			n = 0;
		}
		if (!fgets(line, sizeof(line), stdin))
			break;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (llvm_format_parse_address(line, &addrs[n]) != 0) {
			/* symbolctl's one rule for a bad line (addr2line too): echoed on
			 * stderr, answered ?? in its place so the output lines up with
			 * the input, exit status 1. The batch before it is answered first. */
			if (n > 0 && run_batch(o, addrs, n) != 0) {
				rc = -1;
				break;
			}
			n = 0;
			line[strcspn(line, "\r\n")] = '\0';
			fprintf(stderr, "symbolctl symbolize: not a hex address: %s\n", line);
			llvm_format_frames(stdout, NULL, 0);
			fflush(stdout);
			fail(o, CTL_EXIT_NOT_FOUND);
			continue;
		}
		n++;
	}
	if (rc == 0 && n > 0 && run_batch(o, addrs, n) != 0)
		rc = -1;
	free(addrs);
	return rc;
}

static bool parse_hex(const char *s, uint64_t *out)
{
	return llvm_format_parse_address(s, out) == 0;
}

static bool set_runtime(void *obj, const char *value, char *err, size_t err_size)
{
	(void)value, (void)err, (void)err_size;
	((struct opts *)obj)->kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME;
	return true;
}

static bool set_offsets(void *obj, const char *value, char *err, size_t err_size)
{
	(void)value, (void)err, (void)err_size;
	((struct opts *)obj)->kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_FILE_OFFSET;
	return true;
}

static bool hex_into(uint64_t *dst, const char *value, char *err, size_t err_size)
{
	if (parse_hex(value, dst))
		return true;
	snprintf(err, err_size, "'%.100s' is not hex", value);
	return false;
}

static bool set_memory_start(void *obj, const char *value, char *err, size_t err_size)
{
	return hex_into(&((struct opts *)obj)->memory_start, value, err, err_size);
}

static bool set_memory_limit(void *obj, const char *value, char *err, size_t err_size)
{
	return hex_into(&((struct opts *)obj)->memory_limit, value, err, err_size);
}

static bool set_file_offset(void *obj, const char *value, char *err, size_t err_size)
{
	return hex_into(&((struct opts *)obj)->file_offset, value, err, err_size);
}

static const base_flag symbolize_flags[] = {
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct opts, server), 0, NULL, "the daemon"},
	CTL_RPC_PROTOCOL_FLAG,
	{"--build-id", "HEX", BASE_FLAG_STRING, offsetof(struct opts, build_id), 0, NULL,
	 "the file's build ID"},
	{"--kind", "KIND", BASE_FLAG_STRING, offsetof(struct opts, id_kind), 0, NULL,
	 "the build ID's identity kind: gnu, go, htlhash"},
	{"--runtime", NULL, BASE_FLAG_BOOL, 0, 0, set_runtime, "runtime addresses"},
	{"--offsets", NULL, BASE_FLAG_BOOL, 0, 0, set_offsets, "file offsets"},
	{"--section", "NAME", BASE_FLAG_STRING, offsetof(struct opts, section), 0, NULL,
	 "offsets within section NAME"},
	{"--memory-start", "HEX", BASE_FLAG_CUSTOM, 0, 0, set_memory_start, "the mapping's start"},
	{"--memory-limit", "HEX", BASE_FLAG_CUSTOM, 0, 0, set_memory_limit, "the mapping's end"},
	{"--file-offset", "HEX", BASE_FLAG_CUSTOM, 0, 0, set_file_offset, "the mapping's offset"},
	{"--return-addresses", NULL, BASE_FLAG_BOOL, offsetof(struct opts, return_addresses), 0,
	 NULL, "addresses are return addresses"},
	{"--no-inlines", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_inline), 0, NULL,
	 "one frame per address"},
	{"--no-demangle", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_demangle), 0, NULL,
	 "linkage names"},
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, wait_ms), 0, NULL,
	 "how long the daemon may look for debug info"},
	{"--timeout", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, timeout_ms), 0, NULL,
	 "deadline of each call"},
};

/* The addresses into addrs, then the flags' combinations; false (told) on bad usage. */
static bool check_args(char **pos, int n_pos, struct opts *o, uint64_t *addrs, size_t *n)
{
	for (int i = 0; i < n_pos; i++) {
		if (!parse_hex(pos[i], &addrs[(*n)++])) {
			fprintf(stderr, "symbolctl symbolize: '%s' is not a hex address\n", pos[i]);
			return false;
		}
	}
	if (!o->build_id) {
		fprintf(stderr, "symbolctl symbolize: --build-id is required\n");
		return false;
	}
	if (!o->id_kind || strcmp(o->id_kind, "go") != 0)  /* hex (a Go build ID is not) */
		ctl_lower_build_id(o->build_id);
	if (o->section && o->kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_FILE_OFFSET) {
		fprintf(stderr, "symbolctl symbolize: --section and --offsets exclude each other\n");
		return false;
	}
	if (o->section && o->kind != SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME)
		o->kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_SECTION;
	return true;
}

int cmd_symbolize(int argc, char **argv)
{
	struct opts o = {.server = ctl_default_server(), .wait_ms = 60000, .timeout_ms = 30000,
			 .kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_ELF};
	const base_flag_group g = {"Flags", symbolize_flags,
				   sizeof(symbolize_flags) / sizeof(symbolize_flags[0]), &o};
	char **pos;
	int n_pos;
	int rc = ctl_flags_parse("symbolize", &g, 1, CTL_FLAGS_HELP_FIRST, argc, argv, &pos, &n_pos,
				 usage);
	if (rc >= 0)
		return rc;
	uint64_t *addrs = calloc((size_t)argc, sizeof(*addrs));
	size_t n = 0;
	if (!addrs) {
		free(pos);
		return CTL_EXIT_IO;
	}
	bool ok = check_args(pos, n_pos, &o, addrs, &n);
	free(pos);
	if (!ok) {
		free(addrs);
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	rc = 0;
	if (n == 0) {
		rc = run_stdin(&o);
	} else {
		for (size_t k = 0; k < n && rc == 0; k += BATCH_MAX)
			rc = run_batch(&o, addrs + k, n - k < BATCH_MAX ? n - k : BATCH_MAX);
	}
	free(addrs);
	return rc != 0 ? CTL_EXIT_IO : o.failed;
}
