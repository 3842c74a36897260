/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_source: where debug info comes from, behind one small interface.
 *
 * A source is an object with a table of operations: find() looks for the file
 * of a build ID (its debug info, or the executable) and returns its bytes,
 * already checked with src_check_file (an ELF whose GNU build-ID note is the
 * one asked for); scan() lists the build IDs a source holds, for sources that
 * can list them; it is NULL in sources that cannot.
 * The first implementation is the local debug directory (src_local_create).
 * Package archives are read here (src_package.h) and made a source in
 * service/resolve (svc_packages), whose find() answers from the store's
 * catalogue of them.
 *
 * Sources are blocking code: the service calls them on worker threads, several
 * at a time, so find() and scan() must be safe to call concurrently. Creating
 * and destroying a source happen on one thread, with no call in progress.
 *
 * source/ uses symbolizer/ (ELF probes) and base/ only; it knows nothing of the
 * store or the service: the kinds here are its own, mapped at the boundary.
 */
#ifndef SRC_SOURCE_H
#define SRC_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_error.h"

typedef enum src_kind {
	SRC_KIND_DEBUGINFO = 0,  /* a file with DWARF (a .debug file, or an unstripped binary) */
	SRC_KIND_EXECUTABLE,     /* the binary, with symbols at best */
} src_kind;

const char *src_kind_name(src_kind k); /* "debuginfo", "executable" */

typedef enum src_status {
	SRC_FOUND = 0,           /* *out holds a checked file */
	SRC_NOT_FOUND,           /* no good file (err, when set, says why a candidate failed) */
	SRC_TOO_LARGE,           /* nothing found, and a candidate was over max_size */
	SRC_PENDING,             /* not found yet: the source's listing is incomplete (a
				  * package scan under way, a package changed since its
				  * scan); ask again soon, remember no negative answer */
} src_status;

/* Longest path a source reports (the dwz file's location). */
#define SRC_PATH_MAX 4096

/* A found file. */
typedef struct src_file {
	void *data;              /* the whole file (malloc'ed; src_file_release frees it) */
	size_t size;
	src_kind kind;           /* what it is: DEBUGINFO when it carries DWARF */
	sym_elf_info info;       /* its probe (build ID, dwz link, ...) */
	const char *origin;      /* where it came from (a directory); valid while the source lives */
	/* info.has_alt: the absolute path of the dwz file the link names (a relative
	 * link resolved against the file's directory); "" when unknown. */
	char alt_where[SRC_PATH_MAX];
} src_file;

void src_file_release(src_file *file);

typedef struct src_source src_source;

/* Called by scan() for each build ID a source holds; false stops the scan. */
typedef bool (*src_scan_fn)(void *arg, const sym_build_id *id, src_kind kind, const char *where);

typedef struct src_ops {
	const char *name;        /* "local", ... (for logs) */
	/*
	 * Looks for the file of id: want DEBUGINFO accepts only a file with DWARF;
	 * want EXECUTABLE accepts the binary (or a file with DWARF in its place).
	 * Files over max_size bytes are not read.
	 */
	src_status (*find)(src_source *s, const sym_build_id *id, src_kind want, uint64_t max_size,
			   src_file *out, sym_error *err);
	/*
	 * Looks for the file of id at path, as a link names it (a dwz file named by
	 * .gnu_debugaltlink): only a path inside the source is read, and the file
	 * must carry id as always. NULL when the source has no paths.
	 */
	src_status (*find_at)(src_source *s, const char *path, const sym_build_id *id,
			      src_kind want, uint64_t max_size, src_file *out, sym_error *err);
	/* Lists what the source holds; NULL when it cannot (local directories). */
	sym_errc (*scan)(src_source *s, src_scan_fn fn, void *arg, sym_error *err);
	void (*destroy)(src_source *s);
} src_ops;

/* Every source starts with this header (an implementation embeds it first). */
struct src_source {
	const src_ops *ops;
};

/* The operations, through the table. */
src_status src_find(src_source *s, const sym_build_id *id, src_kind want, uint64_t max_size,
		    src_file *out, sym_error *err);
/* SRC_NOT_FOUND when the source has no find_at. */
src_status src_find_at(src_source *s, const char *path, const sym_build_id *id, src_kind want,
		       uint64_t max_size, src_file *out, sym_error *err);
/* SYM_E_UNSUPPORTED when the source has no scan. */
sym_errc src_scan(src_source *s, src_scan_fn fn, void *arg, sym_error *err);
/* NULL is a no-op. */
void src_destroy(src_source *s);

/*
 * The check every file goes through before it is trusted, whoever found it
 * (local directory, upstream download, upload): an ELF with a GNU build-ID note
 * equal to want. Sets *kind to DEBUGINFO when it carries DWARF, else
 * EXECUTABLE, and fills *info. SYM_E_BAD_ELF (with the reason) otherwise.
 */
sym_errc src_check_file(const void *data, size_t size, const sym_build_id *want, src_kind *kind,
			sym_elf_info *info, sym_error *err);

/*
 * A local debug directory in the .build-id layout: the debug file
 * DIR/.build-id/xx/rest.debug (want DEBUGINFO) or the executable
 * DIR/.build-id/xx/rest (want EXECUTABLE), where xx are the first two hex
 * digits of the build ID and rest the others. The origin of its files is dir.
 * NULL (and err set) when out of memory.
 */
src_source *src_local_create(const char *dir, sym_error *err);

#endif
