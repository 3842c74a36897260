// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl: the command-line companion of symbolizerd. main() only picks the
 * subcommand; each one parses its own flags (see commands.h).
 *
 * Built twice: as `symbolctl-full`, which runs every command, and with
 * SYMBOLCTL_FRONT as the front `symbolctl`, which links only what `addr2line`
 * needs (fast to start) and execs symbolctl-full for the rest (ctl_full.c).
 */
#include <stdio.h>
#include <string.h>

#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_full.h"

#ifdef SYMBOLCTL_FRONT
#define FULL(fn) NULL /* run by symbolctl-full */
#else
#define FULL(fn) fn
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"addr2line", cmd_addr2line, "symbolize addresses of a local ELF file (llvm-symbolizer format)"},
	{"fetch", FULL(cmd_fetch), "fetch build IDs from local dirs and debuginfod upstreams into a store"},
	{"layout", FULL(cmd_layout), "struct and union layouts of a local ELF file (pahole format or JSON)"},
	{"pprof", FULL(cmd_pprof), "symbolize a pprof profile (or perf.data: --perf) through symbolizerd"},
	{"otlp", FULL(cmd_otlp), "symbolize OpenTelemetry profiles through symbolizerd (OTLP in, OTLP out)"},
	{"status", FULL(cmd_status), "why a build ID is (not) symbolized by symbolizerd (--server URL)"},
	{"symbolize", FULL(cmd_symbolize), "symbolize addresses through symbolizerd (llvm-symbolizer format)"},
	{"upload", FULL(cmd_upload), "upload the ELF files symbolizerd cannot find anywhere (ShouldUpload, PUT)"},
	{"version", FULL(cmd_version), "print the version (and, with --server URL, the daemon's)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: symbolctl COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'symbolctl COMMAND --help' describes each; "
		     "'symbolctl --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	const char *name = strcmp(argv[1], "--version") ? argv[1] : "version";
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		return commands[i].run ? commands[i].run(argc - 1, argv + 1) : ctl_full_exec(argv);
	}
	fprintf(stderr, "symbolctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
