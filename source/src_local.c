// SPDX-License-Identifier: Apache-2.0
/*
 * src_local: a local debug directory in the .build-id layout, the first
 * source (src_source.h). Reads the candidate file whole and checks it with
 * src_check_file before handing it out. A dwz file is also found by the path
 * its users' .gnu_debugaltlink names (Debian links /usr/lib/debug/.dwz/...
 * with no .build-id entry): find_at reads a path inside the directory only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/src_local_ids_impl.h"
#include "source/src_source.h"

typedef struct src_local {
	src_source base;         /* first: a src_local is a src_source */
	char *dir;
	char *real_dir;          /* dir with its symlinks resolved; NULL when it is absent */
	src_local_ids *ids;      /* its files by Go build ID and file hash */
} src_local;

/* Reads a whole regular file of at most max bytes: FOUND, NOT_FOUND (absent or
 * unreadable; err says why when it is not simply absent) or TOO_LARGE. The
 * open does not block (a FIFO or a device at the path would hold the worker
 * forever otherwise); only regular files are read (symlinks to them are fine:
 * .build-id entries are symlinks). */
static src_status read_file(const char *path, uint64_t max, void **data, size_t *size,
			    sym_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			sym_error_set(err, SYM_E_IO, "%s: %s", path, strerror(errno));
		return SRC_NOT_FOUND;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		sym_error_set(err, SYM_E_IO, "%s: not a regular file", path);
		return SRC_NOT_FOUND;
	}
	/* A regular file: reads block as usual. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if ((uint64_t)st.st_size > max) {
		close(fd);
		sym_error_set(err, SYM_E_TOO_LARGE, "%s: %lld bytes, over the %llu-byte cap", path,
			      (long long)st.st_size, (unsigned long long)max);
		return SRC_TOO_LARGE;
	}
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n ? n : 1);
	if (!buf) {
		close(fd);
		sym_error_set(err, SYM_E_NOMEM, "%s: out of memory", path);
		return SRC_NOT_FOUND;
	}
	size_t off = 0;
	while (off < n) {
		ssize_t r = read(fd, buf + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	if (off != n) {
		free(buf);
		sym_error_set(err, SYM_E_IO, "%s: short read", path);
		return SRC_NOT_FOUND;
	}
	*data = buf;
	*size = n;
	return SRC_FOUND;
}

/* DIR/.build-id/xx/rest[.debug], malloc'ed (NULL when out of memory). */
static char *candidate_path(const char *dir, const sym_build_id *id, src_kind want)
{
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(id, hex);
	const char *suffix = want == SRC_KIND_DEBUGINFO ? ".debug" : "";
	size_t n = strlen(dir) + sizeof("/.build-id/xx/") + strlen(hex) + strlen(suffix);
	char *path = malloc(n);
	if (path)
		snprintf(path, n, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
	return path;
}

/* Where the dwz file of the file at path is: the link as written when
 * absolute, else resolved against the directory of the file (its symlinks
 * followed: a .build-id entry points into the tree). */
static void alt_where(const char *path, const sym_elf_info *info, src_file *out)
{
	out->alt_where[0] = '\0';
	if (!info->has_alt || !info->alt_path[0])
		return;
	if (info->alt_path[0] == '/') {
		snprintf(out->alt_where, sizeof(out->alt_where), "%s", info->alt_path);
		return;
	}
	char *real = realpath(path, NULL);
	if (!real)
		return;
	char *slash = strrchr(real, '/');
	if (slash)
		*slash = '\0';
	int n = snprintf(out->alt_where, sizeof(out->alt_where), "%s/%s", real, info->alt_path);
	if (n < 0 || (size_t)n >= sizeof(out->alt_where))
		out->alt_where[0] = '\0';
	free(real);
}

/* Reads path and checks it is id's file of kind want: FOUND with *out filled. */
static src_status read_checked(src_local *l, const char *path, const sym_build_id *id,
			       src_kind want, uint64_t max_size, src_file *out, sym_error *err)
{
	void *buf = NULL;
	size_t len = 0;
	src_status st = read_file(path, max_size, &buf, &len, err);
	if (st != SRC_FOUND)
		return st;
	src_kind kind = SRC_KIND_EXECUTABLE;
	sym_error cerr = {0};
	if (src_check_file(buf, len, id, &kind, &out->info, &cerr) != SYM_OK ||
	    (want == SRC_KIND_DEBUGINFO && kind != SRC_KIND_DEBUGINFO)) {
		if (cerr.code == SYM_OK)
			sym_error_set(&cerr, SYM_E_BAD_ELF, "no debug info");
		sym_error_set(err, cerr.code, "%.200s: %s", path, cerr.msg);
		free(buf);
		return SRC_NOT_FOUND;
	}
	out->data = buf;
	out->size = len;
	out->kind = kind;
	out->origin = l->dir;
	alt_where(path, &out->info, out);
	return SRC_FOUND;
}

static src_status local_find(src_source *s, const sym_build_id *id, src_kind want,
			     uint64_t max_size, src_file *out, sym_error *err)
{
	src_local *l = (src_local *)s;
	if (id->kind != SYM_ID_GNU) {
		/* no .build-id path names it: the directory's identity table */
		char *at = src_local_ids_find(l->ids, id);
		src_status st = at ? read_checked(l, at, id, want, max_size, out, err) : SRC_NOT_FOUND;
		free(at);
		return st;
	}
	if (id->len < 2)
		return SRC_NOT_FOUND; /* the layout needs xx/rest */
	char *path = candidate_path(l->dir, id, want);
	if (!path) {
		sym_error_set(err, SYM_E_NOMEM, "%s: out of memory", l->dir);
		return SRC_NOT_FOUND;
	}
	src_status st = read_checked(l, path, id, want, max_size, out, err);
	free(path);
	return st;
}

/* path, when it lies inside the directory (symlinks resolved): read and
 * checked like a .build-id entry. A path elsewhere is not ours: NOT_FOUND. */
static src_status local_find_at(src_source *s, const char *path, const sym_build_id *id,
				src_kind want, uint64_t max_size, src_file *out, sym_error *err)
{
	src_local *l = (src_local *)s;
	if (!l->real_dir)
		return SRC_NOT_FOUND;
	char *real = realpath(path, NULL);
	if (!real)
		return SRC_NOT_FOUND;
	size_t n = strlen(l->real_dir);
	bool inside = !strncmp(real, l->real_dir, n) && (real[n] == '/' || !strcmp(l->real_dir, "/"));
	src_status st = inside ? read_checked(l, real, id, want, max_size, out, err) : SRC_NOT_FOUND;
	free(real);
	return st;
}

static void local_destroy(src_source *s)
{
	src_local *l = (src_local *)s;
	free(l->dir);
	free(l->real_dir);
	src_local_ids_destroy(l->ids);
	free(l);
}

static const src_ops local_ops = {
	.name = "local",
	.find = local_find,
	.find_at = local_find_at,
	.scan = NULL, /* a directory tree is not listed; package archives will be */
	.destroy = local_destroy,
};

src_source *src_local_create(const char *dir, sym_error *err)
{
	src_local *l = calloc(1, sizeof(*l));
	if (l)
		l->dir = strdup(dir);
	if (!l || !l->dir) {
		free(l);
		sym_error_set(err, SYM_E_NOMEM, "local source: out of memory");
		return NULL;
	}
	l->base.ops = &local_ops;
	l->real_dir = realpath(dir, NULL); /* NULL when absent: find_at finds nothing */
	l->ids = src_local_ids_create(dir); /* NULL (out of memory): found by path only */
	return &l->base;
}
