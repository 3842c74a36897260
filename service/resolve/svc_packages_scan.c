// SPDX-License-Identifier: Apache-2.0
/*
 * svc_packages_scan: the package scanner (svc_packages.h): directory passes
 * that bring the catalogue in step with the disk, on its own thread, woken by
 * inotify and a periodic timer.
 */
#include "service/resolve/svc_packages_impl.h"
#include "service/core/svc_build_id.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "base/base_log.h"
#include "base/base_vec.h"
#include "source/src_package.h"
#include "source/src_package_format.h"
#include "storage/stor_alias.h"
#include "storage/stor_catalog.h"

#define MAX_DEPTH 8
#define QUIET_MS 300

typedef struct pass {
	svc_packages *p;
	base_vec seen;           /* char *: package paths on disk */
	base_vec entries;        /* stor_cat_entry: of the package being scanned */
	base_vec sources;        /* stor_cat_source: of the package being scanned */
	const char *path;        /* the package being scanned */
} pass;

/* A source member: kept (its path copied) for the catalogue. */
static bool on_source(pass *ps, const src_pkg_member *m)
{
	char *member = strlen(m->path) < STOR_CAT_PATH_MAX ? strdup(m->path) : NULL;
	stor_cat_source *sc = member ? base_vec_push(&ps->sources) : NULL;
	if (!sc) {
		free(member);
		return member == NULL && !ps->p->stopping;  /* too long a path: skipped */
	}
	*sc = (stor_cat_source){member, m->offset, m->size};
	return !ps->p->stopping;
}

static void drop_sources(pass *ps)
{
	for (size_t i = 0; i < ps->sources.len; i++)
		free((char *)((stor_cat_source *)ps->sources.data)[i].member);
	ps->sources.len = 0;
}

static bool on_member(void *arg, const src_pkg_member *m)
{
	pass *ps = arg;
	if (m->source)
		return on_source(ps, m);
	stor_cat_entry *e = base_vec_push(&ps->entries);
	if (!e)
		return false;
	memset(e, 0, sizeof(*e));
	svc_store_key key = svc_store_key_of(&m->id);  /* the catalogue's key of it */
	memcpy(e->id, key.bytes, key.len);
	e->id_len = (uint8_t)key.len;
	e->kind = m->kind == SRC_KIND_DEBUGINFO ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
	e->offset = m->offset;
	e->size = m->size;
	snprintf(e->member, sizeof(e->member), "%s", m->path);
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&m->id, hex);
	base_logf(BASE_LOG_DEBUG, "package member", "package=%s build_id=%s kind=%s member=%s",
		  ps->path, hex, src_kind_name(m->kind), m->path);
	/* An executable's other identities (Go build ID, file hash) find it too. */
	for (unsigned i = 0; i < m->n_aliases && i < 2; i++) {
		svc_store_key ak = svc_store_key_of(&m->aliases[i]);
		stor_error se;
		if (stor_put_alias(ps->p->o.store, ak.bytes, ak.len, key.bytes, key.len, &se) !=
		    STOR_OK)
			base_logf(BASE_LOG_WARN, "package member alias not written",
				  "package=%s member=%s error=\"%s\"", ps->path, m->path, se.msg);
	}
	return !ps->p->stopping;
}

/*
 * The catalogue now holds the pass's entries: a negative answer the store
 * remembers for one of them (a miss before this scan) is expired, so the
 * next call looks again and finds it here. A PRESENT record is left as it
 * is, but one holding only the executable looks for debug info again.
 */
static void expire_negatives(pass *ps)
{
	svc_packages *p = ps->p;
	const stor_cat_entry *es = ps->entries.data;
	for (size_t i = 0; i < ps->entries.len; i++) {
		stor_meta m;
		stor_error se;
		if (stor_get_meta(p->o.store, es[i].id, es[i].id_len, &m, &se) != STOR_OK ||
		    (m.state == STOR_STATE_PRESENT && m.kind == STOR_KIND_DEBUGINFO) ||
		    m.neg_expiry <= base_real_ms())
			continue;
		stor_state st = m.state == STOR_STATE_PRESENT ? STOR_STATE_NOT_FOUND : m.state;
		if (stor_put_negative(p->o.store, es[i].id, es[i].id_len, st, m.source,
				      "a package scan added it since", 0, &se) != STOR_OK)
			base_logf(BASE_LOG_WARN, "negative record not expired", "package=%s error=\"%s\"",
				  ps->path, se.msg);
	}
	if (ps->entries.len)
		atomic_fetch_add(&p->generation, 1);
}

/* Corrupt xz blocks the scan went past (src_package.h): the members that
 * overlap one are dropped (their bytes cannot be read back: asked for, they
 * are NOT_FOUND, not a wrong file), each logged, and the package's record
 * says why. */
static void drop_lost(pass *ps, const src_pkg_scan_stats *ss, stor_cat_package *pkg)
{
	stor_cat_entry *es = ps->entries.data;
	size_t kept = 0;
	for (size_t i = 0; i < ps->entries.len; i++) {
		if (!src_pkg_scan_lost(ss, es[i].offset, es[i].size)) {
			es[kept++] = es[i];
			continue;
		}
		base_logf(BASE_LOG_WARN, "package member lost",
			  "package=%s member=%s reason=\"overlaps a corrupt xz block\"", ps->path,
			  es[i].member);
	}
	ps->entries.len = kept;
	stor_cat_source *sc = ps->sources.data;
	kept = 0;
	for (size_t i = 0; i < ps->sources.len; i++) {
		if (src_pkg_scan_lost(ss, sc[i].offset, sc[i].size))
			free((char *)sc[i].member);
		else
			sc[kept++] = sc[i];
	}
	ps->sources.len = kept;
	snprintf(pkg->error, sizeof(pkg->error), "damaged: %.200s", ss->damage);
	base_logf(BASE_LOG_WARN, "package damaged",
		  "package=%s lost_ranges=%zu error=\"%s\" effect=\"the members overlapping them are "
		  "not served; the others are\"", ps->path, ss->n_lost, ss->damage);
}

/* Scans one new or changed package and writes its catalogue record. */
static void scan_package(pass *ps, const char *path, int fd, const struct stat *st)
{
	svc_packages *p = ps->p;
	atomic_store(&p->settled, false);  /* until the pass ends */
	src_pkg_limits lim;
	src_pkg_limits_init(&lim);
	src_pkg_layout l;
	src_pkg_scan_stats ss;
	src_pkg_reason reason;
	sym_error err = {0};
	ps->entries.len = 0;
	drop_sources(ps);
	ps->path = path;
	int64_t t0 = base_mono_ns();
	sym_errc rc = src_package_scan(fd, path, &lim, &l, on_member, ps, &ss, &reason, &err);
	stor_cat_package pkg;
	memset(&pkg, 0, sizeof(pkg));
	pkg.size = (uint64_t)st->st_size;
	pkg.inode = (uint64_t)st->st_ino;
	pkg.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	if (p->stopping) {
		src_pkg_layout_free(&l);
		drop_sources(ps);
		return;
	}
	if (rc) {
		pkg.failed = true;
		snprintf(pkg.error, sizeof(pkg.error), "%s: %.200s", src_pkg_reason_name(reason), err.msg);
		ps->entries.len = 0;
		drop_sources(ps);
		base_logf(BASE_LOG_WARN, "package scan failed", "package=%s reason=%s error=\"%s\"", path,
			  src_pkg_reason_name(reason), err.msg);
	}
	if (!rc && ss.n_lost)
		drop_lost(ps, &ss, &pkg);
	pkg.members = (uint32_t)ps->entries.len;
	size_t ll = 0;
	void *lb = rc ? NULL : src_pkg_layout_encode(&l, &ll);
	stor_error se;
	if (stor_cat_put_package(p->o.store, path, &pkg, lb, ll, ps->entries.data, ps->entries.len,
				 ps->sources.data, ps->sources.len, &se) != STOR_OK)
		base_logf(BASE_LOG_ERROR, "catalogue write failed", "package=%s error=\"%s\"", path,
			  se.msg);
	else
		expire_negatives(ps);
	free(lb);
	src_pkg_layout_free(&l);
	size_t n_sources = ps->sources.len;  /* for the log line: counted before they go */
	drop_sources(ps);
	double secs = base_seconds_since(t0);
	if (!rc)
		base_logf(BASE_LOG_INFO, "package scanned",
			  "package=%s members=%zu sources=%zu entries=%llu probed=%llu blocks=%llu "
			  "seconds=%.2f", path, ps->entries.len, n_sources,
			  (unsigned long long)ss.entries,
			  (unsigned long long)ss.probed, (unsigned long long)ss.blocks_decoded, secs);
	pthread_mutex_lock(&p->mu);
	p->st.scanned++;
	p->st.last_scan_seconds = secs;
	if (rc && (unsigned)reason < 16)
		p->st.errors[reason]++;
	pthread_mutex_unlock(&p->mu);
}

/* One package file on disk: scanned when its identity changed. */
static void visit_file(pass *ps, const char *path)
{
	char *dup = strdup(path);
	char **slot = dup ? base_vec_push(&ps->seen) : NULL;
	if (!slot) {
		free(dup);
		return;
	}
	*slot = dup;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	stor_cat_package old;
	stor_error se;
	if (stor_cat_get_package(ps->p->o.store, path, &old, NULL, NULL, &se) != STOR_OK ||
	    old.size != (uint64_t)st.st_size || old.inode != (uint64_t)st.st_ino ||
	    old.mtime_ns != (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)
		scan_package(ps, path, fd, &st);
	close(fd);
}

static void walk(pass *ps, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	if (ps->p->inotify >= 0)
		inotify_add_watch(ps->p->inotify, dir,
				  IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE);
	struct dirent *de;
	char path[PATH_MAX];
	while ((de = readdir(d)) && !ps->p->stopping) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		struct stat st;
		if (stat(path, &st) != 0) /* a link to a package is followed, to a directory not */
			continue;
		if (S_ISDIR(st.st_mode) && de->d_type != DT_LNK && depth < MAX_DEPTH)
			walk(ps, path, depth + 1);
		else if (S_ISREG(st.st_mode) && src_pkg_format_for_path(de->d_name))
			visit_file(ps, path);
	}
	closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct prune {
	pass *ps;
	base_vec gone;           /* char * */
	uint64_t packages, failed, members;
} prune;

/* Catalogue packages under our dirs but not seen on disk are gone. */
static bool prune_one(void *arg, const char *path, const stor_cat_package *pkg)
{
	prune *pr = arg;
	pass *ps = pr->ps;
	bool ours = false;
	for (size_t i = 0; i < ps->p->o.n_dirs && !ours; i++) {
		size_t n = strlen(ps->p->dirs[i]);
		ours = !strncmp(path, ps->p->dirs[i], n) && path[n] == '/';
	}
	const char *key = path;
	if (ours && !(ps->seen.len &&
		      bsearch(&key, ps->seen.data, ps->seen.len, sizeof(char *), cmp_str))) {
		char *dup = strdup(path), **slot = dup ? base_vec_push(&pr->gone) : NULL;
		if (slot)
			*slot = dup;
		else
			free(dup);
		return true;
	}
	pr->packages++;
	pr->failed += pkg->failed;
	pr->members += pkg->members;
	return true;
}

void svc_packages_scan_now(svc_packages *p)
{
	pass ps = {.p = p};
	base_vec_init(&ps.seen, sizeof(char *), SIZE_MAX / sizeof(char *));
	base_vec_init(&ps.entries, sizeof(stor_cat_entry), SIZE_MAX / sizeof(stor_cat_entry));
	base_vec_init(&ps.sources, sizeof(stor_cat_source), SIZE_MAX / sizeof(stor_cat_source));
	for (size_t i = 0; i < p->o.n_dirs && !p->stopping; i++)
		walk(&ps, p->dirs[i], 0);
	if (ps.seen.len)  /* an empty vector has no buffer: qsort wants one */
		qsort(ps.seen.data, ps.seen.len, sizeof(char *), cmp_str);
	prune pr = {.ps = &ps};
	base_vec_init(&pr.gone, sizeof(char *), SIZE_MAX / sizeof(char *));
	stor_error se;
	if (!p->stopping)
		stor_cat_foreach_package(p->o.store, prune_one, &pr, &se);
	for (size_t i = 0; i < pr.gone.len; i++) {
		char *path = ((char **)pr.gone.data)[i];
		if (stor_cat_delete_package(p->o.store, path, &se) == STOR_OK)
			base_logf(BASE_LOG_INFO, "package removed", "package=%s", path);
		free(path);
	}
	for (size_t i = 0; i < ps.seen.len; i++)
		free(((char **)ps.seen.data)[i]);
	if (!p->stopping)
		atomic_store(&p->settled, true);
	pthread_mutex_lock(&p->mu);
	p->st.passes++;
	p->st.removed += pr.gone.len;
	p->st.packages = pr.packages;
	p->st.failed = pr.failed;
	p->st.members = pr.members;
	pthread_mutex_unlock(&p->mu);
	base_vec_deinit(&pr.gone);
	base_vec_deinit(&ps.seen);
	base_vec_deinit(&ps.entries);
	base_vec_deinit(&ps.sources);
}

/* Waits for a stop, an inotify event (then QUIET_MS without one) or the timer. */
static void wait_change(svc_packages *p)
{
	struct pollfd fds[2] = {{p->wake[0], POLLIN, 0}, {p->inotify, POLLIN, 0}};
	int nfds = p->inotify >= 0 ? 2 : 1;
	int timeout = p->o.rescan_ms > 0 ? (int)(p->o.rescan_ms < INT32_MAX ? p->o.rescan_ms : INT32_MAX)
					 : -1;
	if (poll(fds, (nfds_t)nfds, timeout) <= 0 || p->stopping || !(fds[1].revents & POLLIN))
		return;
	char buf[4096] __attribute__((aligned(8)));
	atomic_store(&p->settled, false);  /* a change: the pass after the quiet time decides */
	do {
		while (read(p->inotify, buf, sizeof(buf)) > 0)
			;
		fds[1].revents = 0;
	} while (poll(fds, 2, QUIET_MS) > 0 && !p->stopping && (fds[1].revents & POLLIN));
}

void *svc_packages_run(void *arg)
{
	svc_packages *p = arg;
	if (p->o.watch)
		p->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	while (!p->stopping) {
		svc_packages_scan_now(p);
		wait_change(p);
	}
	if (p->inotify >= 0)
		close(p->inotify);
	return NULL;
}
