/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_config: the operator's settings for the store and the debuginfo sources,
 * and the command-line flags that set them. symbolizerd and `symbolctl fetch`
 * share it: their main() parses with the table of svc_config_flags() among
 * its own (base_flag), then calls svc_config_finish() once.
 *
 * Flags (a value may follow as "--flag=V" or as the next argument):
 *   --data-dir DIR                    store directory (default: svc_config_default_data_dir;
 *                                     made absolute against the working directory)
 *   --debug-dir DIR                   local debug dir, repeatable, searched in order
 *                                     (.build-id/xx/rest.debug); default /usr/lib/debug;
 *                                     "--debug-dir=" alone means none
 *   --debuginfod-upstream-servers URL[,URL...]
 *                                     upstream debuginfod servers, asked in order;
 *                                     absent: $DEBUGINFOD_URLS (space-separated); absent
 *                                     too: https://debuginfod.elfutils.org/; "" = none
 *   --peer-servers URL[,URL...]       the peer tier (issue 13, scale-out): debuginfod
 *                                     servers asked before the upstreams, with
 *                                     X-Symbolizer-Peer: 1; a peer's 404 is final (the
 *                                     owner asked the upstreams); none by default
 *   --negative-cache-ttl DUR          how long "not found" is remembered (10m)
 *   --error-cache-ttl DUR             how long an upstream failure is remembered (30s)
 *   --upstream-timeout DUR            deadline of all attempts of one fetch on one
 *                                     server (retries included); also the progress
 *                                     window: connect, first byte, and each window of
 *                                     DUR must bring --upstream-min-progress bytes (90s)
 *   --upstream-min-progress SIZE      bytes per timeout window (100K)
 *   --max-debuginfo-size SIZE         largest file accepted (2G); sent upstream as
 *                                     X-DEBUGINFOD-MAXSIZE and enforced on arrival
 *   --max-store-bytes SIZE            bound of the store (0 = none; default 16G)
 *   --max-concurrent-fetches N        downloads in flight in all (16)
 *   --max-fetches-per-upstream N      downloads in flight per server (4)
 *   --upstream-retries N              retries of a failing server within one fetch (2)
 *   --upstream-retry-backoff DUR      first retry delay, doubled each time (250ms)
 *   --upstream-breaker-failures N     consecutive failures that open a server's
 *                                     circuit breaker (5)
 *   --upstream-breaker-cooldown DUR   how long an open breaker skips the server (30s)
 *   --upstream-netrc FILE             netrc file with upstream credentials (libcurl's
 *                                     CURLOPT_NETRC_FILE), instead of user:pw@ in URLs
 *   --upstream-redirects same-host|any|none
 *                                     which redirects are followed (same-host: same
 *                                     host and port; the default)
 *   --upstream-busy-defer DUR         every slot of a server busy this long: a build
 *                                     ID asks the next servers first, then comes back (1s)
 *   --package-dir DIR                 directory of .deb, .ddeb and .rpm packages,
 *                                     repeatable; asked after the debug dirs, before
 *                                     the upstreams (catalogue in the store)
 *   --package-rescan DUR              periodic rescan of the package dirs (5m; 0 =
 *                                     only at start and on inotify events)
 * DUR: a number with unit ms, s, m, h (a bare number is seconds).
 * SIZE: a number with optional K, M, G, T (powers of 1024).
 */
#ifndef SVC_CONFIG_H
#define SVC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base_flag.h"
#include "service/core/svc_error.h"
#include "service/core/svc_s3_settings.h"

#define SVC_DEFAULT_UPSTREAM "https://debuginfod.elfutils.org/"
#define SVC_DEFAULT_DEBUG_DIR "/usr/lib/debug"
/* The store's directory when --data-dir is not given: systemd's
 * $STATE_DIRECTORY (its first entry), else $XDG_STATE_HOME/symbolizer (an
 * absolute $XDG_STATE_HOME only, as the XDG spec says), else
 * $HOME/.local/state/symbolizer, else ./symbolizer-data. Never relative to
 * wherever the daemon happens to start once made absolute: a daemon started
 * from another directory opens the same store. */
#define SVC_DEFAULT_DATA_DIR_TEXT \
	"$STATE_DIRECTORY, else $XDG_STATE_HOME/symbolizer, else ~/.local/state/symbolizer"
#define SVC_FALLBACK_DATA_DIR "./symbolizer-data"

/* --upstream-redirects: which redirects an upstream may send us to. */
typedef enum svc_redirects {
	SVC_REDIRECTS_SAME_HOST = 0, /* same host and port (the default) */
	SVC_REDIRECTS_ANY,           /* any http(s) URL */
	SVC_REDIRECTS_NONE,          /* none: a redirect is an error */
} svc_redirects;

typedef struct svc_config {
	char *data_dir;
	char **debug_dirs;           /* searched in order */
	size_t n_debug_dirs;
	char **upstreams;            /* base URLs without a trailing '/', asked in order */
	size_t n_upstreams;
	char **peer_servers;         /* asked before the upstreams; a 404 there is final */
	size_t n_peer_servers;
	int64_t negative_cache_ttl_ms;
	int64_t error_cache_ttl_ms;
	int64_t upstream_timeout_ms;
	uint64_t upstream_min_progress;
	uint64_t max_debuginfo_size;
	uint64_t max_store_bytes;    /* 0 = unbounded */
	int max_concurrent_fetches;
	int max_fetches_per_upstream;
	int upstream_retries;
	int64_t upstream_retry_backoff_ms;
	int upstream_breaker_failures;
	int64_t upstream_breaker_cooldown_ms;
	int fetch_workers;           /* threads that read local files and write the store */
	char upstream_netrc[1024];   /* netrc file with upstream credentials; "" = none */
	int upstream_redirects;      /* svc_redirects: which redirects are followed */
	int64_t upstream_busy_defer_ms; /* a server busy this long: ask the next one first */
	char **package_dirs;         /* directories of .deb/.ddeb/.rpm (catalogue source) */
	size_t n_package_dirs;
	int64_t package_rescan_ms;   /* periodic rescan of package_dirs (5m; 0 = none) */
	svc_s3_settings s3;          /* the shared S3 tier (its own flag group) */
	/* private: whether a flag set the lists (so defaults do not apply) */
	bool debug_dirs_set_, upstreams_set_;
} svc_config;

/* Fills defaults (lists empty until svc_config_finish). */
void svc_config_init(svc_config *c);
void svc_config_deinit(svc_config *c);

/* The flags above as a table, bound to c (base_flag_parse, base_flag_usage). */
base_flag_group svc_config_flags(svc_config *c);

/* The default store directory (SVC_DEFAULT_DATA_DIR_TEXT) from the environment
 * into out, absolute; false when it does not fit. */
bool svc_config_default_data_dir(char *out, size_t cap);

/*
 * Applies the fallbacks: debug dirs default, upstreams from debuginfod_urls
 * (pass getenv("DEBUGINFOD_URLS")) or the default server. Checks the result.
 */
svc_errc svc_config_finish(svc_config *c, const char *debuginfod_urls, svc_error *err);

/* Replaces the upstream list from a comma- or space-separated string
 * ("" = none). Each must be an http:// or https:// URL. */
svc_errc svc_config_set_upstreams(svc_config *c, const char *list, svc_error *err);
/* A deep copy (every string and list); false when out of memory, dst then
 * holding what was copied (svc_config_deinit frees it). */
bool svc_config_copy(svc_config *dst, const svc_config *src);

/* Replaces the peer-tier list the same way. */
svc_errc svc_config_set_peer_servers(svc_config *c, const char *list, svc_error *err);

#endif
