/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_flags: how every symbolctl subcommand reads its command line. Each
 * declares its flags as base_flag rows over its own settings struct (as the
 * daemon does, base/base_flag.h) and hands argv here: --help prints the
 * command's usage to stdout (exit 0); an unknown flag or a bad value prints
 * "symbolctl CMD: what" and the usage to stderr (exit 2); the positional
 * words come back in order.
 */
#ifndef SYMBOLCTL_CTL_FLAGS_H
#define SYMBOLCTL_CTL_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base_flag.h"

/* The daemon to ask, first in the settings of version and status: their
 * --server (not empty) and --timeout (above 0) rows parse into it. */
struct ctl_remote {
	const char *server;
	int64_t timeout_ms;
};

/* The daemon every subcommand that always talks to one asks when no --server is
 * given: $SYMBOLIZER_URL when set and not empty, else CTL_DEFAULT_SERVER. */
#define CTL_DEFAULT_SERVER "http://127.0.0.1:8080"
#define CTL_SERVER_HELP "(default $SYMBOLIZER_URL, else " CTL_DEFAULT_SERVER ")"
const char *ctl_default_server(void);

/* A build ID given on the command line, lowercased in place (the edge of
 * DESIGN.md's "lowercase hex"): uppercase from other tools is accepted. */
void ctl_lower_build_id(const char *hex);

bool ctl_parse_server(void *settings, const char *value, char *err, size_t err_size);
bool ctl_parse_timeout(void *settings, const char *value, char *err, size_t err_size);

/* -h/--help anywhere on the line wins over every error (not only in order). */
#define CTL_FLAGS_HELP_FIRST (1u << 16)

/*
 * Parses argv[1..argc) (how: BASE_FLAG_STOP_AT_POSITIONAL, CTL_FLAGS_HELP_FIRST).
 * Returns -1 with *pos (malloc'ed, free it) holding *n_pos positional words,
 * else the exit status the command ends with (told on stdout or stderr).
 */
int ctl_flags_parse(const char *cmd, const base_flag_group *groups, size_t n_groups,
		    unsigned how, int argc, char **argv, char ***pos, int *n_pos,
		    void (*usage)(FILE *out));

#endif
