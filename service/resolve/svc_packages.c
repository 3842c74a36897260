// SPDX-License-Identifier: Apache-2.0
/*
 * svc_packages: the package source over the catalogue (find), the object's
 * life and its metrics (svc_packages.h). The scanner is svc_packages_scan.c.
 */
#include "service/resolve/svc_packages_impl.h"
#include "service/core/svc_build_id.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base_expo.h"
#include "base/base_log.h"
#include "source/src_package.h"
#include "storage/stor_catalog.h"

/* A package path that stays valid while p lives (src_file.origin). */
static const char *origin(svc_packages *p, const char *path)
{
	pthread_mutex_lock(&p->mu);
	const char *o = NULL;
	char **held = p->origins.data;
	for (size_t i = 0; i < p->origins.len && !o; i++)
		if (!strcmp(held[i], path))
			o = held[i];
	char *dup = o ? NULL : strdup(path);
	char **slot = dup ? base_vec_push(&p->origins) : NULL;
	if (slot)
		o = *slot = dup;
	else
		free(dup);
	pthread_mutex_unlock(&p->mu);
	return o ? o : "package";
}

/* Opens the entry's package, checks it is the one scanned, reads the member;
 * *mtime_ns (may be NULL): the package's. *changed: the failure is that the
 * package changed since its scan (a rescan follows: transient). */
static sym_errc extract(svc_packages *p, const stor_cat_entry *e, void **data, int64_t *mtime_ns,
			bool *changed, sym_error *err)
{
	*changed = false;
	stor_cat_package pkg;
	void *lb = NULL;
	size_t ll = 0;
	stor_error se;
	if (stor_cat_get_package(p->o.store, e->package, &pkg, &lb, &ll, &se) != STOR_OK)
		return sym_error_set(err, SYM_E_IO, "%.200s: %s", e->package, se.msg);
	if (mtime_ns)
		*mtime_ns = pkg.mtime_ns;
	src_pkg_layout l;
	sym_errc rc = src_pkg_layout_decode(lb, ll, &l, err);
	free(lb);
	if (rc)
		return rc;
	int fd = open(e->package, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != pkg.size ||
	    (uint64_t)st.st_ino != pkg.inode ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != pkg.mtime_ns) {
		*changed = true;
		rc = sym_error_set(err, SYM_E_IO, "%.200s: changed or gone since its scan; rescan pending",
				   e->package);
	} else {
		rc = src_package_extract(fd, &l, e->member, e->offset, e->size, data, err);
		if (rc)
			sym_error_prefix(err, "%.200s", e->package);
	}
	if (fd >= 0)
		close(fd);
	src_pkg_layout_free(&l);
	return rc;
}

static void count_extract(svc_packages *p, bool ok)
{
	pthread_mutex_lock(&p->mu);
	if (ok)
		p->st.extract_ok++;
	else
		p->st.extract_failed++;
	pthread_mutex_unlock(&p->mu);
}

/* One catalogue entry of (id, kind) tried: FOUND with a checked file. */
static src_status try_kind(svc_packages *p, const sym_build_id *id, stor_kind kind, src_kind want,
			   uint64_t max_size, src_file *out, sym_error *err)
{
	stor_cat_entry *e = malloc(sizeof(*e));
	stor_error se;
	if (!e || stor_cat_lookup(p->o.store, SVC_STORE_KEY(id), kind, e, &se) != STOR_OK) {
		free(e);
		return SRC_NOT_FOUND;
	}
	if (e->size > max_size) {
		sym_error_set(err, SYM_E_TOO_LARGE, "%.200s: %s is %llu bytes, over the cap",
			      e->package, e->member, (unsigned long long)e->size);
		free(e);
		return SRC_TOO_LARGE;
	}
	void *data = NULL;
	src_kind got = SRC_KIND_EXECUTABLE;
	sym_error cerr = {0};
	bool changed;
	sym_errc rc = extract(p, e, &data, NULL, &changed, &cerr);
	if (!rc && (src_check_file(data, (size_t)e->size, id, &got, &out->info, &cerr) != SYM_OK ||
		    (want == SRC_KIND_DEBUGINFO && got != SRC_KIND_DEBUGINFO))) {
		if (cerr.code == SYM_OK)
			sym_error_set(&cerr, SYM_E_BAD_ELF, "no debug info");
		rc = cerr.code;
	}
	count_extract(p, rc == SYM_OK);
	if (changed) {  /* its rescan decides */
		sym_error_set(err, rc, "%.300s", cerr.msg);
		free(e);
		return SRC_PENDING;
	}
	if (rc) {
		base_logf(BASE_LOG_WARN, "package member rejected", "package=%s member=%s error=\"%s\"",
			  e->package, e->member, cerr.msg);
		sym_error_set(err, cerr.code, "%.300s", cerr.msg);
		free(data);
		free(e);
		return SRC_NOT_FOUND;
	}
	out->data = data;
	out->size = (size_t)e->size;
	out->kind = got;
	out->origin = origin(p, e->package);
	free(e);
	return SRC_FOUND;
}

static src_status pkg_find(src_source *s, const sym_build_id *id, src_kind want,
			   uint64_t max_size, src_file *out, sym_error *err)
{
	svc_packages *p = ((svc_packages_src *)s)->p;
	stor_kind first = want == SRC_KIND_DEBUGINFO ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
	stor_kind second = first == STOR_KIND_DEBUGINFO ? STOR_KIND_EXECUTABLE : STOR_KIND_DEBUGINFO;
	src_status st = try_kind(p, id, first, want, max_size, out, err);
	if (st == SRC_NOT_FOUND)
		st = try_kind(p, id, second, want, max_size, out, err);
	if (st == SRC_NOT_FOUND && !atomic_load(&p->settled)) {
		sym_error_set(err, SYM_E_IO, "package catalogue scan in progress");
		st = SRC_PENDING;
	}
	return st;
}

svc_errc svc_packages_find_source(svc_packages *p, const sym_build_id *id, const char *path,
				  uint64_t max_size, svc_package_file *out, svc_error *err)
{
	memset(out, 0, sizeof(*out));
	stor_cat_entry *e = malloc(sizeof(*e));
	stor_error se;
	if (!e)
		return svc_error_set(err, SVC_E_NOMEM, "out of memory");
	/* near the package of the build ID's debug file (or executable) */
	const char *near = NULL;
	if (stor_cat_lookup(p->o.store, SVC_STORE_KEY(id), STOR_KIND_DEBUGINFO, e, &se) == STOR_OK ||
	    stor_cat_lookup(p->o.store, SVC_STORE_KEY(id), STOR_KIND_EXECUTABLE, e, &se) == STOR_OK)
		near = strcpy(out->package, e->package);
	while (*path == '/')
		path++;
	svc_errc rc;
	if (stor_cat_find_source(p->o.store, path, near, e, &se) != STOR_OK) {
		rc = svc_error_set(err, SVC_E_NOT_FOUND, "no package holds /%.200s", path);
	} else if (e->size > max_size) {
		rc = svc_error_set(err, SVC_E_TOO_LARGE, "%.200s: %.200s is %llu bytes, over the cap",
				   e->package, e->member, (unsigned long long)e->size);
	} else {
		sym_error xerr = {0};
		bool changed;
		sym_errc xrc = extract(p, e, &out->data, &out->mtime_ns, &changed, &xerr);
		count_extract(p, xrc == SYM_OK);
		out->size = (size_t)e->size;
		rc = xrc ? svc_error_set(err, SVC_E_IO, "%.300s", xerr.msg) : SVC_OK;
		if (xrc)
			base_logf(BASE_LOG_WARN, "package source unreadable",
				  "package=%s member=%s error=\"%s\"", e->package, e->member, xerr.msg);
	}
	snprintf(out->package, sizeof(out->package), "%s", e->package);
	free(e);
	return rc;
}

static void pkg_destroy(src_source *s)
{
	(void)s; /* owned by its svc_packages */
}

static const src_ops pkg_ops = {
	.name = "package",
	.find = pkg_find,
	.scan = NULL,
	.destroy = pkg_destroy,
};

svc_packages *svc_packages_create(const svc_packages_options *o, svc_error *err)
{
	svc_packages *p = calloc(1, sizeof(*p));
	if (!p || !(p->dirs = calloc(o->n_dirs + 1, sizeof(char *)))) {
		free(p);
		svc_error_set(err, SVC_E_NOMEM, "packages: out of memory");
		return NULL;
	}
	p->o = *o;
	base_vec_init(&p->origins, sizeof(char *), SIZE_MAX / sizeof(char *));
	p->wake[0] = p->wake[1] = p->inotify = -1;
	pthread_mutex_init(&p->mu, NULL);
	for (size_t i = 0; i < o->n_dirs; i++) {
		if (!(p->dirs[i] = strdup(o->dirs[i]))) {
			svc_packages_destroy(p);
			svc_error_set(err, SVC_E_NOMEM, "packages: out of memory");
			return NULL;
		}
	}
	p->o.dirs = p->dirs;
	p->src.base.ops = &pkg_ops;
	p->src.p = p;
	return p;
}

svc_errc svc_packages_start(svc_packages *p, svc_error *err)
{
	if (pipe2(p->wake, O_CLOEXEC) != 0 || pthread_create(&p->thread, NULL, svc_packages_run, p))
		return svc_error_set(err, SVC_E_IO, "packages: cannot start the scanner");
	p->running = true;
	return SVC_OK;
}

uint64_t svc_packages_generation(const svc_packages *p)
{
	return p ? atomic_load(&p->generation) : 0;
}

src_source *svc_packages_source(svc_packages *p)
{
	return &p->src.base;
}

void svc_packages_get_stats(svc_packages *p, svc_packages_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void svc_packages_metrics_render(svc_packages *p, base_buf *b)
{
	svc_packages_stats s;
	svc_packages_get_stats(p, &s);
	base_expo_family(b, "symbolizer_packages", "gauge",
			 "Package archives in the catalogue, by scan state");
	base_expo_u64(b, "symbolizer_packages", "state=\"ok\"", s.packages - s.failed);
	base_expo_u64(b, "symbolizer_packages", "state=\"failed\"", s.failed);
	base_expo_family(b, "symbolizer_package_members", "gauge",
			 "Members with a build ID in the catalogue");
	base_expo_u64(b, "symbolizer_package_members", NULL, s.members);
	base_expo_family(b, "symbolizer_package_scans_total", "counter",
			 "Packages scanned (new or changed)");
	base_expo_u64(b, "symbolizer_package_scans_total", NULL, s.scanned);
	base_expo_family(b, "symbolizer_package_errors_total", "counter",
			 "Package scans that failed, by reason");
	for (int r = 1; r < SRC_PKG_E_COUNT; r++) {
		char l[64];
		snprintf(l, sizeof(l), "reason=\"%s\"", src_pkg_reason_name((src_pkg_reason)r));
		base_expo_u64(b, "symbolizer_package_errors_total", l, s.errors[r]);
	}
	base_expo_family(b, "symbolizer_package_extractions_total", "counter",
			 "Members read from packages, by result");
	base_expo_u64(b, "symbolizer_package_extractions_total", "result=\"ok\"", s.extract_ok);
	base_expo_u64(b, "symbolizer_package_extractions_total", "result=\"failed\"",
		      s.extract_failed);
}

void svc_packages_destroy(svc_packages *p)
{
	if (!p)
		return;
	p->stopping = true;
	if (p->running) {
		ssize_t w = write(p->wake[1], "x", 1);
		(void)w;
		pthread_join(p->thread, NULL);
	}
	for (int i = 0; i < 2; i++)
		if (p->wake[i] >= 0)
			close(p->wake[i]);
	for (size_t i = 0; i < p->o.n_dirs && p->dirs; i++)
		free(p->dirs[i]);
	free(p->dirs);
	for (size_t i = 0; i < p->origins.len; i++)
		free(((char **)p->origins.data)[i]);
	base_vec_deinit(&p->origins);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
