// SPDX-License-Identifier: Apache-2.0
/*
 * fetch_server: symbolctl fetch --server (see fetch_server.h). A Symbolize
 * request whose mappings carry no locations is how a client warms the daemon:
 * the daemon resolves every mapping of a request (fetch, store, index build)
 * and answers each with its status. Calls ask for at most a couple of seconds
 * of waiting each, so the progress line moves between them.
 */
#include "cmd/symbolctl/fetch_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base_clock.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/mapping_status.h"
#include "cmd/symbolctl/progress.h"
#include "cmd/symbolctl/rpc_call.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x
#define CALL_WAIT_MAX_MS 2000
#define CALL_TIMEOUT_MS 30000
#define BATCH_MAX 1000

struct warm {
	const char *server;
	char (*hex)[SYM_BUILD_ID_HEX_MAX];
	size_t *pending, n_pending, n_done, n_not_ok;
	uint32_t retry_ms;   /* the largest retry hint of the last round */
	progress *prog;
};

static void print_result(struct warm *w, const char *hex, const Symbolizer__V1__MappingResult *m)
{
	progress_clear(w->prog);
	printf("%s %s functions=%d lines=%d inlines=%d", hex, mapping_status_name(m->status),
	       m->has_functions, m->has_line_numbers, m->has_inline_frames);
	if (m->error && m->error[0]) {
		printf(" error=\"");
		for (const char *s = m->error; *s; s++)
			printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s == '\n' ? ' ' : *s);
		putchar('"');
	}
	putchar('\n');
	fflush(stdout);
	if (m->status != STATUS(OK))
		w->n_not_ok++;
	w->n_done++;
	progress_set(w->prog, w->n_done, 0);
}

/* One call for ids pending[from, from + n); keeps the ones still PENDING in
 * pending[*kept...]. CTL_EXIT_OK or CTL_EXIT_SERVER (told). */
static int call(struct warm *w, size_t from, size_t n, uint32_t wait_ms, size_t *kept)
{
	Symbolizer__V1__Mapping maps[BATCH_MAX], *mp[BATCH_MAX];
	for (size_t i = 0; i < n; i++) {
		Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
		m.build_id = w->hex[w->pending[from + i]];
		maps[i] = m;
		mp[i] = &maps[i];
	}
	Symbolizer__V1__Options op = SYMBOLIZER__V1__OPTIONS__INIT;
	op.max_wait_ms = wait_ms;
	Symbolizer__V1__SymbolizeRequest req = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	req.n_mappings = n;
	req.mappings = mp;
	req.options = &op;
	ProtobufCMessage *msg;
	char why[CTL_RPC_WHY_MAX];
	if (!ctl_rpc_call(w->server, "symbolizer.v1.SymbolizerService/Symbolize", &req.base,
			  &symbolizer__v1__symbolize_response__descriptor, CALL_TIMEOUT_MS + wait_ms,
			  &msg, why)) {
		progress_clear(w->prog);
		fprintf(stderr, "symbolctl fetch: %s\n", why);
		return CTL_EXIT_SERVER;
	}
	Symbolizer__V1__SymbolizeResponse *r = (Symbolizer__V1__SymbolizeResponse *)msg;
	if (r->n_mappings != n) {
		progress_clear(w->prog);
		fprintf(stderr, "symbolctl fetch: %s: the response does not match the request\n",
			w->server);
		symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
		return CTL_EXIT_SERVER;
	}
	for (size_t i = 0; i < n; i++) {
		size_t id = w->pending[from + i];
		const Symbolizer__V1__MappingResult *m = r->mappings[i];
		if (m->status == STATUS(PENDING)) {
			w->pending[(*kept)++] = id;
			if (m->retry_after_ms > w->retry_ms)
				w->retry_ms = m->retry_after_ms;
		} else {
			print_result(w, w->hex[id], m);
		}
	}
	symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
	return CTL_EXIT_OK;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* Asks until nothing is PENDING or the wait is spent; the last round's
 * PENDING answers are printed as such. */
static int rounds(struct warm *w, int64_t wait_ms)
{
	int64_t give_up = base_mono_ms() + wait_ms;
	for (bool last = false;;) {
		int64_t left = give_up - base_mono_ms();
		last = last || left <= 0;
		uint32_t wait = left <= 0 ? 1 : left < CALL_WAIT_MAX_MS ? (uint32_t)left
									: CALL_WAIT_MAX_MS;
		size_t n = w->n_pending, kept = 0;
		w->retry_ms = 0;
		for (size_t from = 0; from < n; from += BATCH_MAX) {
			size_t k = n - from < BATCH_MAX ? n - from : BATCH_MAX;
			int rc = call(w, from, k, wait, &kept);
			if (rc != CTL_EXIT_OK)
				return rc;
		}
		w->n_pending = kept;
		if (kept == 0)
			return CTL_EXIT_OK;
		if (last) {
			Symbolizer__V1__MappingResult pend = SYMBOLIZER__V1__MAPPING_RESULT__INIT;
			pend.status = STATUS(PENDING);
			pend.error = (char *)"still pending when --wait ran out";
			for (size_t i = 0; i < kept; i++)
				print_result(w, w->hex[w->pending[i]], &pend);
			return CTL_EXIT_OK;
		}
		int64_t pause = w->retry_ms ? w->retry_ms : 500;
		left = give_up - base_mono_ms();
		for (; pause > 0 && left > 0; pause -= 100, left -= 100) {
			sleep_ms(pause < 100 ? pause : 100);
			progress_tick(w->prog);
		}
	}
}

int fetch_server_run(const char *server, int64_t wait_ms, const sym_build_id *ids, size_t n,
		     bool no_progress)
{
	struct warm w = {.server = server};
	w.hex = calloc(n ? n : 1, sizeof(*w.hex));
	w.pending = calloc(n ? n : 1, sizeof(*w.pending));
	if (!w.hex || !w.pending) {
		free(w.hex);
		free(w.pending);
		return CTL_EXIT_IO;
	}
	for (size_t i = 0; i < n; i++) {
		sym_build_id_to_hex(&ids[i], w.hex[i]);
		w.pending[i] = i;
	}
	w.n_pending = n;
	w.prog = progress_create("warm", n, no_progress);
	progress_set(w.prog, 0, 0);
	int rc = n ? rounds(&w, wait_ms) : CTL_EXIT_OK;
	progress_destroy(w.prog);
	free(w.hex);
	free(w.pending);
	if (rc == CTL_EXIT_OK && w.n_not_ok)
		rc = CTL_EXIT_NOT_FOUND;
	return rc;
}

bool fetch_store_locked(const char *msg)
{
	return strstr(msg, "lock") &&
	       (strstr(msg, "Resource temporarily unavailable") || strstr(msg, "No locks available"));
}
