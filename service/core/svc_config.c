// SPDX-License-Identifier: Apache-2.0
/*
 * svc_config: defaults, flag parsing and fallbacks of the store and source
 * settings (see svc_config.h).
 */
#include "service/core/svc_config.h"

#include "base/base_vec.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/core/svc_url_display.h"

void svc_config_init(svc_config *c)
{
	memset(c, 0, sizeof(*c));
	c->negative_cache_ttl_ms = 10 * 60 * 1000;
	c->error_cache_ttl_ms = 30 * 1000;
	c->upstream_timeout_ms = 90 * 1000;
	c->upstream_min_progress = 100 * 1024;
	c->max_debuginfo_size = 2ull << 30;
	c->max_store_bytes = 16ull << 30;
	c->max_concurrent_fetches = 16;
	c->max_fetches_per_upstream = 4;
	c->upstream_retries = 2;
	c->upstream_retry_backoff_ms = 250;
	c->upstream_breaker_failures = 5;
	c->upstream_breaker_cooldown_ms = 30 * 1000;
	c->fetch_workers = 2;
	c->upstream_redirects = SVC_REDIRECTS_SAME_HOST;
	c->upstream_busy_defer_ms = 1000;
	c->package_rescan_ms = 5 * 60 * 1000;
	svc_s3_settings_init(&c->s3);
}

static void free_list(char ***list, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		free((*list)[i]);
	free(*list);
	*list = NULL;
	*n = 0;
}

void svc_config_deinit(svc_config *c)
{
	if (!c)
		return;
	free(c->data_dir);
	free_list(&c->debug_dirs, &c->n_debug_dirs);
	free_list(&c->upstreams, &c->n_upstreams);
	free_list(&c->peer_servers, &c->n_peer_servers);
	free_list(&c->package_dirs, &c->n_package_dirs);
	c->data_dir = NULL;
}

/* *dst = a copy of src[0..n) (n kept only once whole). */
static bool list_copy(char ***dst, size_t *dst_n, char *const *src, size_t n)
{
	*dst = calloc(n + 1, sizeof(char *));
	*dst_n = 0;
	if (!*dst)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!((*dst)[i] = strdup(src[i])))
			return false;
		(*dst_n)++;
	}
	return true;
}

bool svc_config_copy(svc_config *dst, const svc_config *src)
{
	*dst = *src;
	dst->debug_dirs = dst->upstreams = dst->peer_servers = dst->package_dirs = NULL;
	dst->n_debug_dirs = dst->n_upstreams = dst->n_peer_servers = dst->n_package_dirs = 0;
	dst->data_dir = src->data_dir ? strdup(src->data_dir) : NULL;
	return (dst->data_dir || !src->data_dir) &&
	       list_copy(&dst->debug_dirs, &dst->n_debug_dirs, src->debug_dirs, src->n_debug_dirs) &&
	       list_copy(&dst->upstreams, &dst->n_upstreams, src->upstreams, src->n_upstreams) &&
	       list_copy(&dst->peer_servers, &dst->n_peer_servers, src->peer_servers,
			 src->n_peer_servers) &&
	       list_copy(&dst->package_dirs, &dst->n_package_dirs, src->package_dirs,
			 src->n_package_dirs);
}

static bool list_add(char ***list, size_t *n, const char *s, size_t len)
{
	/* The list is a (pointer, count) pair of svc_config: grown as a base_vec. */
	base_vec v = base_vec_adopt(*list, *n, *n, sizeof(char *), SIZE_MAX / sizeof(char *));
	char **slot = base_vec_push(&v);
	*list = v.data;
	if (!slot)
		return false;
	if (!(*slot = strndup(s, len)))
		return false;
	(*n)++;
	return true;
}

static bool valid_url(const char *s, size_t len)
{
	return (len > 7 && !strncmp(s, "http://", 7)) || (len > 8 && !strncmp(s, "https://", 8));
}

/* Replaces *urls with the http(s) URLs of a comma- or space-separated list. */
static svc_errc set_url_list(char ***urls, size_t *n, const char *what, const char *list,
			     svc_error *err)
{
	free_list(urls, n);
	const char *p = list;
	while (*p) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		size_t len = strcspn(p, ", \t\n");
		size_t keep = len;
		while (keep > 0 && p[keep - 1] == '/')
			keep--;
		if (!valid_url(p, keep)) {
			char shown[208];
			snprintf(shown, sizeof(shown), "%.*s", (int)(len > 200 ? 200 : len), p);
			char safe[216];
			return svc_error_set(err, SVC_E_INVALID, "%s '%s': not an http(s) URL", what,
					     svc_url_display(shown, safe, sizeof(safe)));
		}
		if (!list_add(urls, n, p, keep))
			return svc_error_set(err, SVC_E_NOMEM, "config: out of memory");
		p += len;
	}
	return SVC_OK;
}

svc_errc svc_config_set_upstreams(svc_config *c, const char *list, svc_error *err)
{
	c->upstreams_set_ = true;
	return set_url_list(&c->upstreams, &c->n_upstreams, "upstream", list, err);
}

svc_errc svc_config_set_peer_servers(svc_config *c, const char *list, svc_error *err)
{
	return set_url_list(&c->peer_servers, &c->n_peer_servers, "peer server", list, err);
}

static bool set_data_dir(void *obj, const char *val, char *err, size_t err_size)
{
	svc_config *c = obj;
	char *dup = strdup(val);
	if (!dup) {
		snprintf(err, err_size, "out of memory");
		return false;
	}
	free(c->data_dir);
	c->data_dir = dup;
	return true;
}

static bool add_debug_dir(void *obj, const char *val, char *err, size_t err_size)
{
	svc_config *c = obj;
	if (!c->debug_dirs_set_)
		free_list(&c->debug_dirs, &c->n_debug_dirs);
	c->debug_dirs_set_ = true;
	if (*val && !list_add(&c->debug_dirs, &c->n_debug_dirs, val, strlen(val))) {
		snprintf(err, err_size, "out of memory");
		return false;
	}
	return true;
}

static bool add_package_dir(void *obj, const char *val, char *err, size_t err_size)
{
	svc_config *c = obj;
	if (*val && !list_add(&c->package_dirs, &c->n_package_dirs, val, strlen(val))) {
		snprintf(err, err_size, "out of memory");
		return false;
	}
	return true;
}

static bool set_upstreams(void *obj, const char *val, char *err, size_t err_size)
{
	svc_error e;
	if (svc_config_set_upstreams(obj, val, &e) == SVC_OK)
		return true;
	snprintf(err, err_size, "%s", e.msg);
	return false;
}

static bool set_peer_servers(void *obj, const char *val, char *err, size_t err_size)
{
	svc_error e;
	if (svc_config_set_peer_servers(obj, val, &e) == SVC_OK)
		return true;
	snprintf(err, err_size, "%s", e.msg);
	return false;
}

static bool set_netrc(void *obj, const char *val, char *err, size_t err_size)
{
	svc_config *c = obj;
	if (strlen(val) >= sizeof(c->upstream_netrc)) {
		snprintf(err, err_size, "path too long");
		return false;
	}
	snprintf(c->upstream_netrc, sizeof(c->upstream_netrc), "%s", val);
	return true;
}

static bool set_redirects(void *obj, const char *val, char *err, size_t err_size)
{
	svc_config *c = obj;
	if (!strcmp(val, "same-host"))
		c->upstream_redirects = SVC_REDIRECTS_SAME_HOST;
	else if (!strcmp(val, "any"))
		c->upstream_redirects = SVC_REDIRECTS_ANY;
	else if (!strcmp(val, "none"))
		c->upstream_redirects = SVC_REDIRECTS_NONE;
	else {
		snprintf(err, err_size, "'%s': want same-host, any or none", val);
		return false;
	}
	return true;
}

#define F(name, meta, kind, field, max, help) \
	{name, meta, kind, offsetof(svc_config, field), max, NULL, help}
#define C(name, meta, fn, help) {name, meta, BASE_FLAG_CUSTOM, 0, 0, fn, help}
static const base_flag flags[] = {
	C("--data-dir", "DIR", set_data_dir, "store directory (" SVC_DEFAULT_DATA_DIR_TEXT ")"),
	C("--debug-dir", "DIR", add_debug_dir,
	  "local debug dir (.build-id layout), repeatable;\n"
	  "default " SVC_DEFAULT_DEBUG_DIR ", '--debug-dir=' for none"),
	C("--debuginfod-upstream-servers", "URL[,URL...]", set_upstreams,
	  "upstreams in order; default $DEBUGINFOD_URLS, else\n" SVC_DEFAULT_UPSTREAM
	  "; '' for none"),
	C("--peer-servers", "URL[,URL...]", set_peer_servers,
	  "peer tier asked before the upstreams: the nginx\n"
	  "front of a replica set; none by default"),
	F("--negative-cache-ttl", "DUR", BASE_FLAG_DURATION, negative_cache_ttl_ms, 0,
	  "remember 'not found' for DUR (10m)"),
	F("--error-cache-ttl", "DUR", BASE_FLAG_DURATION, error_cache_ttl_ms, 0,
	  "remember upstream failures for DUR (30s)"),
	F("--upstream-timeout", "DUR", BASE_FLAG_DURATION, upstream_timeout_ms, 0,
	  "deadline of all attempts on one server, and\n"
	  "progress window of a download (90s)"),
	F("--upstream-min-progress", "SIZE", BASE_FLAG_SIZE, upstream_min_progress, 0,
	  "bytes each timeout window must bring (100K)"),
	F("--max-debuginfo-size", "SIZE", BASE_FLAG_SIZE, max_debuginfo_size, 0,
	  "largest file accepted (2G)"),
	F("--max-store-bytes", "SIZE", BASE_FLAG_SIZE, max_store_bytes, 0,
	  "store size bound, LRU eviction; 0 = none (16G)"),
	F("--max-concurrent-fetches", "N", BASE_FLAG_INT, max_concurrent_fetches, 100000,
	  "downloads in flight in all (16)"),
	F("--max-fetches-per-upstream", "N", BASE_FLAG_INT, max_fetches_per_upstream, 100000,
	  "downloads in flight per server (4)"),
	F("--upstream-retries", "N", BASE_FLAG_INT, upstream_retries, 100000,
	  "retries of a failing server per fetch (2)"),
	F("--upstream-retry-backoff", "DUR", BASE_FLAG_DURATION, upstream_retry_backoff_ms, 0,
	  "first retry delay, doubling (250ms)"),
	F("--upstream-breaker-failures", "N", BASE_FLAG_INT, upstream_breaker_failures, 100000,
	  "failures in a row that open a breaker (5)"),
	F("--upstream-breaker-cooldown", "DUR", BASE_FLAG_DURATION, upstream_breaker_cooldown_ms,
	  0, "how long an open breaker skips a server (30s)"),
	C("--upstream-netrc", "FILE", set_netrc,
	  "netrc file with upstream credentials; '' = none"),
	C("--upstream-redirects", "same-host|any|none", set_redirects,
	  "redirects followed (same-host: same host and port)"),
	F("--upstream-busy-defer", "DUR", BASE_FLAG_DURATION, upstream_busy_defer_ms, 0,
	  "all slots of a server busy this long: ask the\nnext one first (1s)"),
	F("--fetch-workers", "N", BASE_FLAG_INT, fetch_workers, 100000,
	  "threads for local files and store writes (2)"),
	C("--package-dir", "DIR", add_package_dir,
	  "directory of .deb/.ddeb/.rpm packages, repeatable;\n"
	  "asked after the debug dirs, before the upstreams"),
	F("--package-rescan", "DUR", BASE_FLAG_DURATION, package_rescan_ms, 0,
	  "periodic rescan of the package dirs (5m; 0 = none)"),
};
#undef F
#undef C

base_flag_group svc_config_flags(svc_config *c)
{
	return (base_flag_group){"Store and source flags", flags, sizeof(flags) / sizeof(flags[0]),
				 c};
}

/* path made absolute against the working directory into out; false when it
 * does not fit or the working directory is unknown. */
static bool absolute(const char *path, char *out, size_t cap)
{
	if (path[0] == '/')
		return (size_t)snprintf(out, cap, "%s", path) < cap;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return false;
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	return (size_t)snprintf(out, cap, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < cap;
}

bool svc_config_default_data_dir(char *out, size_t cap)
{
	const char *state = getenv("STATE_DIRECTORY"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char dir[PATH_MAX];
	if (state && state[0] == '/') {  /* "a:b" when the unit names several */
		size_t n = strcspn(state, ":");
		if (n >= sizeof(dir))
			return false;
		memcpy(dir, state, n);
		dir[n] = '\0';
	} else if (xdg && xdg[0] == '/') {
		if ((size_t)snprintf(dir, sizeof(dir), "%s/symbolizer", xdg) >= sizeof(dir))
			return false;
	} else if (home && home[0] == '/') {
		if ((size_t)snprintf(dir, sizeof(dir), "%s/.local/state/symbolizer", home) >=
		    sizeof(dir))
			return false;
	} else {
		snprintf(dir, sizeof(dir), "%s", SVC_FALLBACK_DATA_DIR);
	}
	return absolute(dir, out, cap);
}

svc_errc svc_config_finish(svc_config *c, const char *debuginfod_urls, svc_error *err)
{
	char dir[PATH_MAX];
	if (c->data_dir ? !absolute(c->data_dir, dir, sizeof(dir))
			: !svc_config_default_data_dir(dir, sizeof(dir)))
		return svc_error_set(err, SVC_E_INVALID, "--data-dir: cannot make %s absolute",
				     c->data_dir ? c->data_dir : "the default store directory");
	free(c->data_dir);
	if (!(c->data_dir = strdup(dir)))
		return svc_error_set(err, SVC_E_NOMEM, "config: out of memory");
	if (!c->debug_dirs_set_ && c->n_debug_dirs == 0 &&
	    !list_add(&c->debug_dirs, &c->n_debug_dirs, SVC_DEFAULT_DEBUG_DIR,
		      strlen(SVC_DEFAULT_DEBUG_DIR)))
		return svc_error_set(err, SVC_E_NOMEM, "config: out of memory");
	c->debug_dirs_set_ = true;
	if (!c->upstreams_set_) {
		svc_errc rc;
		if (debuginfod_urls) {
			rc = svc_config_set_upstreams(c, debuginfod_urls, err);
			if (rc != SVC_OK) {
				svc_error_prefix(err, "DEBUGINFOD_URLS");
				return rc;
			}
		} else if ((rc = svc_config_set_upstreams(c, SVC_DEFAULT_UPSTREAM, err)) != SVC_OK) {
			return rc;
		}
	}
	if (c->max_concurrent_fetches < 1 || c->max_fetches_per_upstream < 1)
		return svc_error_set(err, SVC_E_INVALID, "config: concurrency limits must be at least 1");
	if (c->fetch_workers < 1)
		return svc_error_set(err, SVC_E_INVALID, "config: --fetch-workers must be at least 1");
	if (c->upstream_timeout_ms < 1)
		return svc_error_set(err, SVC_E_INVALID, "config: --upstream-timeout must be positive");
	if (c->max_debuginfo_size < 1)
		return svc_error_set(err, SVC_E_INVALID, "config: --max-debuginfo-size must be positive");
	return svc_s3_settings_check(&c->s3, err);
}
