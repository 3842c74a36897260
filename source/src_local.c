/*
 * source_local: local debug directories in the .build-id layout, and the check
 * every fetched file goes through before the store (see fetch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/fetch/svc_fetcher.h"

sym_errc svc_check_file(const void *data, size_t size, const sym_build_id *want,
			stor_kind *kind, sym_elf_info *info, sym_error *err)
{
	sym_errc rc = sym_elf_probe(data, size, info, err);
	if (rc != SYM_OK)
		return rc;
	if (info->build_id.len == 0)
		return sym_error_set(err, SYM_E_BAD_ELF, "no GNU build-ID note");
	if (!sym_build_id_equal(&info->build_id, want)) {
		char got[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(&info->build_id, got);
		return sym_error_set(err, SYM_E_BAD_ELF, "build ID mismatch (file has %.64s)", got);
	}
	*kind = info->has_debug_info ? STOR_KIND_DEBUGINFO : STOR_KIND_EXECUTABLE;
	return SYM_OK;
}

/* Reads a whole regular file of at most max bytes. 1 read, 0 absent, -1 too large. */
static int read_file(const char *path, uint64_t max, void **data, size_t *size, sym_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			sym_error_set(err, SYM_E_IO, "%s: %s", path, strerror(errno));
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		sym_error_set(err, SYM_E_TOO_LARGE, "%s: %lld bytes, over the %llu-byte cap", path,
			      (long long)st.st_size, (unsigned long long)max);
		return -1;
	}
	size_t n = (size_t)st.st_size;
	char *buf = malloc(n ? n : 1);
	if (!buf) {
		close(fd);
		sym_error_set(err, SYM_E_NOMEM, "%s: out of memory", path);
		return 0;
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
		return 0;
	}
	*data = buf;
	*size = n;
	return 1;
}

int svc_source_local_find(char *const *dirs, size_t n_dirs, const sym_build_id *id,
			  stor_kind want, uint64_t max_size, void **data, size_t *size,
			  const char **dir_out, sym_error *err)
{
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(id, hex);
	if (id->len < 2)
		return 0; /* the layout needs xx/rest */
	int result = 0;
	for (size_t i = 0; i < n_dirs; i++) {
		char path[4096];
		int n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s%s", dirs[i], hex, hex + 2,
				 want == STOR_KIND_DEBUGINFO ? ".debug" : "");
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		void *buf = NULL;
		size_t len = 0;
		int r = read_file(path, max_size, &buf, &len, err);
		if (r < 0) {
			result = -1;
			continue;
		}
		if (r == 0)
			continue;
		stor_kind kind = STOR_KIND_NONE;
		sym_elf_info info;
		sym_error cerr = {0};
		if (svc_check_file(buf, len, id, &kind, &info, &cerr) != SYM_OK ||
		    (want == STOR_KIND_DEBUGINFO && kind != STOR_KIND_DEBUGINFO)) {
			if (cerr.code == SYM_OK)
				sym_error_set(&cerr, SYM_E_BAD_ELF, "no debug info");
			sym_error_set(err, cerr.code, "%.200s: %s", path, cerr.msg);
			free(buf);
			continue;
		}
		*data = buf;
		*size = len;
		*dir_out = dirs[i];
		return 1;
	}
	return result;
}
