// SPDX-License-Identifier: Apache-2.0
/*
 * src_source: the source interface's calls through the operations table, and
 * the found file's release (src_source.h).
 */
#include "source/src_source.h"

#include <stdlib.h>
#include <string.h>

const char *src_kind_name(src_kind k)
{
	return k == SRC_KIND_DEBUGINFO ? "debuginfo" : "executable";
}

void src_file_release(src_file *file)
{
	if (!file)
		return;
	free(file->data);
	memset(file, 0, sizeof(*file));
}

src_status src_find(src_source *s, const sym_build_id *id, src_kind want, uint64_t max_size,
		    src_file *out, sym_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!id || id->len == 0) {
		sym_error_set(err, SYM_E_INVALID, "source: empty build ID");
		return SRC_NOT_FOUND;
	}
	return s->ops->find(s, id, want, max_size, out, err);
}

src_status src_find_at(src_source *s, const char *path, const sym_build_id *id, src_kind want,
		       uint64_t max_size, src_file *out, sym_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!s->ops->find_at || !path || !*path || !id || id->len == 0)
		return SRC_NOT_FOUND;
	return s->ops->find_at(s, path, id, want, max_size, out, err);
}

sym_errc src_scan(src_source *s, src_scan_fn fn, void *arg, sym_error *err)
{
	if (!s->ops->scan)
		return sym_error_set(err, SYM_E_UNSUPPORTED, "source %s: cannot list its build IDs",
				     s->ops->name);
	return s->ops->scan(s, fn, arg, err);
}

void src_destroy(src_source *s)
{
	if (s)
		s->ops->destroy(s);
}
