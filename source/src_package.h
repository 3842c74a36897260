/* SPDX-License-Identifier: Apache-2.0 */
/*
 * src_package: distribution packages (.deb, .ddeb, .rpm) read as a source of
 * debug files, without unpacking them.
 *
 * src_package_scan() reads a package once: the outer container by hand (the ar
 * members of a .deb, the lead and headers of an .rpm; every size checked) to
 * find the compressed payload, the xz block index of that payload when it has
 * several blocks (src_xz.h), then the tar or cpio entries with libarchive. It
 * reports each member that has a build ID: named by a .build-id link
 * (usr/lib/debug/.build-id/xx/rest.debug -> the file), or read from the
 * member's own ELF note (kernel modules, dwz files). For each: its path, its
 * position and size in the uncompressed payload, debuginfo or executable.
 * An ELF executable read for its note (not under usr/lib/debug/) also gets
 * its Go build ID and its OTel file hash (first and last 4 KiB, length) as
 * aliases, and is reported under its file hash when it has no GNU build ID
 * (a stripped Go program).
 * Every other regular member that is not ELF is reported as a source file.
 * Multi-block xz payloads are read block by block (two threads, blocks that
 * hold only skipped data are not decoded); other payloads stream through
 * libarchive's filters with bounded memory.
 *
 * src_package_extract() gets one member back from that position: the blocks
 * that overlap it for multi-block xz, else a stream from the start.
 *
 * One corrupt xz block of a multi-block payload loses only the members that
 * overlap it (src_pkg_scan_stats.lost; the walk resumes at the next tar
 * header after it, src_package_resync.c); the others are reported as usual.
 *
 * Hostile packages end in an error with a stable reason (src_pkg_reason_name):
 * truncated, bad_container, bad_xz_index, too_large (a member or payload past
 * the caps, a zip bomb), bad_path (`..`), too_many_members, timeout, io.
 *
 * No store access here; service/ keeps the results in the catalogue.
 * Thread-safe: no shared state.
 */
#ifndef SRC_PACKAGE_H
#define SRC_PACKAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/src_source.h"
#include "source/src_xz.h"

typedef enum src_pkg_comp {
	SRC_PKG_COMP_NONE = 0,
	SRC_PKG_COMP_XZ,
	SRC_PKG_COMP_ZSTD,
	SRC_PKG_COMP_GZIP,
	SRC_PKG_COMP_BZIP2,
} src_pkg_comp;

typedef enum src_pkg_reason {
	SRC_PKG_OK = 0,
	SRC_PKG_E_IO,
	SRC_PKG_E_TRUNCATED,
	SRC_PKG_E_BAD_CONTAINER,
	SRC_PKG_E_BAD_XZ_INDEX,
	SRC_PKG_E_TOO_LARGE,
	SRC_PKG_E_BAD_PATH,
	SRC_PKG_E_TOO_MANY_MEMBERS,
	SRC_PKG_E_TIMEOUT,
	SRC_PKG_E_NOMEM,
	SRC_PKG_E_COUNT,
} src_pkg_reason;

const char *src_pkg_reason_name(src_pkg_reason r); /* "truncated", ... */

/* Where the payload is, and how to get at it: kept per package in the catalogue. */
typedef struct src_pkg_layout {
	uint64_t payload_off;    /* compressed payload in the file */
	uint64_t payload_size;
	uint8_t comp;            /* src_pkg_comp */
	uint8_t is_cpio;         /* rpm: cpio; else tar */
	src_xz_index xz;         /* multi-block xz only (n_blocks >= 2) */
} src_pkg_layout;

void src_pkg_layout_free(src_pkg_layout *l);

/* True when members are read by block (multi-block xz), false when streamed. */
bool src_pkg_layout_random(const src_pkg_layout *l);

/* Serialized form for the catalogue (little-endian, versioned). malloc'ed. */
void *src_pkg_layout_encode(const src_pkg_layout *l, size_t *len);
sym_errc src_pkg_layout_decode(const void *data, size_t len, src_pkg_layout *out,
			       sym_error *err);

typedef struct src_pkg_member {
	sym_build_id id;         /* the canonical identity: GNU build ID, else file hash */
	src_kind kind;
	/* An executable's other identities (its Go build ID, its file hash): the
	 * catalogue keeps alias -> id entries for them (identities.md). */
	sym_build_id aliases[2];
	uint8_t n_aliases;
	/* A regular member that is not ELF: a source file a debug file's DWARF
	 * may name (/usr/src/debug/... in a -debugsource rpm); id and kind unset. */
	bool source;
	const char *path;        /* normalized, no leading "./" or "/" */
	uint64_t offset;         /* of its bytes in the uncompressed payload */
	uint64_t size;
} src_pkg_member;

/* Called for each member with a build ID or source; false stops the scan (SYM_OK). */
typedef bool (*src_pkg_member_fn)(void *arg, const src_pkg_member *m);

typedef struct src_pkg_limits {
	uint64_t max_members;      /* entries of the archive (default 1,000,000) */
	uint64_t max_member_size;  /* bytes of one member (default 16G) */
	uint64_t max_ratio;        /* uncompressed / compressed payload (default 1000) */
	uint64_t max_probe;        /* largest member read whole for its build ID (128M) */
	int64_t max_ms;            /* time of one scan (default 30 min) */
} src_pkg_limits;

void src_pkg_limits_init(src_pkg_limits *l);

/* Corrupt xz blocks a scan went past (multi-block payloads): the members
 * that overlap one are lost, the walk goes on from the next tar header after
 * it. More than SRC_PKG_BAD_MAX fail the scan (truncated). */
#define SRC_PKG_BAD_MAX 8
typedef struct src_pkg_range {
	uint64_t off, end;       /* uncompressed payload bytes [off, end) */
} src_pkg_range;

typedef struct src_pkg_scan_stats {
	uint64_t entries;        /* tar/cpio entries listed */
	uint64_t members;        /* reported with a build ID */
	uint64_t sources;        /* reported as sources (not ELF) */
	uint64_t probed;         /* members read for their build ID */
	uint64_t blocks_decoded; /* xz blocks decoded (multi-block payloads) */
	size_t n_lost;           /* ranges lost to corrupt blocks */
	src_pkg_range lost[SRC_PKG_BAD_MAX];
	char damage[320];        /* why: the first bad block, its error, the member it cut */
} src_pkg_scan_stats;

/* Whether a member at [off, off + size) overlaps a lost range: the caller
 * drops it (its bytes cannot be read back), even if it was reported. */
bool src_pkg_scan_lost(const src_pkg_scan_stats *st, uint64_t off, uint64_t size);

/*
 * Scans the package at path (fd open on it). Fills *layout (free it with
 * src_pkg_layout_free even on error) and calls fn per member. On error,
 * *reason says which kind (for metrics) and err the details.
 */
sym_errc src_package_scan(int fd, const char *path, const src_pkg_limits *lim,
			  src_pkg_layout *layout, src_pkg_member_fn fn, void *arg,
			  src_pkg_scan_stats *stats, src_pkg_reason *reason, sym_error *err);

/*
 * Reads the member at [offset, offset + size) of the payload (member_path: its
 * name, checked when the payload is streamed). *data is malloc'ed.
 */
sym_errc src_package_extract(int fd, const src_pkg_layout *layout, const char *member_path,
			     uint64_t offset, uint64_t size, void **data, sym_error *err);

#endif
