// SPDX-License-Identifier: Apache-2.0
/*
 * symbolizerd: the symbolization daemon. Parses flags, wires the server
 * (service/svc_server) to an event loop, and handles signals: SIGTERM and
 * SIGINT stop it gracefully (no new connections, calls in flight finish, the
 * store is flushed), then it exits 0.
 *
 * Exit status: 0 after a clean stop, 1 when it cannot start, 2 on bad usage.
 * man/symbolizerd.8 documents it all; keep it in step with --help.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#ifdef SYMBOLIZER_MIMALLOC
#include <mimalloc.h>
#endif

#include "base/base_flag.h"
#include "base/base_log.h"
#include "base/base_version.h"
#include "service/core/svc_config.h"
#include "service/core/svc_url_display.h"
#include "service/http/svc_server.h"

static bool set_log_level(void *obj, const char *value, char *err, size_t err_size)
{
	(void)obj;
	int level = base_log_parse_level(value);
	if (level < 0) {
		snprintf(err, err_size, "'%.100s' is not a level", value);
		return false;
	}
	base_log_set_level((base_log_level)level);
	return true;
}

static const base_flag log_flags[] = {
	{"--log-level", "LEVEL", BASE_FLAG_CUSTOM, 0, 0, set_log_level,
	 "debug, info, warn or error (info)"},
};

static void usage(FILE *out, const base_flag_group *groups, size_t n_groups)
{
	fprintf(out,
		"usage: symbolizerd [FLAGS]\n"
		"\n"
		"Serves symbolizer.v1.SymbolizerService/Symbolize (Connect protocol, HTTP/1.1,\n"
		"application/proto), /healthz, /version (JSON) and /metrics (Prometheus). Debug\n"
		"info comes from the store under --data-dir, the local --debug-dir trees, then\n"
		"the upstream debuginfod servers, in that order.\n"
		"\n"
		"  -h, --help                       this text\n"
		"  --version                        print the version and git revision\n"
		"\n");
	base_flag_usage(out, groups, n_groups);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	base_logf(BASE_LOG_INFO, "signal", "signal=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	svc_server_shutdown(arg);
}

/* The malloc the daemon runs on, for the "listening" line. */
static void malloc_name(char *out, size_t size)
{
#ifdef SYMBOLIZER_MIMALLOC
	int v = mi_version();   /* e.g. 209 for 2.0.9 */
	snprintf(out, size, "mimalloc-%d.%d.%d", v / 100, v / 10 % 10, v % 10);
#else
	snprintf(out, size, "libc");
#endif
}

/* The "listening" line: where it serves and where debug info comes from. */
static void log_listening(const svc_server *srv, const svc_config *config)
{
	char upstreams[1024] = "";
	for (size_t i = 0; i < config->n_upstreams; i++) {
		size_t n = strlen(upstreams);
		char shown[512];
		snprintf(upstreams + n, sizeof(upstreams) - n, "%s%s", i ? "," : "",
			 svc_url_display(config->upstreams[i], shown, sizeof(shown)));
	}
	char dirs[1024] = "";
	for (size_t i = 0; i < config->n_debug_dirs; i++) {
		size_t n = strlen(dirs);
		snprintf(dirs + n, sizeof(dirs) - n, "%s%s", i ? "," : "", config->debug_dirs[i]);
	}
	char allocator[32];
	malloc_name(allocator, sizeof(allocator));
	base_logf(BASE_LOG_INFO, "listening",
		 "addr=%s data_dir=\"%s\" debug_dirs=\"%s\" upstreams=\"%s\" malloc=%s",
		 svc_server_address(srv), config->data_dir, dirs, upstreams, allocator);
}

int main(int argc, char **argv)
{
	svc_config config;
	svc_config_init(&config);
	svc_server_options opts;
	svc_server_options_init(&opts);
	const base_flag_group groups[] = {
		{"Logging", log_flags, 1, NULL},
		svc_server_flags(&opts),
		svc_config_flags(&config),
		svc_s3_settings_flags(&config.s3),
	};
	const size_t n_groups = sizeof(groups) / sizeof(groups[0]);
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout, groups, n_groups);
			svc_config_deinit(&config);
			return 0;
		}
		if (strcmp(a, "--version") == 0) {
			printf("symbolizerd %s (%s)\n", base_version(), base_revision());
			svc_config_deinit(&config);
			return 0;
		}
		char why[BASE_FLAG_ERR_MAX];
		base_flag_result rc = base_flag_parse(groups, n_groups, argc, argv, &i, why, sizeof(why));
		if (rc == BASE_FLAG_TAKEN)
			continue;
		if (rc == BASE_FLAG_UNKNOWN)
			fprintf(stderr, "symbolizerd: unknown argument '%s' (see --help)\n", a);
		else
			fprintf(stderr, "symbolizerd: %s\n", why);
		svc_config_deinit(&config);
		return 2;
	}
	svc_error cerr;
	if (svc_config_finish(&config, getenv("DEBUGINFOD_URLS"), &cerr) != SVC_OK) {
		fprintf(stderr, "symbolizerd: %s\n", cerr.msg);
		svc_config_deinit(&config);
		return 2;
	}
	svc_error err = {0};
	opts.config = &config;
	signal(SIGPIPE, SIG_IGN);

	struct event_base *base = event_base_new();
	if (!base) {
		fprintf(stderr, "symbolizerd: cannot create the event loop\n");
		return 1;
	}
	svc_server *srv = svc_server_create(base, &opts, &err);
	if (!srv) {
		base_logf(BASE_LOG_ERROR, "cannot start", "error=\"%s\"", err.msg);
		event_base_free(base);
		svc_config_deinit(&config);
		return 1;
	}
	struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, srv);
	struct event *sigint = evsignal_new(base, SIGINT, on_signal, srv);
	if (!sigterm || !sigint || event_add(sigterm, NULL) || event_add(sigint, NULL)) {
		fprintf(stderr, "symbolizerd: cannot handle signals\n");
		return 1;
	}
	log_listening(srv, &config);
	event_base_dispatch(base);
	event_free(sigterm);
	event_free(sigint);
	svc_server_destroy(srv);
	event_base_free(base);
	svc_config_deinit(&config);
	base_logf(BASE_LOG_INFO, "stopped", NULL);
	return 0;
}
