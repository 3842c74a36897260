// SPDX-License-Identifier: Apache-2.0
/*
 * pprof: `symbolctl pprof IN [-o OUT] [--server URL]`, a pprof profile
 * symbolized by symbolizerd (the SymbolizeProfile RPC). While some mapping is
 * PENDING and --wait is not spent, the profile the daemon gave back is sent
 * again after its retry hint (its symbolized locations are kept, the others
 * looked up again). Each mapping that did not end OK is reported on stderr,
 * with its build ID and file name, and sets exit status 1.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base_buf.h"
#include "base/base_clock.h"
#include "base/base_flag.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/ctl_perf_file.h"
#include "cmd/symbolctl/ctl_pprof_local.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/mapping_status.h"
#include "cmd/symbolctl/rpc_call.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/symbolize/svc_profile_decode.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x
#define METHOD "symbolizer.v1.SymbolizerService/SymbolizeProfile"

#define MAX_DEBUG_DIRS 16

struct opts {
	const char *debug_dirs[MAX_DEBUG_DIRS];
	size_t n_debug_dirs;
	const char *in, *out, *server, *perf;
	int64_t wait_ms, timeout_ms;
	bool no_inline, no_demangle, quiet;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl pprof IN [-o OUT] [--server URL] [FLAGS]\n"
		"       symbolctl pprof --perf perf.data [-o OUT] [--server URL] [FLAGS]\n"
		"\n"
		"Symbolizes the pprof profile IN (gzipped or not; - for stdin) through\n"
		"symbolizerd: each location without lines gets its function, file and line\n"
		"(inlined frames as several lines). The result goes to OUT (default stdout,\n"
		"never a terminal), gzipped when IN was. Mappings that could not be\n"
		"symbolized (pending when --wait ran out, not found, ...) are reported on\n"
		"stderr. With --perf, the input is a `perf record -g` file instead: one\n"
		"sample per stack (samples and perf's period), mappings with their build IDs\n"
		"(kernel and modules too); the output is gzipped. --call-graph dwarf\n"
		"recordings are refused (record with -g).\n"
		"\n"
		"  -o, --output OUT   where to write the profile (default stdout)\n"
		"  --perf FILE        read perf.data FILE instead of a pprof profile\n"
		"  -q, --quiet        with --perf: no line counting what was read\n"
		"  --server URL       the daemon " CTL_SERVER_HELP "\n"
		"  --debug-dir DIR    no daemon: symbolize here, with the debug files under DIR\n"
		"                     by build ID (DIR/.build-id/xx/rest.debug; repeatable) or\n"
		"                     the files at the mappings' paths\n"
		"  --wait DUR         how long to keep asking while the daemon fetches or\n"
		"                     indexes (default 60s)\n"
		"  --timeout DUR      deadline of each call (Connect-Timeout-Ms; default 60s)\n"
		"  --no-inlines       one line per location: the function the code belongs to\n"
		"  --no-demangle      linkage names as in the symbol table\n"
		"\n" CTL_EXIT_HELP);
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	base_buf b;
	base_buf_init(&b, SIZE_MAX);
	bool ok;
	while ((ok = base_buf_reserve(&b, b.len < (1 << 16) ? (1 << 16) : b.len))) {
		size_t room = b.cap - b.len, got = fread(b.data + b.len, 1, room, f);
		b.len += got;
		if (got < room)
			break;
	}
	bool bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (!ok || bad) {
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path,
			ok ? "read error" : "out of memory");
		base_buf_deinit(&b);
		return NULL;
	}
	return base_buf_take(&b, len); /* allocated: reserved at least once */
}

/* Is the input a pprof profile? Told on stderr when not: bad input, not a server error. */
static bool profile_ok(const char *path, const uint8_t *prof, size_t len)
{
	svc_profile_limits lim = {SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2};
	base_arena arena = {0};
	svc_profile_doc d = {0};
	svc_error err;
	bool ok = svc_profile_decode(prof, len, &lim, &arena, &d, &err);
	if (!ok)
		fprintf(stderr, "symbolctl pprof: %s: not a pprof profile: %s\n", path, err.msg);
	svc_profile_doc_release(&d);
	base_arena_deinit(&arena);
	return ok;
}

static bool write_all(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = path ? fopen(path, "wb") : stdout;
	bool ok = f && fwrite(buf, 1, len, f) == len;
	ok = f && (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
	if (!ok)
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path ? path : "stdout", strerror(errno));
	return ok;
}

/* Each mapping not OK on stderr, named from the profile; how many. */
static size_t report(const uint8_t *prof, size_t len, const Symbolizer__V1__SymbolizeProfileResponse *r)
{
	svc_profile_limits lim = {SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2};
	base_arena arena = {0};
	svc_profile_doc d = {0};
	svc_error err;
	bool named = svc_profile_decode(prof, len, &lim, &arena, &d, &err) &&
		     d.p->n_mapping == r->n_mappings;
	size_t bad = 0;
	for (size_t i = 0; i < r->n_mappings; i++) {
		const Symbolizer__V1__MappingResult *m = r->mappings[i];
		if (m->status == STATUS(OK) || m->status == STATUS(UNSPECIFIED))
			continue;
		bad++;
		const Perftools__Profiles__Mapping *pm = named ? d.p->mapping[i] : NULL;
		fprintf(stderr, "symbolctl pprof: mapping %zu", i + 1);
		if (pm)
			fprintf(stderr, " (build id %s, %s)", d.p->string_table[pm->build_id],
				d.p->string_table[pm->filename]);
		fprintf(stderr, ": %s%s%s", mapping_status_name(m->status),
			m->error[0] ? ": " : "", m->error);
		if (m->retry_after_ms)
			fprintf(stderr, " (retry after %u ms)", m->retry_after_ms);
		fputc('\n', stderr);
	}
	svc_profile_doc_release(&d);
	base_arena_deinit(&arena);
	return bad;
}

static bool any_pending(const Symbolizer__V1__SymbolizeProfileResponse *r, uint32_t *retry_ms)
{
	bool pending = false;
	for (size_t i = 0; i < r->n_mappings; i++) {
		if (r->mappings[i]->status != STATUS(PENDING))
			continue;
		pending = true;
		if (r->mappings[i]->retry_after_ms > *retry_ms)
			*retry_ms = r->mappings[i]->retry_after_ms;
	}
	return pending;
}

/* One call; NULL (told) when it failed. */
static Symbolizer__V1__SymbolizeProfileResponse *call_once(const struct opts *o, uint8_t *prof,
							   size_t len, uint32_t max_wait)
{
	Symbolizer__V1__Options op = SYMBOLIZER__V1__OPTIONS__INIT;
	op.max_wait_ms = max_wait;
	op.no_inline = o->no_inline;
	op.no_demangle = o->no_demangle;
	Symbolizer__V1__SymbolizeProfileRequest req = SYMBOLIZER__V1__SYMBOLIZE_PROFILE_REQUEST__INIT;
	req.profile.data = prof;
	req.profile.len = len;
	req.options = &op;
	ProtobufCMessage *msg;
	char why[CTL_RPC_WHY_MAX];
	if (!ctl_rpc_call(o->server, METHOD, &req.base,
			  &symbolizer__v1__symbolize_profile_response__descriptor,
			  o->timeout_ms + max_wait, &msg, why)) {
		fprintf(stderr, "symbolctl pprof: %s\n", why);
		return NULL;
	}
	return (Symbolizer__V1__SymbolizeProfileResponse *)msg;
}

static int run(const struct opts *o, uint8_t *prof, size_t len)
{
	int64_t give_up = base_mono_ms() + o->wait_ms;
	Symbolizer__V1__SymbolizeProfileResponse *r;
	uint8_t *owned = NULL;  /* a profile the daemon gave back, sent again */
	for (;;) {
		int64_t left = give_up - base_mono_ms();
		uint32_t max_wait = left > 0 ? (uint32_t)(left < 10000 ? left : 10000) : 1;
		if (!(r = call_once(o, prof, len, max_wait))) {
			free(owned);
			return CTL_EXIT_SERVER;
		}
		uint32_t retry_ms = 0;
		if (!any_pending(r, &retry_ms) || base_mono_ms() >= give_up)
			break;
		/* Again with what came back: its symbolized locations stay as they are. */
		free(owned);
		prof = owned = r->profile.data;
		len = r->profile.len;
		r->profile.data = NULL;
		r->profile.len = 0;
		symbolizer__v1__symbolize_profile_response__free_unpacked(r, NULL);
		int64_t sleep_ms = retry_ms ? retry_ms : 500;
		if (sleep_ms > give_up - base_mono_ms())
			sleep_ms = give_up - base_mono_ms();
		if (sleep_ms > 0) {
			struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000};
			nanosleep(&ts, NULL);
		}
	}
	int rc = report(prof, len, r) ? CTL_EXIT_NOT_FOUND : CTL_EXIT_OK;
	if (!write_all(o->out, r->profile.data, r->profile.len))
		rc = CTL_EXIT_IO;
	symbolizer__v1__symbolize_profile_response__free_unpacked(r, NULL);
	free(owned);
	return rc;
}

static bool add_debug_dir(void *obj, const char *value, char *err, size_t err_size)
{
	struct opts *o = obj;
	if (o->n_debug_dirs == MAX_DEBUG_DIRS) {
		snprintf(err, err_size, "at most %d --debug-dir", MAX_DEBUG_DIRS);
		return false;
	}
	o->debug_dirs[o->n_debug_dirs++] = value;
	return true;
}

static const base_flag pprof_flags[] = {
	{"--debug-dir", "DIR", BASE_FLAG_CUSTOM, 0, 0, add_debug_dir,
	 "symbolize here with the debug files under DIR"},
	{"--output -o", "OUT", BASE_FLAG_STRING, offsetof(struct opts, out), 0, NULL,
	 "where the symbolized profile goes"},
	{"--perf", "FILE", BASE_FLAG_STRING, offsetof(struct opts, perf), 0, NULL,
	 "a perf.data file as input"},
	{"--quiet -q", NULL, BASE_FLAG_BOOL, offsetof(struct opts, quiet), 0, NULL,
	 "no summary of the perf.data file"},
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct opts, server), 0, NULL, "the daemon"},
	CTL_RPC_PROTOCOL_FLAG,
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, wait_ms), 0, NULL,
	 "how long the daemon may look for debug info"},
	{"--timeout", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, timeout_ms), 0, NULL,
	 "deadline of each call"},
	{"--no-inlines", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_inline), 0, NULL,
	 "one line per location"},
	{"--no-demangle", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_demangle), 0, NULL,
	 "linkage names"},
};

int cmd_pprof(int argc, char **argv)
{
	struct opts o = {.server = ctl_default_server(), .wait_ms = 60000, .timeout_ms = 60000};
	const base_flag_group g = {"Flags", pprof_flags,
				   sizeof(pprof_flags) / sizeof(pprof_flags[0]), &o};
	char **pos;
	int n_pos;
	int rc = ctl_flags_parse("pprof", &g, 1, CTL_FLAGS_HELP_FIRST, argc, argv, &pos, &n_pos,
				 usage);
	if (rc >= 0)
		return rc;
	o.in = n_pos ? pos[0] : NULL;
	free(pos);
	if (n_pos != (o.perf ? 0 : 1)) {
		fprintf(stderr, "symbolctl pprof: %s\n",
			o.perf ? "--perf FILE is the input: no other profile"
			: n_pos ? "one input profile only" : "no input profile");
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (!o.out && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "symbolctl pprof: stdout is a terminal: give -o OUT (or redirect "
				"stdout) for the binary profile\n");
		return CTL_EXIT_USAGE;
	}
	size_t len = 0;
	uint8_t *prof = NULL;
	if (o.perf) {
		rc = ctl_perf_file_profile(o.perf, o.quiet, &prof, &len);
		if (rc != CTL_EXIT_OK)
			return rc;
	} else if (!(prof = read_all(o.in, &len))) {
		return CTL_EXIT_IO;
	} else if (!profile_ok(o.in, prof, len)) {
		free(prof);
		return CTL_EXIT_IO;
	}
	if (o.n_debug_dirs) {
		uint8_t *res = NULL;
		size_t res_len = 0;
		rc = ctl_pprof_local(prof, len, o.debug_dirs, o.n_debug_dirs, o.no_inline,
				     o.no_demangle, &res, &res_len);
		if (res && !write_all(o.out, res, res_len))
			rc = CTL_EXIT_IO;
		free(res);
	} else {
		rc = run(&o, prof, len);
	}
	free(prof);
	return rc;
}
