/*
 * svc_config: defaults, flag parsing and fallbacks of the store and source
 * settings (see svc_config.h).
 */
#include "service/core/svc_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	c->data_dir = NULL;
}

static bool list_add(char ***list, size_t *n, const char *s, size_t len)
{
	char **l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l)
		return false;
	*list = l;
	if (!(l[*n] = strndup(s, len)))
		return false;
	(*n)++;
	return true;
}

bool svc_parse_duration_ms(const char *s, int64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	double mult;
	if (!*end || !strcmp(end, "s"))
		mult = 1000;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "m"))
		mult = 60 * 1000;
	else if (!strcmp(end, "h"))
		mult = 3600 * 1000;
	else
		return false;
	double ms = v * mult;
	if (ms > 9e15)
		return false;
	*out = (int64_t)ms;
	return true;
}

bool svc_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return false;
	}
	if (*end) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return false;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static bool valid_url(const char *s, size_t len)
{
	return (len > 7 && !strncmp(s, "http://", 7)) || (len > 8 && !strncmp(s, "https://", 8));
}

sym_errc svc_config_set_upstreams(svc_config *c, const char *list, sym_error *err)
{
	free_list(&c->upstreams, &c->n_upstreams);
	c->upstreams_set_ = true;
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
		if (!valid_url(p, keep))
			return sym_error_set(err, SYM_E_INVALID, "upstream '%.*s': not an http(s) URL",
					     (int)(len > 200 ? 200 : len), p);
		if (!list_add(&c->upstreams, &c->n_upstreams, p, keep))
			return sym_error_set(err, SYM_E_NOMEM, "config: out of memory");
		p += len;
	}
	return SYM_OK;
}

enum kind { K_STRING, K_DIR, K_UPSTREAMS, K_DURATION, K_SIZE, K_INT };

struct flag {
	const char *name;
	enum kind kind;
	size_t offset;
};

#define F(name, kind, field) {name, kind, offsetof(svc_config, field)}
static const struct flag flags[] = {
	F("--data-dir", K_STRING, data_dir),
	F("--debug-dir", K_DIR, debug_dirs),
	F("--debuginfod-upstream-servers", K_UPSTREAMS, upstreams),
	F("--negative-cache-ttl", K_DURATION, negative_cache_ttl_ms),
	F("--error-cache-ttl", K_DURATION, error_cache_ttl_ms),
	F("--upstream-timeout", K_DURATION, upstream_timeout_ms),
	F("--upstream-min-progress", K_SIZE, upstream_min_progress),
	F("--max-debuginfo-size", K_SIZE, max_debuginfo_size),
	F("--max-store-bytes", K_SIZE, max_store_bytes),
	F("--max-concurrent-fetches", K_INT, max_concurrent_fetches),
	F("--max-fetches-per-upstream", K_INT, max_fetches_per_upstream),
	F("--upstream-retries", K_INT, upstream_retries),
	F("--upstream-retry-backoff", K_DURATION, upstream_retry_backoff_ms),
	F("--upstream-breaker-failures", K_INT, upstream_breaker_failures),
	F("--upstream-breaker-cooldown", K_DURATION, upstream_breaker_cooldown_ms),
	F("--fetch-workers", K_INT, fetch_workers),
};
#undef F

int svc_flag_value(int argc, char **argv, int *i, const char *name, const char **val,
		   sym_error *err)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
		return 0;
	if (arg[n] == '=') {
		*val = arg + n + 1;
	} else {
		if (*i + 1 >= argc) {
			sym_error_set(err, SYM_E_INVALID, "%s: missing value", name);
			return -1;
		}
		*val = argv[++*i];
	}
	(*i)++;
	return 1;
}

int svc_flag_size(const char *name, const char *val, uint64_t *out, sym_error *err)
{
	if (svc_parse_size(val, out))
		return 1;
	sym_error_set(err, SYM_E_INVALID, "%s: '%.100s' is not a size (e.g. 512M)", name, val);
	return -1;
}

int svc_flag_duration(const char *name, const char *val, int64_t *out, sym_error *err)
{
	if (svc_parse_duration_ms(val, out))
		return 1;
	sym_error_set(err, SYM_E_INVALID, "%s: '%.100s' is not a duration (e.g. 500ms, 30s, 10m)",
		      name, val);
	return -1;
}

int svc_flag_count(const char *name, const char *val, long max, long *out, sym_error *err)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < 0 || v > max) {
		sym_error_set(err, SYM_E_INVALID, "%s: '%.100s' is not a count (0 to %ld)", name,
			      val, max);
		return -1;
	}
	*out = v;
	return 1;
}

int svc_config_parse_arg(svc_config *c, int argc, char **argv, int *i, sym_error *err)
{
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		const char *val;
		int got = svc_flag_value(argc, argv, i, flags[f].name, &val, err);
		if (got <= 0) {
			if (got < 0)
				return -1;
			continue;
		}
		char *base = (char *)c + flags[f].offset;
		switch (flags[f].kind) {
		case K_STRING: {
			char **s = (char **)base;
			free(*s);
			if (!(*s = strdup(val))) {
				sym_error_set(err, SYM_E_NOMEM, "config: out of memory");
				return -1;
			}
			return 1;
		}
		case K_DIR:
			if (!c->debug_dirs_set_)
				free_list(&c->debug_dirs, &c->n_debug_dirs);
			c->debug_dirs_set_ = true;
			if (*val && !list_add(&c->debug_dirs, &c->n_debug_dirs, val, strlen(val))) {
				sym_error_set(err, SYM_E_NOMEM, "config: out of memory");
				return -1;
			}
			return 1;
		case K_UPSTREAMS:
			return svc_config_set_upstreams(c, val, err) == SYM_OK ? 1 : -1;
		case K_DURATION:
			return svc_flag_duration(flags[f].name, val, (int64_t *)base, err);
		case K_SIZE:
			return svc_flag_size(flags[f].name, val, (uint64_t *)base, err);
		case K_INT: {
			long v;
			if (svc_flag_count(flags[f].name, val, 100000, &v, err) < 0)
				return -1;
			*(int *)base = (int)v;
			return 1;
		}
		}
	}
	return 0;
}

sym_errc svc_config_finish(svc_config *c, const char *debuginfod_urls, sym_error *err)
{
	if (!c->data_dir && !(c->data_dir = strdup(SVC_DEFAULT_DATA_DIR)))
		return sym_error_set(err, SYM_E_NOMEM, "config: out of memory");
	if (!c->debug_dirs_set_ && c->n_debug_dirs == 0 &&
	    !list_add(&c->debug_dirs, &c->n_debug_dirs, SVC_DEFAULT_DEBUG_DIR,
		      strlen(SVC_DEFAULT_DEBUG_DIR)))
		return sym_error_set(err, SYM_E_NOMEM, "config: out of memory");
	c->debug_dirs_set_ = true;
	if (!c->upstreams_set_) {
		sym_errc rc;
		if (debuginfod_urls) {
			rc = svc_config_set_upstreams(c, debuginfod_urls, err);
			if (rc != SYM_OK) {
				sym_error_prefix(err, "DEBUGINFOD_URLS");
				return rc;
			}
		} else if ((rc = svc_config_set_upstreams(c, SVC_DEFAULT_UPSTREAM, err)) != SYM_OK) {
			return rc;
		}
	}
	if (c->max_concurrent_fetches < 1 || c->max_fetches_per_upstream < 1)
		return sym_error_set(err, SYM_E_INVALID, "config: concurrency limits must be at least 1");
	if (c->fetch_workers < 1)
		return sym_error_set(err, SYM_E_INVALID, "config: --fetch-workers must be at least 1");
	if (c->upstream_timeout_ms < 1)
		return sym_error_set(err, SYM_E_INVALID, "config: --upstream-timeout must be positive");
	if (c->max_debuginfo_size < 1)
		return sym_error_set(err, SYM_E_INVALID, "config: --max-debuginfo-size must be positive");
	return SYM_OK;
}

void svc_config_usage(FILE *out)
{
	fputs("store and sources:\n"
	      "  --data-dir DIR                  store directory (" SVC_DEFAULT_DATA_DIR ")\n"
	      "  --debug-dir DIR                 local debug dir (.build-id layout), repeatable;\n"
	      "                                  default " SVC_DEFAULT_DEBUG_DIR ", '--debug-dir=' for none\n"
	      "  --debuginfod-upstream-servers URL[,URL...]\n"
	      "                                  upstreams in order; default $DEBUGINFOD_URLS, else\n"
	      "                                  " SVC_DEFAULT_UPSTREAM "; '' for none\n"
	      "  --negative-cache-ttl DUR        remember 'not found' for DUR (10m)\n"
	      "  --error-cache-ttl DUR           remember upstream failures for DUR (30s)\n"
	      "  --upstream-timeout DUR          progress timeout of a download (90s)\n"
	      "  --upstream-min-progress SIZE    bytes each timeout window must bring (100K)\n"
	      "  --max-debuginfo-size SIZE       largest file accepted (2G)\n"
	      "  --max-store-bytes SIZE          store size bound, LRU eviction; 0 = none (16G)\n"
	      "  --max-concurrent-fetches N      downloads in flight in all (16)\n"
	      "  --max-fetches-per-upstream N    downloads in flight per server (4)\n"
	      "  --upstream-retries N            retries of a failing server per fetch (2)\n"
	      "  --upstream-retry-backoff DUR    first retry delay, doubling (250ms)\n"
	      "  --upstream-breaker-failures N   failures in a row that open a breaker (5)\n"
	      "  --upstream-breaker-cooldown DUR how long an open breaker skips a server (30s)\n"
	      "  --fetch-workers N               threads for local files and store writes (2)\n",
	      out);
}
