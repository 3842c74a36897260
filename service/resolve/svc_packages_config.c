// SPDX-License-Identifier: Apache-2.0
/*
 * svc_packages_config: the package archives from the configuration
 * (svc_packages.h, svc_packages_for_config), one function for the daemon
 * (watched, rescanned, scanned on its own thread) and symbolctl fetch (one
 * pass now). The fetcher puts their source after the debug dirs in its
 * source list (service/fetch/svc_fetch_sources.c).
 */
#include "service/resolve/svc_packages.h"

bool svc_packages_for_config(const svc_config *c, stor_db *store, bool watch,
			     svc_packages **out, svc_error *err)
{
	*out = NULL;
	if (c->n_package_dirs == 0)
		return true;
	svc_packages_options po = {
		.store = store, .dirs = c->package_dirs, .n_dirs = c->n_package_dirs,
		.rescan_ms = watch ? c->package_rescan_ms : 0, .watch = watch,
	};
	svc_packages *p = svc_packages_create(&po, err);
	if (!p)
		return false;
	if (!watch) {
		svc_packages_scan_now(p);
	} else if (svc_packages_start(p, err) != SVC_OK) {
		svc_packages_destroy(p);
		return false;
	}
	*out = p;
	return true;
}
