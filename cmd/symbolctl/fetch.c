// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl fetch: fetches build IDs through the local debug dirs and upstream
 * debuginfod servers into a data dir (the store symbolizerd uses), with the
 * daemon's own fetcher, and prints one line per build ID as its fetch ends.
 * Also inspects a store (--info, --verify). The driver of the store/upstream
 * integration tests and of bench/bench_fetch.sh. With --server it asks a
 * running daemon instead (fetch_server.c), whose store is locked.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "base/base_vec.h"
#include "cmd/symbolctl/commands.h"
#include "service/core/svc_build_id.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/rpc_call.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/fetch_server.h"
#include "cmd/symbolctl/progress.h"
#include "service/fetch/svc_fetcher.h"
#include "service/resolve/svc_packages.h"
#include "service/core/svc_config.h"
#include "storage/stor_db.h"

struct run {
	stor_db *store;
	svc_fetcher *fetcher;
	base_vec id_vec;       /* sym_build_id: the ids asked for ... */
	sym_build_id *ids;     /* ... = id_vec's data and length */
	size_t n_ids, next, done;
	int failed;            /* the worst CTL_EXIT_* of the fetches */
	bool serial;
	const char *out_dir;
	progress *prog;
	uint64_t stored;       /* bytes the fetches hold */
	svc_packages *packages; /* --package-dir: catalogue pass, and its source */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl fetch [FLAGS] [BUILDID...]\n"
		"       symbolctl fetch --server URL [--wait DUR] [--no-progress] [BUILDID...]\n"
		"\n"
		"Fetches each build ID (hex; read one per line from stdin when none is given)\n"
		"into the store under --data-dir: local debug dirs first, then the package\n"
		"archives of --package-dir (catalogued first, in the store), then the upstream\n"
		"debuginfod servers, as symbolizerd does. Prints, as each one ends:\n"
		"  BUILDID STATUS kind=K size=N cached=0|1 source=S [alt=ID:STATUS] [error=\"...\"]\n"
		"With --server, asks that running symbolizerd to fetch and index them instead\n"
		"(warming its store, which it holds locked) and prints, as each one ends:\n"
		"  BUILDID STATUS functions=0|1 lines=0|1 inlines=0|1 [error=\"...\"]\n"
		"A progress line (done/total, bytes, rate, ETA) is drawn on stderr when stdout\n"
		"and stderr are terminals.\n"
		"\n"
		"  --server URL    the daemon to warm, e.g. http://127.0.0.1:8080\n"
		"  --wait DUR      with --server: how long to keep asking while the daemon\n"
		"                  fetches or indexes (default 60s)\n"
		"  --no-progress   no progress line even on a terminal\n"
		"  --serial        one fetch at a time (default: all at once, within the limits)\n"
		"  --out DIR       also write each fetched file to DIR/BUILDID\n"
		"  --stats         print fetcher and per-upstream counters at the end\n"
		"  --info          print what the store holds for each build ID; fetch nothing\n"
		"  --verify        check the whole store's consistency; fetch nothing\n"
		"\n"
		"1 means a build ID was not found (not_found, too_large, or not OK from the\n"
		"daemon); 3 that upstream servers failed (error) or the daemon could not be\n"
		"asked; 4 that the store (or --out) could not be used, e.g. locked by a\n"
		"running symbolizerd.\n" CTL_EXIT_HELP "\n");
	svc_config cfg;
	svc_config_init(&cfg);
	base_flag_group g = svc_config_flags(&cfg);
	base_flag_usage(out, &g, 1);
	svc_config_deinit(&cfg);
}

static void log_line(void *arg, const char *line)
{
	struct run *r = arg;
	progress_clear(r->prog);
	fprintf(stderr, "symbolctl fetch: %s\n", line);
}

static void print_escaped(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s == '\n' ? ' ' : *s);
	}
	putchar('"');
}

static int write_out(struct run *r, const sym_build_id *id, const char *hex)
{
	stor_blob b;
	stor_error err = {0};
	if (stor_get_file(r->store, SVC_STORE_KEY(id), &b, NULL, &err) != STOR_OK) {
		fprintf(stderr, "symbolctl fetch: %s: reading the store: %s\n", hex, err.msg);
		return -1;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", r->out_dir, hex);
	FILE *fp = fopen(path, "wb");
	int rc = fp && fwrite(b.data, 1, b.size, fp) == b.size ? 0 : -1;
	if (fp && fclose(fp) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "symbolctl fetch: %s: %s\n", path, strerror(errno));
	stor_blob_release(&b);
	return rc;
}

static void start_next(struct run *r);

static int fetch_exit_code(svc_fetch_status st)
{
	return st == SVC_FETCH_OK ? CTL_EXIT_OK
	       : st == SVC_FETCH_ERROR || st == SVC_FETCH_PENDING ? CTL_EXIT_SERVER
								   : CTL_EXIT_NOT_FOUND;
}

static void on_done(const svc_fetch_result *res, void *arg)
{
	struct run *r = arg;
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&res->build_id, hex);
	progress_clear(r->prog);
	printf("%s %s kind=%s size=%llu cached=%d source=%s", hex,
	       svc_fetch_status_name(res->status), stor_kind_name(res->kind),
	       (unsigned long long)res->size, res->cached ? 1 : 0,
	       res->source[0] ? res->source : "-");
	if (res->has_alt) {
		char alt[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&res->alt_id, alt);
		printf(" alt=%s:%s", alt, svc_fetch_status_name(res->alt_status));
	}
	if (res->error[0]) {
		printf(" error=");
		print_escaped(res->error);
	}
	putchar('\n');
	fflush(stdout);
	int code = fetch_exit_code(res->status);
	if (code == CTL_EXIT_OK && res->has_alt)
		code = fetch_exit_code(res->alt_status);
	if (code == CTL_EXIT_OK && r->out_dir && write_out(r, &res->build_id, hex) != 0)
		code = CTL_EXIT_IO;
	if (code > r->failed)
		r->failed = code;
	r->done++;
	r->stored += res->status == SVC_FETCH_OK ? res->size : 0;
	progress_set(r->prog, r->done, r->stored);
	if (r->serial)
		start_next(r);
}

static void start_next(struct run *r)
{
	while (r->next < r->n_ids) {
		sym_build_id *id = &r->ids[r->next++];
		if (svc_fetch_start(r->fetcher, id, SVC_FETCH_SYMBOLS, SVC_FETCH_POLICY_FULL, on_done,
				    r) != SVC_OK) {
			fprintf(stderr, "symbolctl fetch: cannot start a fetch\n");
			r->failed = CTL_EXIT_IO;
			r->done++;
			continue;
		}
		if (r->serial)
			return;
	}
}

static bool add_id(struct run *r, const char *s)
{
	size_t len = strlen(s);
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (len == 0)
		return true;
	sym_build_id id;
	if (!sym_build_id_from_hex(s, len, &id)) {
		fprintf(stderr, "symbolctl fetch: '%.*s' is not a build ID (hex)\n", (int)len, s);
		return false;
	}
	if (base_vec_append(&r->id_vec, &id))
		return false;
	r->ids = r->id_vec.data;
	r->n_ids = r->id_vec.len;
	return true;
}

static void print_stats(struct run *r)
{
	svc_fetcher_stats st;
	svc_fetcher_get_stats(r->fetcher, &st);
	printf("fetcher started=%llu joined=%llu cache_hits=%llu local_hits=%llu "
	       "upstream_hits=%llu not_found=%llu errors=%llu too_large=%llu deferred=%llu\n",
	       (unsigned long long)st.started, (unsigned long long)st.joined,
	       (unsigned long long)st.cache_hits, (unsigned long long)st.local_hits,
	       (unsigned long long)st.upstream_hits, (unsigned long long)st.not_found,
	       (unsigned long long)st.errors, (unsigned long long)st.too_large,
	       (unsigned long long)st.deferred);
	svc_upstream_stats ups[64];
	size_t n = svc_fetcher_get_upstreams(r->fetcher, ups, 64);
	static const char *const states[] = {"closed", "open", "half_open"};
	for (size_t i = 0; i < n; i++)
		printf("upstream %s requests=%llu ok=%llu not_found=%llu too_large=%llu "
		       "failures=%llu rejected=%llu skipped=%llu bytes=%llu breaker=%s opens=%llu\n",
		       ups[i].url, (unsigned long long)ups[i].requests,
		       (unsigned long long)ups[i].ok, (unsigned long long)ups[i].not_found,
		       (unsigned long long)ups[i].too_large, (unsigned long long)ups[i].failures,
		       (unsigned long long)ups[i].rejected, (unsigned long long)ups[i].skipped,
		       (unsigned long long)ups[i].bytes, states[ups[i].breaker],
		       (unsigned long long)ups[i].breaker_opens);
	stor_stats ss;
	stor_get_stats(r->store, &ss);
	printf("store bytes=%llu max_bytes=%llu entries=%llu files=%llu evictions=%llu\n",
	       (unsigned long long)ss.bytes, (unsigned long long)ss.max_bytes,
	       (unsigned long long)ss.entries, (unsigned long long)ss.files,
	       (unsigned long long)ss.evictions);
}

static void print_info(struct run *r)
{
	int64_t now_s = (int64_t)time(NULL);
	for (size_t i = 0; i < r->n_ids; i++) {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&r->ids[i], hex);
		stor_meta m;
		stor_error err = {0};
		stor_errc rc = stor_get_meta(r->store, r->ids[i].bytes, r->ids[i].len, &m, &err);
		if (rc != STOR_OK) {
			printf("%s state=%s\n", hex, rc == STOR_E_NOT_FOUND ? "none" : stor_errc_name(rc));
			continue;
		}
		long long neg = m.neg_expiry ? (long long)(m.neg_expiry / 1000 - now_s) : 0;
		printf("%s state=%s kind=%s size=%llu index_size=%llu source=%s neg_expiry_in=%llds",
		       hex, stor_state_name(m.state), stor_kind_name(m.kind),
		       (unsigned long long)m.size, (unsigned long long)m.index_size,
		       m.source[0] ? m.source : "-", neg < 0 ? 0 : neg);
		if (m.alt_len) {
			sym_build_id alt = {.len = m.alt_len};
			memcpy(alt.bytes, m.alt_id, m.alt_len);
			char ahex[SYM_BUILD_ID_HEX_MAX];
			sym_build_id_to_hex(&alt, ahex);
			printf(" alt=%s", ahex);
		}
		if (m.last_error[0]) {
			printf(" error=");
			print_escaped(m.last_error);
		}
		putchar('\n');
	}
}

/* What the command line asks for, besides the ids and the store/upstream flags. */
struct fetch_flags {
	bool stats, info, verify, no_progress;
	const char *server;
	int64_t wait_ms;
};

static const base_flag fetch_flags[] = {
	{"--stats", NULL, BASE_FLAG_BOOL, offsetof(struct fetch_flags, stats), 0, NULL,
	 "fetcher and per-upstream counters at the end"},
	{"--info", NULL, BASE_FLAG_BOOL, offsetof(struct fetch_flags, info), 0, NULL,
	 "what the store holds for each build ID"},
	{"--verify", NULL, BASE_FLAG_BOOL, offsetof(struct fetch_flags, verify), 0, NULL,
	 "check the whole store's consistency"},
	{"--no-progress", NULL, BASE_FLAG_BOOL, offsetof(struct fetch_flags, no_progress), 0, NULL,
	 "no progress line"},
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct fetch_flags, server), 0, NULL,
	 "the daemon to warm"},
	CTL_RPC_PROTOCOL_FLAG,
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct fetch_flags, wait_ms), 0, NULL,
	 "how long to keep asking the daemon"},
};

static const base_flag fetch_run_flags[] = {
	{"--serial", NULL, BASE_FLAG_BOOL, offsetof(struct run, serial), 0, NULL,
	 "one fetch at a time"},
	{"--out", "DIR", BASE_FLAG_STRING, offsetof(struct run, out_dir), 0, NULL,
	 "also write each file to DIR/BUILDID"},
};

/* The command line, then the ids from stdin when none was given; false with
 * *status set when the command must end. (usage() tells these flags.) */
static bool parse_args(struct fetch_flags *o, struct run *r, svc_config *cfg, int argc,
		       char **argv, int *status)
{
	const base_flag_group groups[] = {
		svc_config_flags(cfg),
		{"Fetch", fetch_flags, sizeof(fetch_flags) / sizeof(fetch_flags[0]), o},
		{"Fetch", fetch_run_flags, sizeof(fetch_run_flags) / sizeof(fetch_run_flags[0]), r},
	};
	char **pos;
	int n_pos;
	*status = ctl_flags_parse("fetch", groups, 3, 0, argc, argv, &pos, &n_pos, usage);
	if (*status >= 0)
		return false;
	for (int i = 0; i < n_pos; i++) {
		if (!add_id(r, pos[i])) {
			free(pos);
			*status = CTL_EXIT_USAGE;
			return false;
		}
	}
	free(pos);
	*status = CTL_EXIT_USAGE;
	svc_error cerr;
	if (svc_config_finish(cfg, getenv("DEBUGINFOD_URLS"), &cerr) != SVC_OK) {
		fprintf(stderr, "symbolctl fetch: %s\n", cerr.msg);
		return false;
	}
	if (r->n_ids == 0 && !o->verify) {
		char line[512];
		while (fgets(line, sizeof(line), stdin))
			if (!add_id(r, line))
				return false;
	}
	return true;
}

/* The store under --data-dir, saying so when a running daemon holds it. */
static bool open_store(struct run *r, const svc_config *cfg)
{
	stor_options so;
	stor_options_init(&so);
	so.path = cfg->data_dir;
	so.max_bytes = cfg->max_store_bytes;
	stor_error serr = {0};
	if (stor_open(&so, &r->store, &serr) == STOR_OK)
		return true;
	fprintf(stderr, "symbolctl fetch: %s\n", serr.msg);
	if (fetch_store_locked(serr.msg))
		fprintf(stderr, "symbolctl fetch: the store %s is in use by a running "
				"symbolizerd: use symbolctl fetch --server URL\n", cfg->data_dir);
	return false;
}

/* --info and --verify: read the store, fetch nothing. */
static int inspect_store(struct run *r, const struct fetch_flags *o, const svc_config *cfg)
{
	int status = CTL_EXIT_OK;
	if (o->info)
		print_info(r);
	if (o->verify) {
		stor_error serr = {0};
		if (stor_verify(r->store, &serr) != STOR_OK) {
			printf("store %s: %s\n", cfg->data_dir, serr.msg);
			status = CTL_EXIT_IO;
		} else {
			stor_stats ss;
			stor_get_stats(r->store, &ss);
			printf("store %s: ok, %llu entries, %llu bytes\n", cfg->data_dir,
			       (unsigned long long)ss.entries, (unsigned long long)ss.bytes);
		}
	}
	return status;
}

/* The fetches, on an event loop of their own, with the progress line. */
static int run_fetches(struct run *r, const struct fetch_flags *o, svc_config *cfg)
{
	int status = CTL_EXIT_IO;
	svc_error err = {0};
	struct event_base *base = event_base_new();
	/* --package-dir: the catalogue, in one pass now; its source follows the
	 * debug dirs in the fetcher's source list, as in the daemon. */
	if (!svc_packages_for_config(cfg, r->store, false, &r->packages, &err)) {
		fprintf(stderr, "symbolctl fetch: %s\n", err.msg[0] ? err.msg : "out of memory");
		goto out;
	}
	src_source *packages = r->packages ? svc_packages_source(r->packages) : NULL;
	svc_fetcher_options fo = {
		.base = base, .store = r->store, .config = cfg, .log = log_line, .log_arg = r,
		.sources = packages ? &packages : NULL, .n_sources = packages ? 1 : 0,
	};
	if (!base || !(r->fetcher = svc_fetcher_create(&fo, &err))) {
		fprintf(stderr, "symbolctl fetch: %s\n", base ? err.msg : "cannot create event loop");
		goto out;
	}
	r->prog = progress_create("fetch", r->n_ids, o->no_progress);
	progress_attach(r->prog, base);
	progress_set(r->prog, 0, 0);
	start_next(r);
	while (r->done < r->n_ids)
		if (event_base_loop(base, EVLOOP_ONCE) < 0)
			break;
	if (o->stats)
		print_stats(r);
	status = r->done < r->n_ids ? CTL_EXIT_IO : r->failed;
out:
	/* The progress line and the fetcher go before the loop they run on. */
	progress_destroy(r->prog);
	r->prog = NULL;
	svc_fetcher_destroy(r->fetcher);
	r->fetcher = NULL;
	svc_packages_destroy(r->packages);
	if (base)
		event_base_free(base);
	return status;
}

int cmd_fetch(int argc, char **argv)
{
	svc_config cfg;
	svc_config_init(&cfg);
	struct run r = {0};
	base_vec_init(&r.id_vec, sizeof(sym_build_id), SIZE_MAX / sizeof(sym_build_id));
	struct fetch_flags o = {.wait_ms = 60000};
	int status;
	if (!parse_args(&o, &r, &cfg, argc, argv, &status))
		goto out;
	if (o.server) {
		status = fetch_server_run(o.server, o.wait_ms, r.ids, r.n_ids, o.no_progress);
		goto out;
	}
	status = CTL_EXIT_IO;
	if (r.out_dir && mkdir(r.out_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "symbolctl fetch: %s: %s\n", r.out_dir, strerror(errno));
		goto out;
	}
	if (!open_store(&r, &cfg))
		goto out;
	if (o.verify || o.info)
		status = inspect_store(&r, &o, &cfg);
	else
		status = run_fetches(&r, &o, &cfg);
out:
	stor_close(r.store);
	base_vec_deinit(&r.id_vec);
	svc_config_deinit(&cfg);
	return status;
}
