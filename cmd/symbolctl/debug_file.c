// SPDX-License-Identifier: Apache-2.0
/*
 * debug_file: the separate debug file lookup of symbolctl addr2line (see
 * debug_file.h). Candidates are checked, never trusted by name: a build-id
 * path must hold an ELF file with that build ID, a debuglink one must have the
 * link's CRC-32 (zlib's, as gdb computes it over the whole file).
 */
#include "cmd/symbolctl/debug_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Maps path read-only; NULL (quietly) when it is not a readable regular file. */
static void *map_quiet(const char *path, size_t *size, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = NULL;
	if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && st->st_size > 0) {
		p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			p = NULL;
		*size = (size_t)st->st_size;
	}
	close(fd);
	return p;
}

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;
	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

static bool check_build_id(const char *path, const sym_build_id *want, bool verbose)
{
	size_t size = 0;
	struct stat st;
	void *p = map_quiet(path, &size, &st);
	if (!p)
		return false;
	sym_elf_info info;
	sym_error err;
	bool ok = sym_elf_probe(p, size, &info, &err) == SYM_OK &&
		  sym_build_id_equal(&info.build_id, want);
	munmap(p, size);
	if (!ok && verbose)
		fprintf(stderr, "symbolctl addr2line: %s: not the build ID asked for, skipped\n",
			path);
	return ok;
}

static bool check_crc(const char *path, const char *exe, uint32_t want, bool verbose)
{
	size_t size = 0;
	struct stat st;
	void *p = map_quiet(path, &size, &st);
	if (!p)
		return false;
	bool self = same_file(&st, exe);
	uLong crc = crc32(0L, Z_NULL, 0);
	for (size_t off = 0; !self && off < size;) {
		size_t n = size - off < (1u << 30) ? size - off : (1u << 30);
		crc = crc32(crc, (const Bytef *)p + off, (uInt)n);
		off += n;
	}
	munmap(p, size);
	if (self)
		return false;
	if ((uint32_t)crc != want && verbose)
		fprintf(stderr, "symbolctl addr2line: %s: CRC %08x, the link wants %08x: skipped\n",
			path, (unsigned)crc, (unsigned)want);
	return (uint32_t)crc == want;
}

static bool by_build_id(const sym_elf_info *info, const char *const *dirs, size_t n_dirs,
			bool verbose, debug_file_found *out)
{
	if (info->build_id.len < 2)
		return false;
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(&info->build_id, hex);
	for (size_t i = 0; i < n_dirs; i++) {
		int n = snprintf(out->path, sizeof(out->path), "%s/.build-id/%.2s/%s.debug", dirs[i],
				 hex, hex + 2);
		if (n > 0 && (size_t)n < sizeof(out->path) &&
		    check_build_id(out->path, &info->build_id, verbose)) {
			out->how = "build-id";
			return true;
		}
	}
	return false;
}

static bool by_debuglink(const char *exe, const sym_elf_info *info, const char *const *dirs,
			 size_t n_dirs, bool verbose, debug_file_found *out)
{
	if (!info->has_debuglink || strchr(info->debuglink, '/'))
		return false;
	char abs[PATH_MAX];
	if (!realpath(exe, abs))
		return false;
	char *slash = strrchr(abs, '/');
	*slash = '\0';  /* abs is now the directory ("" for the root) */
	const char *name = info->debuglink;
	for (size_t i = 0; i < 2 + n_dirs; i++) {
		int n;
		if (i == 0)
			n = snprintf(out->path, sizeof(out->path), "%s/%s", abs, name);
		else if (i == 1)
			n = snprintf(out->path, sizeof(out->path), "%s/.debug/%s", abs, name);
		else
			n = snprintf(out->path, sizeof(out->path), "%s%s/%s", dirs[i - 2], abs, name);
		if (n > 0 && (size_t)n < sizeof(out->path) &&
		    check_crc(out->path, exe, info->debuglink_crc, verbose)) {
			out->how = "debuglink";
			return true;
		}
	}
	return false;
}

bool debug_file_find(const char *exe, const sym_elf_info *info, const char *const *dirs,
		     size_t n_dirs, bool verbose, debug_file_found *out)
{
	return by_build_id(info, dirs, n_dirs, verbose, out) ||
	       by_debuglink(exe, info, dirs, n_dirs, verbose, out);
}

int debug_file_open(const char *cmd, const char *exe, const char *const *dirs, size_t n_dirs,
		    bool no_lookup, bool verbose, file_map *map, const char **used)
{
	if (!file_map_open(map, exe))
		return -1;
	*used = exe;
	sym_elf_info info;
	sym_error err;
	if (no_lookup || sym_elf_probe(map->data, map->size, &info, &err) != SYM_OK ||
	    info.has_debug_info) {
		if (verbose)
			fprintf(stderr, "symbolctl %s: %s: answering from the file itself\n", cmd, exe);
		return 0;
	}
	static debug_file_found found;  /* outlives the call: *used points into it */
	if (!debug_file_find(exe, &info, dirs, n_dirs, verbose, &found)) {
		if (verbose)
			fprintf(stderr, "symbolctl %s: %s: no DWARF and no debug file found: "
					"answering from its symbols\n", cmd, exe);
		return 0;
	}
	file_map dbg = {0};
	if (!file_map_open(&dbg, found.path))
		return -1;
	file_map_close(map);
	*map = dbg;
	*used = found.path;
	if (verbose)
		fprintf(stderr, "symbolctl %s: %s: debug file %s (by %s)\n", cmd, exe, found.path,
			found.how);
	return 0;
}
