// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_local_index: a mapping's index from local files (ctl_local_index.h),
 * shared by the offline pprof and OTLP commands.
 */
#include "cmd/symbolctl/ctl_local_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/symbolctl/debug_file.h"
#include "cmd/symbolctl/file_map.h"
#include "source/src_source.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_file_id.h"
#include "symbolizer/sym_index.h"

/* Does the ELF file at path have identity id? (quiet) */
static bool has_identity(const char *path, const sym_build_id *id)
{
	if (access(path, R_OK) != 0)
		return false;
	file_map m;
	if (!file_map_open(&m, path))
		return false;
	bool ok = false;
	if (id->kind == SYM_ID_GNU) {
		sym_elf_info info;
		sym_error err;
		ok = sym_elf_probe(m.data, m.size, &info, &err) == SYM_OK &&
		     sym_build_id_equal(&info.build_id, id);
	} else {
		sym_build_id ids[SYM_ID_KINDS];
		size_t n = sym_file_ids(m.data, m.size, ids);
		for (size_t i = 0; i < n && !ok; i++)
			ok = sym_build_id_equal(&ids[i], id);
	}
	file_map_close(&m);
	return ok;
}

static bool load(const void *data, size_t size, const sym_build_id *id, svc_index_entry *entry,
		 void **blob, sym_error *err)
{
	sym_build_options bo = {0};
	size_t bsize = 0;
	if (sym_index_build(data, size, &bo, blob, &bsize, err) != SYM_OK ||
	    sym_index_load(*blob, bsize, &entry->index, err) != SYM_OK)
		return false;
	sym_index_get_info(entry->index, &entry->info);
	entry->id = *id;
	entry->bytes = bsize;
	return true;
}

/* A Go build ID or file hash: the dirs' files, read as the daemon's --debug-dir. */
static bool from_dirs(const sym_build_id *id, const char *const *dirs, size_t n_dirs,
		      svc_index_entry *entry, void **blob, char *why, size_t why_size)
{
	for (size_t i = 0; i < n_dirs; i++) {
		sym_error err = {0};
		src_source *s = src_local_create(dirs[i], &err);
		src_file f;
		bool found = s && src_find(s, id, SRC_KIND_EXECUTABLE, UINT64_MAX, &f, &err) ==
					  SRC_FOUND;
		if (found) {
			bool ok = load(f.data, f.size, id, entry, blob, &err);
			src_file_release(&f);
			if (!ok)
				snprintf(why, why_size, "%s: %s", dirs[i], err.msg);
			src_destroy(s);
			return ok;
		}
		src_destroy(s);
	}
	return false;
}

bool ctl_local_index(const char *cmd, const sym_build_id *id, const char *file,
		     const char *const *dirs, size_t n_dirs, svc_index_entry *entry, void **blob,
		     char *why, size_t why_size)
{
	char path[4096] = "", hex[SYM_BUILD_ID_HEX_MAX];
	why[0] = '\0';
	if (id->kind != SYM_ID_GNU) {
		if (from_dirs(id, dirs, n_dirs, entry, blob, why, why_size))
			return true;
		if (why[0])
			return false;
	} else {
		sym_build_id_to_hex(id, hex);
		for (size_t i = 0; i < n_dirs && !path[0]; i++) {
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dirs[i], hex, hex + 2);
			if (!has_identity(path, id))
				path[0] = '\0';
		}
	}
	if (!path[0] && file && file[0] == '/' && has_identity(file, id))
		snprintf(path, sizeof(path), "%s", file);
	if (!path[0]) {
		snprintf(why, why_size, "no file with this %s in %zu debug dir(s) nor at the "
			 "mapping's path", id->kind == SYM_ID_GNU ? "build ID" : "identity", n_dirs);
		return false;
	}
	file_map m = {0};
	const char *used;
	if (debug_file_open(cmd, path, dirs, n_dirs, false, false, &m, &used))
		return snprintf(why, why_size, "%s: cannot be read", path), false;
	sym_error err;
	bool ok = load(m.data, m.size, id, entry, blob, &err);
	file_map_close(&m);
	if (!ok)
		snprintf(why, why_size, "%s: %s", used, err.msg);
	return ok;
}
