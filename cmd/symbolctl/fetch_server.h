/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fetch_server: `symbolctl fetch --server URL`, which asks a running
 * symbolizerd to fetch and index build IDs (warming its store, which the
 * daemon holds locked), and the hint symbolctl fetch gives when it finds the
 * store locked by a daemon.
 */
#ifndef SYMBOLCTL_FETCH_SERVER_H
#define SYMBOLCTL_FETCH_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"

/*
 * Sends one Symbolize call whose mappings are the build IDs (no locations),
 * asking again for the PENDING ones after the daemon's retry hint until
 * wait_ms has passed, and prints "BUILDID STATUS ..." per build ID as its
 * answer is final. Returns a CTL_EXIT_* code (exit_codes.h).
 */
int fetch_server_run(const char *server, int64_t wait_ms, const sym_build_id *ids, size_t n,
		     bool no_progress);

/* True when a store open error (RocksDB's text) says another process holds its lock. */
bool fetch_store_locked(const char *msg);

#endif
