/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_packages: the package archives under --package-dir as a debuginfo
 * source: the scanner that keeps the store's catalogue (storage/stor_catalog.h)
 * in step with the directories, and the source (source/src_source.h) that
 * answers from it.
 *
 * The scanner walks each directory (recursively, a mirror's pool) for .deb,
 * .ddeb and .rpm files; a package whose identity (size, mtime, inode) differs
 * from its catalogue record is scanned again (source/src_package.h), a
 * package gone from disk is dropped with its entries. A pass runs at start,
 * when inotify reports a change under a directory (after a short quiet time),
 * and every rescan_ms. A package that fails its scan is recorded as failed
 * (its error logged, symbolizer_package_errors_total{reason}) and not retried
 * until it changes; the rest of the catalogue is unaffected.
 *
 * The source's find() looks the build ID up in the catalogue, checks the
 * package is still the one scanned, extracts the member (xz blocks that
 * overlap it, or a stream) and checks it with src_check_file. It is the one
 * to put between the local debug dirs and the upstreams. While the catalogue
 * is not in step with the disk (the first pass, a package being scanned, a
 * change not yet scanned) a miss is SRC_PENDING, not SRC_NOT_FOUND, so that no
 * negative answer is remembered for a build ID a scan may still bring.
 */
#ifndef SVC_PACKAGES_H
#define SVC_PACKAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_buf.h"
#include "service/core/svc_config.h"
#include "service/core/svc_error.h"
#include "source/src_source.h"
#include "storage/stor_catalog.h"
#include "storage/stor_db.h"

typedef struct svc_packages_options {
	stor_db *store;
	char *const *dirs;
	size_t n_dirs;
	int64_t rescan_ms;       /* periodic pass; <= 0: none (inotify and start only) */
	bool watch;              /* inotify on the directories */
} svc_packages_options;

typedef struct svc_packages svc_packages;

svc_packages *svc_packages_create(const svc_packages_options *o, svc_error *err);

/* Starts the background scanner thread (a first pass at once). */
svc_errc svc_packages_start(svc_packages *p, svc_error *err);

/* One pass on the calling thread (symbolctl fetch, tests). */
void svc_packages_scan_now(svc_packages *p);

/* The source over the catalogue; owned by p, valid while p lives. */
src_source *svc_packages_source(svc_packages *p);

/* A source file read out of a package (svc_packages_find_source). */
typedef struct svc_package_file {
	void *data;              /* malloc'ed; size bytes */
	size_t size;
	char package[STOR_CAT_PATH_MAX];  /* the package it came from */
	int64_t mtime_ns;        /* the package's */
} svc_package_file;

/*
 * The source file at path (canonical and absolute, as a debuginfod client asks
 * for it: /usr/src/debug/...) that a package holds, for the build ID id: when
 * several packages hold it, the one nearest (by path) the package of the
 * build ID's debug file. SVC_OK with out->data; SVC_E_NOT_FOUND,
 * SVC_E_TOO_LARGE (over max_size), SVC_E_IO (the package changed since its
 * scan, or is unreadable). Whether id's debug info names path is the
 * caller's check. Any thread.
 */
svc_errc svc_packages_find_source(svc_packages *p, const sym_build_id *id, const char *path,
				  uint64_t max_size, svc_package_file *out, svc_error *err);

typedef struct svc_packages_stats {
	uint64_t passes;         /* directory passes done */
	uint64_t scanned;        /* packages scanned (new or changed) */
	uint64_t removed;        /* packages dropped (gone from disk) */
	uint64_t packages, failed, members;  /* in the catalogue after the last pass */
	uint64_t errors[16];     /* by src_pkg_reason */
	uint64_t extract_ok, extract_failed;
	double last_scan_seconds;
} svc_packages_stats;

void svc_packages_get_stats(svc_packages *p, svc_packages_stats *out);

/*
 * Counts the catalogue's additions (a package scanned with members): a
 * negative answer remembered at an older generation may be wrong now. The
 * store's negative records of the added build IDs are expired by the scanner
 * itself. NULL: 0. Any thread.
 */
uint64_t svc_packages_generation(const svc_packages *p);

/*
 * symbolizer_packages{state}, symbolizer_package_members,
 * symbolizer_package_scans_total, symbolizer_package_errors_total{reason},
 * symbolizer_package_extractions_total{result}. Any thread.
 */
void svc_packages_metrics_render(svc_packages *p, base_buf *out);

/* Stops the scanner (a scan in progress ends at its next member). NULL: no-op. */
void svc_packages_destroy(svc_packages *p);

/*
 * The package archives of c->package_dirs, made from the configuration for
 * the daemon and symbolctl alike (svc_packages_config.c); their source goes
 * into the fetcher's source list after the debug dirs (svc_fetcher_options
 * .sources). *out is NULL when no package dir is configured. watch: the
 * daemon's (inotify, a pass every c->package_rescan_ms, the scanner thread
 * started); otherwise one catalogue pass now, on this thread. False (err set,
 * *out NULL) when that fails.
 */
bool svc_packages_for_config(const svc_config *c, stor_db *store, bool watch,
			     svc_packages **out, svc_error *err);

#endif
