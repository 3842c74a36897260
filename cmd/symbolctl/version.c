// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl version: prints symbolctl's version and git revision (also
 * `symbolctl --version`) and, with --server, the daemon's, from its GET
 * /version (service/http) through the RPC room's client (svc_client_get).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_flag.h"
#include "base/base_version.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/exit_codes.h"
#include "service/rpc/svc_client.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl version [--server URL] [--timeout DUR]\n"
		"\n"
		"Prints symbolctl's version and git revision; with --server, also those of the\n"
		"symbolizerd serving at URL (its GET /version).\n"
		"\n"
		"  --server URL    the daemon, e.g. http://127.0.0.1:8080\n"
		"  --timeout DUR   deadline of the request (default 10s)\n"
		"\n"
		"3 means the daemon could not be asked or gave no version.\n" CTL_EXIT_HELP);
}

/* The daemon's line, or CTL_EXIT_SERVER after saying why not. */
static int print_server(const char *server, int64_t timeout_ms)
{
	svc_client_result res;
	char version[64], revision[128];
	if (svc_client_get(server, "/version", timeout_ms, 64 * 1024, &res) != SVC_OK) {
		fprintf(stderr, "symbolctl version: %s\n", res.message);
		svc_client_result_deinit(&res);
		return CTL_EXIT_SERVER;
	}
	bool ok = svc_client_json_field(res.body, res.body_size, "version", version,
					sizeof(version)) &&
		  svc_client_json_field(res.body, res.body_size, "revision", revision,
					sizeof(revision));
	svc_client_result_deinit(&res);
	if (!ok) {
		fprintf(stderr, "symbolctl version: %s/version: not a symbolizerd version answer\n",
			server);
		return CTL_EXIT_SERVER;
	}
	printf("symbolizerd %s (%s) at %s\n", version, revision, server);
	return CTL_EXIT_OK;
}

static const base_flag version_flags[] = {
	{"--server", "URL", BASE_FLAG_CUSTOM, 0, 0, ctl_parse_server, "the daemon to ask"},
	{"--timeout", "DUR", BASE_FLAG_CUSTOM, 0, 0, ctl_parse_timeout, "deadline of the call"},
};

int cmd_version(int argc, char **argv)
{
	struct ctl_remote o = {.timeout_ms = 10000};
	const base_flag_group g = {"Flags", version_flags, 2, &o};
	char **pos;
	int n_pos;
	int rc = ctl_flags_parse("version", &g, 1, 0, argc, argv, &pos, &n_pos, usage);
	if (rc >= 0)
		return rc;
	if (n_pos) {
		fprintf(stderr, "symbolctl version: bad argument '%s'\n", pos[0]);
		usage(stderr);
		free(pos);
		return CTL_EXIT_USAGE;
	}
	free(pos);
	printf("symbolctl %s (%s)\n", base_version(), base_revision());
	fflush(stdout);
	return o.server ? print_server(o.server, o.timeout_ms) : CTL_EXIT_OK;
}
