// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl: the command-line companion of symbolizerd. main() only picks the
 * subcommand; each one parses its own flags (see commands.h).
 */
#include <stdio.h>
#include <string.h>

#include "cmd/symbolctl/commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"addr2line", cmd_addr2line, "symbolize addresses of a local ELF file (llvm-symbolizer format)"},
	{"fetch", cmd_fetch, "fetch build IDs from local dirs and debuginfod upstreams into a store"},
	{"layout", cmd_layout, "struct and union layouts of a local ELF file (pahole format or JSON)"},
	{"pprof", cmd_pprof, "symbolize a pprof profile (or perf.data: --perf) through symbolizerd"},
	{"otlp", cmd_otlp, "symbolize OpenTelemetry profiles through symbolizerd (OTLP in, OTLP out)"},
	{"status", cmd_status, "why a build ID is (not) symbolized by symbolizerd (--server URL)"},
	{"symbolize", cmd_symbolize, "symbolize addresses through symbolizerd (llvm-symbolizer format)"},
	{"upload", cmd_upload, "upload the ELF files symbolizerd cannot find anywhere (ShouldUpload, PUT)"},
	{"version", cmd_version, "print the version (and, with --server URL, the daemon's)"},
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
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "symbolctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
