// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_full.c: how the front `symbolctl` hands a command to `symbolctl-full`.
 *
 * `symbolctl` is two programs. The front (this file's caller) links only the
 * index (libdw, libelf, the compression libraries) and runs `addr2line` in
 * its own process: it starts in ~4 ms where loading the daemon's libraries
 * (RocksDB, libcurl and its TLS/Kerberos/LDAP stack, libarchive, libxml2 and
 * ICU...) takes ~20 ms, a tenth of a cold 100k-address run. Every other
 * command is run by `symbolctl-full`, the complete program, which the front
 * execs with the same arguments: next to the front itself (a build tree), or
 * in SYMBOLCTL_LIBEXEC_REL relative to it (an install:
 * bin/../libexec/symbolizer/symbolctl-full).
 */
#include "cmd/symbolctl/ctl_full.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/symbolctl/exit_codes.h"

#ifndef SYMBOLCTL_LIBEXEC_REL
#define SYMBOLCTL_LIBEXEC_REL "../libexec/symbolizer"
#endif
#define FULL_NAME "symbolctl-full"

/* DIR/REL/symbolctl-full (REL may be empty) into out; false if it does not fit. */
static bool full_path(char *out, size_t cap, const char *dir, const char *rel)
{
	int n = snprintf(out, cap, "%s%s%s/%s", dir, *rel ? "/" : "", rel, FULL_NAME);
	return n > 0 && (size_t)n < cap;
}

int ctl_full_exec(char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "symbolctl: cannot find this program (/proc/self/exe: %s), so "
				"not %s either, which runs '%s'\n", strerror(errno), FULL_NAME, argv[1]);
		return CTL_EXIT_IO;
	}
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	const char *rels[] = {"", SYMBOLCTL_LIBEXEC_REL};
	char tried[2][PATH_MAX];
	int err = ENOENT;
	for (size_t i = 0; i < 2; i++) {
		tried[i][0] = '\0';
		if (!full_path(tried[i], sizeof(tried[i]), self, rels[i]))
			continue;
		execv(tried[i], argv);  /* returns only on failure */
		if (errno != ENOENT || err == ENOENT)
			err = errno;
	}
	fprintf(stderr, "symbolctl: '%s' is run by %s, which is not installed with this "
			"symbolctl (tried %s and %s: %s)\n", argv[1], FULL_NAME, tried[0], tried[1],
		strerror(err));
	return CTL_EXIT_IO;
}
