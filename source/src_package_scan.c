// SPDX-License-Identifier: Apache-2.0
/*
 * src_package_scan: lists a package's members and finds the build ID of each
 * debug file (src_package.h). A .build-id link names its target's build ID
 * without reading it; a file no link names is read (up to max_probe bytes)
 * when it starts with the ELF magic, and its note gives the build ID (kernel
 * modules, dwz files, executables); an executable's Go build ID and file hash
 * come with it (src_package.h). Caps: entries, member size, the ratio of
 * uncompressed to compressed bytes (zip bombs), the scan's time.
 */
#include "source/src_package_impl.h"

#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base_buf.h"
#include "base/base_clock.h"
#include "base/base_hash.h"
#include "base/base_hash_map.h"

typedef struct link_val {
	sym_build_id id;
	src_kind kind;
} link_val;

typedef char *str_key; /* a typedef, so that const applies to the pointer */

static uint64_t str_hash(const str_key *s)
{
	return base_hash_bytes(*s, strlen(*s));
}

static bool str_eq(const str_key *a, const str_key *b)
{
	return strcmp(*a, *b) == 0;
}

BASE_HASH_MAP(link_map, str_key, link_val, str_hash, str_eq)

#define BUILD_ID_DIR "usr/lib/debug/.build-id/"
#define EI_DATA_BYTE 5 /* e_ident[EI_DATA]: 2 for big-endian */

typedef struct scan {
	struct archive *a;
	src_pkg_stream *st;
	int fd;
	const src_pkg_layout *layout;
	uint64_t base;           /* payload offset the archive was opened at (a resync's) */
	uint64_t next_hdr;       /* where the header after the last member is */
	char cur[200];           /* the member being read (for a loss's message) */
	bool ended;              /* no header after a bad block: the walk is over */
	const src_pkg_limits *lim;
	src_pkg_member_fn fn;
	void *arg;
	src_pkg_scan_stats *stats;
	link_map links;          /* link target path -> build ID named by the link */
	base_buf probe_buf;      /* member bytes read for their note ... */
	uint8_t *probe;          /* ... = probe_buf.data */
	uint64_t max_usize;      /* ratio cap on uncompressed bytes */
	int64_t deadline_ms;
	bool stopped;
	src_pkg_reason reason;
	sym_error *err;
} scan;

static sym_errc scan_fail(scan *s, src_pkg_reason r, sym_errc code, const char *fmt,
			  const char *what)
{
	s->reason = r;
	return sym_error_set(s->err, code, fmt, what);
}

/* "usr/lib/debug/.build-id/xx/rest[.debug]" -> build ID and kind. */
static bool link_id(const char *path, sym_build_id *id, src_kind *kind)
{
	if (strncmp(path, BUILD_ID_DIR, sizeof(BUILD_ID_DIR) - 1))
		return false;
	const char *p = path + sizeof(BUILD_ID_DIR) - 1;
	if (strlen(p) < 4 || p[2] != '/')
		return false;
	char hex[SYM_BUILD_ID_HEX_MAX + 8];
	size_t rest = strlen(p + 3);
	*kind = SRC_KIND_EXECUTABLE;
	if (rest > 6 && !strcmp(p + 3 + rest - 6, ".debug")) {
		rest -= 6;
		*kind = SRC_KIND_DEBUGINFO;
	}
	if (rest + 2 >= SYM_BUILD_ID_HEX_MAX)
		return false;
	memcpy(hex, p, 2);
	memcpy(hex + 2, p + 3, rest);
	return sym_build_id_from_hex(hex, rest + 2, id);
}

/* The normalized target of a link at path; false when it leaves the root. */
static bool link_target(const char *path, const char *target, char *out, size_t out_size)
{
	char joined[PATH_MAX];
	if (target[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", target);
	} else {
		const char *slash = strrchr(path, '/');
		int dir = slash ? (int)(slash - path) : 0;
		if (snprintf(joined, sizeof(joined), "%.*s/%s", dir, path, target) >=
		    (int)sizeof(joined))
			return false;
	}
	/* Resolve "." and ".." against the components so far. */
	char *parts[PATH_MAX / 2];
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(joined, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			if (n == 0)
				return false;
			n--;
			continue;
		}
		parts[n++] = tok;
	}
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int w = snprintf(out + len, out_size - len, "%s%s", i ? "/" : "", parts[i]);
		if (w < 0 || (size_t)w >= out_size - len)
			return false;
		len += (size_t)w;
	}
	return len > 0;
}

static void on_link(scan *s, const char *path, struct archive_entry *e)
{
	sym_build_id id;
	src_kind kind;
	const char *target = archive_entry_symlink(e);
	char to[PATH_MAX];
	if (!target || !link_id(path, &id, &kind) || !link_target(path, target, to, sizeof(to)))
		return;
	char *key = strdup(to);
	if (!key)
		return;
	bool inserted = false;
	link_val *v = link_map_put(&s->links, &key, &inserted);
	if (!v || !inserted) {
		free(key);
		if (v && kind == SRC_KIND_DEBUGINFO)
			*v = (link_val){id, kind};
		return;
	}
	*v = (link_val){id, kind};
}

static void emit(scan *s, const char *path, const sym_build_id *id, src_kind kind, uint64_t off,
		 uint64_t size)
{
	src_pkg_member m = {.id = *id, .kind = kind, .path = path, .offset = off, .size = size};
	s->stats->members++;
	if (!s->fn(s->arg, &m))
		s->stopped = true;
}

static bool debug_path(const char *path)
{
	return !strncmp(path, "usr/lib/debug/", 14);
}

/*
 * An ELF member outside usr/lib/debug/ with all its identities: under its
 * GNU build ID (gnu->len > 0), else under its file hash; the others (Go build
 * ID from go_text, file hash) as aliases.
 */
static void emit_ids(scan *s, const char *path, const sym_build_id *gnu, const char *go_text,
		     const sym_build_id *htl, src_kind kind, uint64_t off, uint64_t size)
{
	src_pkg_member m = {.id = gnu->len ? *gnu : *htl, .kind = kind, .path = path,
			    .offset = off, .size = size};
	if (go_text && sym_go_build_id_of_text(go_text, strlen(go_text), &m.aliases[m.n_aliases]))
		m.n_aliases++;
	if (gnu->len)
		m.aliases[m.n_aliases++] = *htl;
	s->stats->members++;
	if (!s->fn(s->arg, &m))
		s->stopped = true;
}

/* A member that is not ELF: a source file, perhaps. */
static void emit_source(scan *s, const char *path, uint64_t off, uint64_t size)
{
	src_pkg_member m = {.source = true, .path = path, .offset = off, .size = size};
	s->stats->sources++;
	if (!s->fn(s->arg, &m))
		s->stopped = true;
}

/* Reads n bytes of the current member into buf. */
static sym_errc read_exact(scan *s, const char *path, uint8_t *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		la_ssize_t r = archive_read_data(s->a, buf + got, n - got);
		if (r <= 0)
			return scan_fail(s, SRC_PKG_E_TRUNCATED, SYM_E_INVALID, "member %.200s: truncated",
					 path);
		got += (size_t)r;
	}
	return SYM_OK;
}

static bool probe_reserve(scan *s, size_t n)
{
	if (!base_buf_ensure(&s->probe_buf, n))
		return false;
	s->probe = s->probe_buf.data;
	return true;
}

#define HEAD_BYTES (64u << 10)
#define LARGE_MEMBER (8u << 20)

/*
 * The file hash of a large member whose first pos bytes were read (its head
 * in probe[0, 4096)): the rest read through in chunks, keeping the last 4 KiB.
 */
static sym_errc read_tail(scan *s, const char *path, uint64_t size, uint64_t pos,
			  sym_build_id *htl)
{
	uint8_t tail[SYM_HTLHASH_PART];
	uint8_t *chunk = s->probe + HEAD_BYTES;
	size_t have = 0;   /* bytes of tail filled, at its end */
	while (pos < size) {
		size_t n = size - pos < (1u << 20) ? (size_t)(size - pos) : (1u << 20);
		sym_errc rc = read_exact(s, path, chunk, n);
		if (rc)
			return rc;
		if (n >= sizeof(tail)) {
			memcpy(tail, chunk + n - sizeof(tail), sizeof(tail));
			have = sizeof(tail);
		} else {
			memmove(tail, tail + n, sizeof(tail) - n);
			memcpy(tail + sizeof(tail) - n, chunk, n);
			have = have + n < sizeof(tail) ? have + n : sizeof(tail);
		}
		pos += n;
	}
	if (have < sizeof(tail))   /* a member this large always fills it; checked anyway */
		return scan_fail(s, SRC_PKG_E_TRUNCATED, SYM_E_INVALID, "member %.200s: truncated",
				 path);
	sym_htlhash_parts(s->probe, tail, size, htl);
	return SYM_OK;
}

/* A large ELF with program headers (its first hl bytes read): its PT_NOTE,
 * read as the stream passes it; an executable is read to its end for its
 * file hash. */
static sym_errc probe_segment(scan *s, const char *path, uint64_t off, uint64_t size, size_t hl,
			      uint64_t noff, uint64_t nsz)
{
	sym_errc rc;
	bool be = s->probe[EI_DATA_BYTE] == 2;
	uint8_t *notes = s->probe + noff;
	if (noff + nsz > hl) {
		for (uint64_t at = hl; at < noff;) {
			size_t n = noff - at < HEAD_BYTES ? (size_t)(noff - at) : HEAD_BYTES;
			if ((rc = read_exact(s, path, s->probe + HEAD_BYTES, n)))
				return rc;
			at += n;
		}
		size_t keep = noff < hl ? (size_t)(hl - noff) : 0;
		memmove(s->probe + HEAD_BYTES, s->probe + noff, keep); /* the note's start, if read */
		if ((rc = read_exact(s, path, s->probe + HEAD_BYTES + keep, (size_t)nsz - keep)))
			return rc;
		notes = s->probe + HEAD_BYTES;
	}
	sym_build_id id = {0};
	bool has_gnu = src_note_build_id(notes, (size_t)nsz, be, &id);
	s->stats->probed++;
	if (debug_path(path)) {
		if (has_gnu)
			emit(s, path, &id, SRC_KIND_DEBUGINFO, off, size);
		return SYM_OK;
	}
	char go_text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	bool has_go = src_note_go_build_id(notes, (size_t)nsz, be, go_text);
	uint64_t pos = noff + nsz > hl ? noff + nsz : hl;
	sym_build_id htl;
	if ((rc = read_tail(s, path, size, pos, &htl)))
		return rc;
	if (!has_gnu)
		id.len = 0;
	emit_ids(s, path, &id, has_go ? go_text : NULL, &htl, SRC_KIND_EXECUTABLE, off, size);
	return SYM_OK;
}

/* Reads the member (whole, or its note segment when large) for its build
 * ID; a member that is not ELF is a source. */
static sym_errc probe_member(scan *s, const char *path, uint64_t off, uint64_t size)
{
	if (!probe_reserve(s, HEAD_BYTES + (1u << 20) + 8))
		return scan_fail(s, SRC_PKG_E_NOMEM, SYM_E_NOMEM, "%s: out of memory", path);
	sym_errc rc = size < 4 ? SYM_OK : read_exact(s, path, s->probe, 4);
	if (rc)
		return rc;
	if (size < 4 || memcmp(s->probe, "\x7f" "ELF", 4)) {
		emit_source(s, path, off, size);
		return SYM_OK;
	}
	if (size < 64)
		return SYM_OK;
	size_t hl = size < HEAD_BYTES ? (size_t)size : HEAD_BYTES;
	if ((rc = read_exact(s, path, s->probe + 4, hl - 4)))
		return rc;
	uint64_t noff, nsz;
	if (size > LARGE_MEMBER && src_note_segment(s->probe, hl, &noff, &nsz)) {
		if (noff > size || nsz > size - noff)
			return SYM_OK;
		return probe_segment(s, path, off, size, hl, noff, nsz);
	}
	if (size > s->lim->max_probe)
		return SYM_OK;
	if (!probe_reserve(s, (size_t)size))
		return scan_fail(s, SRC_PKG_E_NOMEM, SYM_E_NOMEM, "%s: out of memory", path);
	if ((rc = read_exact(s, path, s->probe + hl, (size_t)size - hl)))
		return rc;
	s->stats->probed++;
	sym_elf_info info;
	if (sym_elf_probe(s->probe, (size_t)size, &info, NULL) != SYM_OK)
		return SYM_OK;
	src_kind kind = info.has_debug_info ? SRC_KIND_DEBUGINFO : SRC_KIND_EXECUTABLE;
	if (debug_path(path)) {
		if (info.build_id.len)
			emit(s, path, &info.build_id, kind, off, size);
		return SYM_OK;
	}
	sym_build_id htl;
	sym_htlhash(s->probe, (size_t)size, &htl);
	char go_text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	bool has_go = sym_go_build_id_text(s->probe, (size_t)size, go_text);
	emit_ids(s, path, &info.build_id, has_go ? go_text : NULL, &htl, kind, off, size);
	return SYM_OK;
}

static sym_errc on_file(scan *s, const char *path, struct archive_entry *e)
{
	la_int64_t sz = archive_entry_size(e);
	uint64_t size = sz < 0 ? 0 : (uint64_t)sz;
	uint64_t off = s->base + (uint64_t)archive_filter_bytes(s->a, 0);
	s->next_hdr = (off + size + 511) / 512 * 512;
	snprintf(s->cur, sizeof(s->cur), "%.199s", path);
	if (size > s->lim->max_member_size || size > s->max_usize || off > s->max_usize - size)
		return scan_fail(s, SRC_PKG_E_TOO_LARGE, SYM_E_TOO_LARGE,
				 "member %s: size past the caps (lying size or zip bomb)", path);
	char *key = (char *)path;
	link_val *v = link_map_get(&s->links, &key);
	if (v) {
		emit(s, path, &v->id, v->kind, off, size);
		return SYM_OK;
	}
	return probe_member(s, path, off, size);
}

static sym_errc on_entry(scan *s, struct archive_entry *e)
{
	if (++s->stats->entries > s->lim->max_members)
		return scan_fail(s, SRC_PKG_E_TOO_MANY_MEMBERS, SYM_E_TOO_LARGE, "%s",
				 "too many members");
	if ((s->stats->entries & 1023) == 0 && base_mono_ms() > s->deadline_ms)
		return scan_fail(s, SRC_PKG_E_TIMEOUT, SYM_E_TOO_LARGE, "%s", "scan took too long");
	const char *raw = archive_entry_pathname(e);
	char path[PATH_MAX];
	if (!raw)
		return SYM_OK;
	if (!src_pkg_normalize(raw, path, sizeof(path))) {
		if (!strcmp(raw, ".") || !strcmp(raw, "./") || !strcmp(raw, "/"))
			return SYM_OK;
		return scan_fail(s, SRC_PKG_E_BAD_PATH, SYM_E_INVALID, "member %.200s: bad path (..)",
				 raw);
	}
	mode_t type = archive_entry_filetype(e);
	if (type == AE_IFLNK) {
		on_link(s, path, e);
		return SYM_OK;
	}
	if (type == AE_IFREG && !archive_entry_hardlink(e))
		return on_file(s, path, e);
	return SYM_OK;
}

static void scan_deinit(scan *s)
{
	size_t pos = 0;
	link_map_entry *e;
	while ((e = link_map_next(&s->links, &pos)))
		free(e->key);
	link_map_deinit(&s->links);
	base_buf_deinit(&s->probe_buf);
	src_pkg_stream_close(s->st, s->a);
}

/* The xz index, when the payload is xz: kept when it has several blocks. */
static sym_errc read_xz(int fd, src_pkg_layout *l, const src_pkg_limits *lim,
			src_pkg_reason *reason, sym_error *err)
{
	if (l->comp != SRC_PKG_COMP_XZ)
		return SYM_OK;
	sym_errc rc = src_xz_index_read(fd, l->payload_off, l->payload_size, &l->xz, err);
	if (rc == SYM_E_UNSUPPORTED)
		return SYM_OK; /* several streams: read it as a stream */
	if (rc) {
		*reason = rc == SYM_E_IO ? SRC_PKG_E_IO : SRC_PKG_E_BAD_XZ_INDEX;
		return rc;
	}
	if (l->xz.usize / lim->max_ratio > l->payload_size) {
		*reason = SRC_PKG_E_TOO_LARGE;
		return sym_error_set(err, SYM_E_TOO_LARGE, "xz: %llu bytes uncompressed (zip bomb?)",
				     (unsigned long long)l->xz.usize);
	}
	if (l->xz.n_blocks < 2)
		src_xz_index_free(&l->xz);
	return SYM_OK;
}

bool src_pkg_scan_lost(const src_pkg_scan_stats *st, uint64_t off, uint64_t size)
{
	for (size_t i = 0; i < st->n_lost; i++)
		if (off < st->lost[i].end && off + size > st->lost[i].off)
			return true;
	return false;
}

/* A read failed (rc): when on a corrupt xz block, the members overlapping it
 * are lost (stats->lost) and the walk goes on from the next tar header after
 * it, in a new reader (s->ended when there is none); else rc. */
static sym_errc skip_bad_block(scan *s, sym_errc rc, bool in_member)
{
	const src_xz_index *ix = &s->layout->xz;
	size_t bad = src_pkg_stream_bad_block(s->st);
	src_pkg_scan_stats *ss = s->stats;
	if (bad >= ix->n_blocks || ss->n_lost >= SRC_PKG_BAD_MAX || s->layout->is_cpio)
		return rc;
	const src_xz_block *b = &ix->blocks[bad];
	uint64_t pos, skipped;
	sym_error e = {0};
	sym_errc r2 = src_pkg_resync(s->fd, s->layout, bad, s->next_hdr, &pos, &skipped, &e);
	if (r2)
		return scan_fail(s, r2 == SYM_E_IO ? SRC_PKG_E_IO : SRC_PKG_E_NOMEM, r2, "%s", e.msg);
	uint64_t end = b->uoff + b->usize;
	if (pos >= ix->usize) /* no header after it: the rest is lost */
		end = ix->usize;
	else if (skipped && pos > end) /* corrupt blocks passed too: up to the one resumed in */
		end = ix->blocks[src_xz_find_block(ix, pos)].uoff;
	ss->lost[ss->n_lost++] = (src_pkg_range){b->uoff, end > b->uoff ? end : b->uoff + b->usize};
	size_t n = strlen(ss->damage);
	snprintf(ss->damage + n, sizeof(ss->damage) - n,
		 "%sxz block %zu of %zu (payload bytes %llu..%llu): %.80s%s%.100s", n ? "; " : "", bad,
		 ix->n_blocks, (unsigned long long)b->uoff, (unsigned long long)end,
		 src_pkg_stream_error(s->st)->msg, in_member ? ", member cut: " : "",
		 in_member ? s->cur : "");
	ss->blocks_decoded += src_pkg_stream_blocks(s->st);
	src_pkg_stream_close(s->st, s->a);
	s->st = NULL;
	s->a = NULL;
	s->reason = SRC_PKG_OK;
	if (s->err)
		memset(s->err, 0, sizeof(*s->err));
	if ((s->ended = pos >= ix->usize))
		return SYM_OK;
	s->base = pos;
	r2 = src_pkg_stream_open_at(s->fd, s->layout, pos, &s->st, &s->a, s->err);
	return r2 ? scan_fail(s, SRC_PKG_E_TRUNCATED, r2, "after a corrupt block: %.200s",
			      s->err ? s->err->msg : "unreadable")
		  : SYM_OK;
}

static sym_errc scan_entries(scan *s)
{
	for (;;) {
		struct archive_entry *e;
		int r = archive_read_next_header(s->a, &e);
		if (r == ARCHIVE_EOF)
			return SYM_OK;
		sym_errc rc;
		if (r < ARCHIVE_WARN) {
			const sym_error *se = src_pkg_stream_error(s->st);
			const char *m = se->msg[0] ? se->msg : archive_error_string(s->a);
			rc = scan_fail(s, se->code == SYM_E_IO ? SRC_PKG_E_IO : SRC_PKG_E_TRUNCATED,
				       SYM_E_INVALID, "payload: %.200s", m ? m : "unreadable");
		} else {
			s->cur[0] = '\0';
			rc = on_entry(s, e);
			if (!rc && s->stopped)
				return SYM_OK;
		}
		if (rc && ((rc = skip_bad_block(s, rc, r >= ARCHIVE_WARN && s->cur[0])) || s->ended))
			return rc;
	}
}

sym_errc src_package_scan(int fd, const char *path, const src_pkg_limits *lim,
			  src_pkg_layout *layout, src_pkg_member_fn fn, void *arg,
			  src_pkg_scan_stats *stats, src_pkg_reason *reason, sym_error *err)
{
	(void)path;
	memset(layout, 0, sizeof(*layout));
	memset(stats, 0, sizeof(*stats));
	*reason = SRC_PKG_OK;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*reason = SRC_PKG_E_IO;
		return sym_error_set(err, SYM_E_IO, "cannot stat");
	}
	sym_errc rc = src_pkg_locate(fd, (uint64_t)st.st_size, layout, reason, err);
	if (!rc)
		rc = read_xz(fd, layout, lim, reason, err);
	if (rc)
		return rc;
	scan s = {.lim = lim, .fn = fn, .arg = arg, .stats = stats, .err = err, .fd = fd,
		  .layout = layout};
	s.max_usize = layout->payload_size * lim->max_ratio;
	s.deadline_ms = base_mono_ms() + lim->max_ms;
	link_map_init(&s.links);
	base_buf_init(&s.probe_buf, SIZE_MAX); /* the probe's sizes are checked against max_probe */
	if ((rc = src_pkg_stream_open(fd, layout, &s.st, &s.a, err))) {
		/* libarchive read the first header already: say which failure it was. */
		*reason = err && strstr(err->msg, "runcated") ? SRC_PKG_E_TRUNCATED
							   : SRC_PKG_E_BAD_CONTAINER;
		link_map_deinit(&s.links);
		return rc;
	}
	rc = scan_entries(&s);
	stats->blocks_decoded += src_pkg_stream_blocks(s.st);
	*reason = rc ? s.reason : SRC_PKG_OK;
	scan_deinit(&s);
	return rc;
}
