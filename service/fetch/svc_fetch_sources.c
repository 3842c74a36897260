// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_sources: the ordered source list of a fetcher, built once from
 * the configuration (svc_fetch_impl.h), for the daemon and symbolctl alike:
 *
 *   1. one local source per --debug-dir (DIR/.build-id/xx/rest.debug);
 *   2. the caller's sources (the package archives' catalogue source, which
 *      lives in service/resolve and is handed in);
 *   3. the shared S3 tier (--s3-endpoint, svc_provider_s3.c) when configured,
 *      the peer tier (--peer-servers), then the upstreams, in the order the
 *      operator gave them: each a provider of its URL's protocol, chosen from
 *      the provider table (svc_provider_table.c) by its scheme.
 *
 * The fetcher asks them in that order; the trace and the status page name
 * them in that order too.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdlib.h>
#include <string.h>

#include "service/core/svc_url_display.h"
#include "service/fetch/svc_s3.h"

static bool make_sources(svc_fetcher *f, const svc_fetcher_options *o, svc_error *err)
{
	size_t extra = o->sources ? o->n_sources : 0;
	f->sources = calloc(f->cfg.n_debug_dirs + extra + 1, sizeof(*f->sources));
	if (!f->sources)
		return svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory"), false;
	for (size_t i = 0; i < f->cfg.n_debug_dirs; i++) {
		sym_error serr = {0};
		if (!(f->sources[i] = src_local_create(f->cfg.debug_dirs[i], &serr)))
			return svc_error_set(err, SVC_E_NOMEM, "fetcher: debug dir %s: %s",
					     f->cfg.debug_dirs[i], serr.msg), false;
		f->n_owned = f->n_sources = i + 1;
	}
	for (size_t i = 0; i < extra; i++)
		f->sources[f->n_sources++] = o->sources[i];
	return true;
}

static bool make_upstreams(svc_fetcher *f, svc_error *err)
{
	/* The S3 tier (when configured) before the peer tier and the upstreams. */
	size_t n_s3 = f->s3 ? 1 : 0;
	size_t n_peers = f->cfg.n_peer_servers;
	size_t n = n_s3 + n_peers + f->cfg.n_upstreams;
	f->ups = calloc(n ? n : 1, sizeof(*f->ups));
	if (!f->ups)
		return svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory"), false;
	svc_provider_env env = {.http = f->http, .cfg = &f->cfg, .spool_dir = f->spool_dir,
				.s3 = f->s3};
	for (size_t i = 0; i < n; i++, f->n_ups++) {
		svc_upstream *u = &f->ups[i];
		u->peer = i >= n_s3 && i < n_s3 + n_peers;
		const char *url = i < n_s3 ? svc_s3_name(f->s3)
				  : u->peer ? f->cfg.peer_servers[i - n_s3]
					    : f->cfg.upstreams[i - n_s3 - n_peers];
		if (!(u->url = svc_url_display_dup(url)))
			return svc_error_set(err, SVC_E_NOMEM, "fetcher: out of memory"), false;
		u->st.url = u->url;
		if (!(u->prov = svc_provider_create(&env, url, u->url, u->peer, err))) {
			free(u->url);
			return false;
		}
	}
	return true;
}

bool svc_fetch_sources_build(svc_fetcher *f, const svc_fetcher_options *o, svc_error *err)
{
	return make_sources(f, o, err) && make_upstreams(f, err);
}

void svc_fetch_sources_free(svc_fetcher *f)
{
	for (size_t i = 0; i < f->n_owned; i++)
		src_destroy(f->sources[i]);
	free(f->sources);
	f->sources = NULL;
	f->n_sources = f->n_owned = 0;
	for (size_t i = 0; f->ups && i < f->n_ups; i++) {
		svc_provider_destroy(f->ups[i].prov);
		free(f->ups[i].url);
	}
	free(f->ups);
	f->ups = NULL;
	f->n_ups = 0;
}
