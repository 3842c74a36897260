// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl upload: uploads private binaries and debug files to symbolizerd.
 * Reads each FILE's GNU build ID (sym_elf_probe), asks the daemon's
 * ShouldUpload which ones it cannot find anywhere (asking again while it
 * answers PENDING, up to --wait), then PUTs those to /buildid/ID/debuginfo
 * (a file with DWARF) or /buildid/ID/executable (upload_put.c) with the bearer
 * token of --token-file, with a progress line on a terminal. Files sharing a
 * build ID are sent once (the one with DWARF). One line per file on stdout.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base_clock.h"
#include "base/base_flag.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/file_map.h"
#include "cmd/symbolctl/progress.h"
#include "cmd/symbolctl/rpc_call.h"
#include "cmd/symbolctl/upload_put.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "symbolizer/sym_elf.h"

#define ANSWER(x) SYMBOLIZER__V1__UPLOAD_DECISION__ANSWER__ANSWER_##x
#define CALL_WAIT_MAX_MS 2000
#define CALL_TIMEOUT_MS 30000
#define TOKEN_MAX 4096

struct item {
	const char *path;
	char hex[SYM_BUILD_ID_HEX_MAX];
	bool debuginfo;      /* has DWARF: PUT .../debuginfo */
	uint64_t size;
	int answer;          /* ShouldUpload's (0: not asked: a bad file or a duplicate) */
	char reason[512];
};

struct opts {
	const char *server, *token_file;
	bool force, no_progress;
	int64_t wait_ms;
	char token[TOKEN_MAX + 1];
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl upload [--server URL] --token-file F [--force] [--wait DUR]\n"
		"                        [--no-progress] FILE...\n"
		"\n"
		"Uploads the ELF files the daemon cannot find anywhere (its store, local debug\n"
		"dirs, upstreams: it is asked with ShouldUpload), each to\n"
		"PUT /buildid/ID/debuginfo when it has DWARF, else /buildid/ID/executable.\n"
		"One line per file: PATH BUILDID RESULT [detail], RESULT one of stored,\n"
		"replaced, unchanged, present, duplicate, conflict, refused, pending, error.\n"
		"\n"
		"  --server URL      the daemon " CTL_SERVER_HELP "\n"
		"  --token-file F    file holding the daemon's upload token (its\n"
		"                    --upload-token-file); required, and checked even when\n"
		"                    nothing needs uploading\n"
		"  --force           upload every file, replacing what the daemon holds (?force=1)\n"
		"  --wait DUR        how long to wait while the daemon searches (default 60s)\n"
		"  --no-progress     no progress line on a terminal\n"
		"\n"
		"1 means some file was not taken (conflict, too large, still pending);\n"
		"3 that the daemon refused the token or failed; 4 that a FILE is not an ELF\n"
		"with a build ID or cannot be read.\n" CTL_EXIT_HELP);
}

static const base_flag upload_flags[] = {
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct opts, server), 0, NULL, "the daemon"},
	CTL_RPC_PROTOCOL_FLAG,
	{"--token-file", "F", BASE_FLAG_STRING, offsetof(struct opts, token_file), 0, NULL,
	 "the daemon's upload token"},
	{"--force", NULL, BASE_FLAG_BOOL, offsetof(struct opts, force), 0, NULL,
	 "upload every file"},
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct opts, wait_ms), 0, NULL,
	 "how long to wait while the daemon searches"},
	{"--no-progress", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_progress), 0, NULL,
	 "no progress line"},
};

/* -1 with the FILEs in *files (free it), else the exit status. */
static int parse(int argc, char **argv, struct opts *o, char ***files, int *n_files)
{
	const base_flag_group g = {"Flags", upload_flags,
				   sizeof(upload_flags) / sizeof(upload_flags[0]), o};
	int rc = ctl_flags_parse("upload", &g, 1, 0, argc, argv, files, n_files, usage);
	if (rc >= 0)
		return rc;
	if (*n_files == 0 || !o->token_file) {
		fprintf(stderr, "symbolctl upload: %s\n",
			*n_files == 0 ? "no FILE given" : "--token-file is required");
		usage(stderr);
		free(*files);
		*files = NULL;
		return CTL_EXIT_USAGE;
	}
	return -1;
}

static bool read_token(struct opts *o)
{
	FILE *f = fopen(o->token_file, "r");
	size_t n = f ? fread(o->token, 1, TOKEN_MAX, f) : 0;
	if (f)
		fclose(f);
	while (n && (o->token[n - 1] == '\n' || o->token[n - 1] == '\r' || o->token[n - 1] == ' '))
		n--;
	o->token[n] = '\0';
	if (!n)
		fprintf(stderr, "symbolctl upload: --token-file %s: %s\n", o->token_file,
			f ? "empty" : "cannot be read");
	return n > 0;
}

/* The build ID and kind of each file; false for a file that is none (told). */
static bool probe(struct item *it)
{
	file_map m;
	if (!file_map_open(&m, it->path))
		return false;
	sym_elf_info info;
	sym_error err;
	bool ok = sym_elf_probe(m.data, m.size, &info, &err) == SYM_OK && info.build_id.len;
	if (!ok)
		fprintf(stderr, "symbolctl upload: %s: %s\n", it->path,
			err.code != SYM_OK ? err.msg : "no GNU build-ID note");
	else {
		sym_build_id_to_hex(&info.build_id, it->hex);
		it->debuginfo = info.has_debug_info;
		it->size = m.size;
	}
	file_map_close(&m);
	return ok;
}

static void print(progress *prog, const struct item *it, const char *result, const char *detail)
{
	progress_clear(prog);
	printf("%s %s %s", it->path, it->hex[0] ? it->hex : "-", result);
	if (detail && detail[0])
		printf(" (%s)", detail);
	putchar('\n');
	fflush(stdout);
}

/* One ShouldUpload call for the items of idx[0..n); fills their answers. */
static bool ask_once(const struct opts *o, struct item *items, const size_t *idx, size_t n,
		     uint32_t wait_ms)
{
	Symbolizer__V1__UploadCandidate *c = calloc(n, sizeof(*c));
	Symbolizer__V1__UploadCandidate **cp = calloc(n, sizeof(*cp));
	bool ok = false;
	if (!c || !cp)
		goto out;
	for (size_t i = 0; i < n; i++) {
		Symbolizer__V1__UploadCandidate x = SYMBOLIZER__V1__UPLOAD_CANDIDATE__INIT;
		x.build_id = items[idx[i]].hex;
		x.kind = items[idx[i]].debuginfo ? SYMBOLIZER__V1__UPLOAD_KIND__UPLOAD_KIND_DEBUGINFO
						 : SYMBOLIZER__V1__UPLOAD_KIND__UPLOAD_KIND_EXECUTABLE;
		c[i] = x;
		cp[i] = &c[i];
	}
	Symbolizer__V1__Options op = SYMBOLIZER__V1__OPTIONS__INIT;
	op.max_wait_ms = wait_ms;
	Symbolizer__V1__ShouldUploadRequest req = SYMBOLIZER__V1__SHOULD_UPLOAD_REQUEST__INIT;
	req.n_candidates = n;
	req.candidates = cp;
	req.options = &op;
	ProtobufCMessage *msg;
	char why[CTL_RPC_WHY_MAX];
	if (!ctl_rpc_call(o->server, "symbolizer.v1.SymbolizerService/ShouldUpload", &req.base,
			  &symbolizer__v1__should_upload_response__descriptor,
			  CALL_TIMEOUT_MS + wait_ms, &msg, why)) {
		fprintf(stderr, "symbolctl upload: %s\n", why);
		goto out;
	}
	Symbolizer__V1__ShouldUploadResponse *r = (Symbolizer__V1__ShouldUploadResponse *)msg;
	ok = r->n_decisions == n;
	for (size_t i = 0; ok && i < n; i++) {
		items[idx[i]].answer = r->decisions[i]->answer;
		snprintf(items[idx[i]].reason, sizeof(items[idx[i]].reason), "%s",
			 r->decisions[i]->reason ? r->decisions[i]->reason : "");
	}
	if (!ok)
		fprintf(stderr, "symbolctl upload: %s: the response does not match the request\n",
			o->server);
	symbolizer__v1__should_upload_response__free_unpacked(r, NULL);
out:
	free(c);
	free(cp);
	return ok;
}

/* Asks about every item with answer 0 or PENDING until none is PENDING or
 * --wait is spent. False: the daemon could not be asked (told). */
static bool ask(const struct opts *o, struct item *items, size_t n, const bool *want)
{
	size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	if (!idx)
		return false;
	int64_t give_up = base_mono_ms() + o->wait_ms;
	bool ok = true;
	for (;;) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (want[i] && (!items[i].answer || items[i].answer == ANSWER(PENDING)))
				idx[k++] = i;
		int64_t left = give_up - base_mono_ms();
		if (k == 0 || (left <= 0 && items[idx[0]].answer))
			break;
		uint32_t wait = left <= 0 ? 1 : left < CALL_WAIT_MAX_MS ? (uint32_t)left
									: CALL_WAIT_MAX_MS;
		for (size_t from = 0; ok && from < k; from += 1000)
			ok = ask_once(o, items, idx + from, k - from < 1000 ? k - from : 1000, wait);
		if (!ok)
			break;
		struct timespec pause = {0, 200 * 1000000L};  /* PENDING: the search goes on */
		nanosleep(&pause, NULL);
	}
	free(idx);
	return ok;
}

struct put_progress {
	progress *prog;
	uint64_t done, bytes_before;
};

static void on_sent(void *arg, uint64_t sent)
{
	struct put_progress *pp = arg;
	progress_set(pp->prog, pp->done, pp->bytes_before + sent);
}

/* PUTs one item; its exit code (OK, NOT_FOUND, SERVER, IO). */
static int put_one(const struct opts *o, struct item *it, struct put_progress *pp)
{
	upload_put p = {.server = o->server, .hex = it->hex, .path = it->path, .token = o->token,
			.kind = it->debuginfo ? "debuginfo" : "executable", .force = o->force,
			.progress = on_sent, .arg = pp};
	upload_put_result r;
	if (!upload_put_run(&p, &r)) {
		print(pp->prog, it, "error", r.why);
		return CTL_EXIT_IO;
	}
	pp->bytes_before += it->size;
	if (r.http_status == 200 || r.http_status == 201) {
		print(pp->prog, it, r.result[0] ? r.result : "stored", r.why);
		return r.alt_missing ? CTL_EXIT_NOT_FOUND : CTL_EXIT_OK;
	}
	char detail[640];
	if (r.http_status)
		snprintf(detail, sizeof(detail), "HTTP %ld: %s", r.http_status, r.why);
	else
		snprintf(detail, sizeof(detail), "%s", r.why);
	bool mine = r.http_status == 409 || r.http_status == 413 || r.http_status == 400;
	print(pp->prog, it, r.http_status == 409 ? "conflict" : mine ? "refused" : "error", detail);
	return mine ? CTL_EXIT_NOT_FOUND : CTL_EXIT_SERVER;
}

static int worse(int a, int b)
{
	static const int rank[] = {[CTL_EXIT_OK] = 0, [CTL_EXIT_NOT_FOUND] = 1,
				   [CTL_EXIT_USAGE] = 4, [CTL_EXIT_SERVER] = 2, [CTL_EXIT_IO] = 3};
	return rank[b] > rank[a] ? b : a;
}

/* Marks each build ID's first file with DWARF (else its first file) as the
 * one to send; the others are duplicates. */
static void pick(struct item *items, size_t n, const bool *ok, bool *want)
{
	for (size_t i = 0; i < n; i++) {
		want[i] = ok[i];
		for (size_t j = 0; want[i] && j < n; j++) {
			if (j == i || !ok[j] || strcmp(items[i].hex, items[j].hex))
				continue;
			bool better = items[j].debuginfo && !items[i].debuginfo;
			if (better || (items[j].debuginfo == items[i].debuginfo && j < i))
				want[i] = false;
		}
	}
}

/* Sends what the daemon wants, prints every file's line. */
static int send_all(const struct opts *o, struct item *items, size_t n, const bool *ok,
		    const bool *want)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += want[i] && items[i].answer == ANSWER(UPLOAD);
	struct put_progress pp = {.prog = progress_create("upload", total, o->no_progress)};
	int rc = CTL_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];
		if (!ok[i]) {
			print(pp.prog, it, "error", "not an ELF file with a build ID");
			rc = worse(rc, CTL_EXIT_IO);
		} else if (!want[i]) {
			print(pp.prog, it, "duplicate", "another FILE has this build ID");
		} else if (it->answer == ANSWER(UPLOAD)) {
			rc = worse(rc, put_one(o, it, &pp));
			progress_set(pp.prog, ++pp.done, pp.bytes_before);
		} else if (it->answer == ANSWER(PRESENT)) {
			print(pp.prog, it, "present", it->reason);
		} else {
			print(pp.prog, it, it->answer == ANSWER(PENDING) ? "pending" : "refused",
			      it->reason);
			rc = worse(rc, CTL_EXIT_NOT_FOUND);
		}
	}
	progress_destroy(pp.prog);
	return rc;
}

/*
 * When nothing was PUT, the token has not been tried: an empty PUT for the
 * first file's build ID tries it (the daemon checks the token before the body
 * and refuses an empty body: 400 means the token was taken, nothing stored).
 */
static int check_token(const struct opts *o, const struct item *items, size_t n, const bool *ok)
{
	const struct item *first = NULL;
	for (size_t i = 0; i < n; i++) {
		if (ok[i] && items[i].answer == ANSWER(UPLOAD))
			return CTL_EXIT_OK;   /* a PUT went out: its answer told */
		if (ok[i] && !first)
			first = &items[i];
	}
	if (!first)
		return CTL_EXIT_OK;
	upload_put p = {.server = o->server, .hex = first->hex, .path = "/dev/null",
			.token = o->token, .kind = "debuginfo"};
	upload_put_result r;
	if (!upload_put_run(&p, &r) || r.http_status == 0) {
		fprintf(stderr, "symbolctl upload: checking the token: %s\n", r.why);
		return CTL_EXIT_SERVER;
	}
	if (r.http_status == 401 || r.http_status == 403) {
		fprintf(stderr, "symbolctl upload: %s refused the token: HTTP %ld: %s\n", o->server,
			r.http_status, r.why);
		return CTL_EXIT_SERVER;
	}
	return CTL_EXIT_OK;
}

int cmd_upload(int argc, char **argv)
{
	struct opts o = {.server = ctl_default_server(), .wait_ms = 60000};
	char **files;
	int n_files;
	int rc = parse(argc, argv, &o, &files, &n_files);
	if (rc >= 0)
		return rc;
	if (!read_token(&o)) {
		free(files);
		return CTL_EXIT_IO;
	}
	size_t n = (size_t)n_files;
	struct item *items = calloc(n, sizeof(*items));
	bool *ok = calloc(n, sizeof(*ok)), *want = calloc(n, sizeof(*want));
	if (!items || !ok || !want) {
		rc = CTL_EXIT_IO;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		items[i].path = files[i];
		ok[i] = probe(&items[i]);
	}
	pick(items, n, ok, want);
	for (size_t i = 0; o.force && i < n; i++)
		items[i].answer = ANSWER(UPLOAD);
	if (!o.force && !ask(&o, items, n, want)) {
		rc = CTL_EXIT_SERVER;
		goto out;
	}
	rc = send_all(&o, items, n, ok, want);
	rc = worse(rc, check_token(&o, items, n, ok));
out:
	memset(o.token, 0, sizeof(o.token));
	free(items);
	free(ok);
	free(want);
	free(files);
	return rc;
}
