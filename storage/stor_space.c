// SPDX-License-Identifier: Apache-2.0
/*
 * stor_space: the disk under the store. Before a write, the file system's free
 * space is checked (statvfs): a write that would leave less than a margin is
 * refused here, before RocksDB sees ENOSPC and stops all writes. A write that
 * fails for space all the same (another process filled the disk) puts the
 * store in the same "disk full" state. In that state reads go on, writes are
 * refused with a clear message, the condition is logged once and exported
 * (symbolizer_store_disk_full); every few seconds a write looks again, and
 * once there is room RocksDB's stop on writes is lifted (DB::Resume) and
 * writing resumes. A store opened read-only on a full disk stays so until a
 * restart.
 *
 * A write is admitted only when the disk can take it whole: RocksDB writes a
 * value twice before it gives any room back (into the WAL, then into the blob
 * or table file its flush writes, before that WAL is dropped), so a write of
 * N bytes needs 2N free beside the margin. A write that does not fit while
 * smaller ones would is refused alone (STOR_E_NOSPACE: "507" to an upload) and
 * the store stays writable; only a disk below the margin is "full". Admitting
 * a 150 MB write with 200 MB free used to leave RocksDB's flush without room,
 * and every later write failed.
 *
 * stor_space_disk_bytes() measures the data dir as `du --apparent-size` does
 * (every file: tables, blob files, WAL, MANIFEST, obsolete files; not the
 * space RocksDB preallocates for its WAL and MANIFEST, given back at close).
 */
#include "storage/stor_db.h"
#include "storage/stor_db_impl.h"
#include "storage/stor_meta.h"
#include "storage/stor_shim.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "base/base_clock.h"
#include "base/base_log.h"

#define RECHECK_MS 2000
#define WRITE_COPIES 2  /* the WAL's copy, then the flushed file's */

/* Bytes a write must leave free: a 32nd of the file system, 1 MiB to 64 MiB
 * (memtable flushes and compactions need room of their own). */
static uint64_t margin(const struct statvfs *v)
{
	uint64_t total = (uint64_t)v->f_blocks * v->f_frsize;
	uint64_t m = total / 32;
	return m < (1u << 20) ? (1u << 20) : m > (64u << 20) ? (64u << 20) : m;
}

static bool free_bytes(stor_db *db, uint64_t *avail, uint64_t *need_margin)
{
	struct statvfs v;
	if (statvfs(db->path, &v) != 0)
		return false;
	*avail = (uint64_t)v.f_bavail * v.f_frsize;
	*need_margin = margin(&v);
	return true;
}

static void set_full(stor_db *db, const char *why)
{
	if (!db->disk_full) {
		char q[300];
		base_logf(BASE_LOG_ERROR, "store disk full: writes refused, reads go on", "dir=%s why=%s",
			  db->path, base_log_quote(q, sizeof(q), why));
	}
	db->disk_full = true;
	db->disk_checked_ms = base_mono_ms();
}

stor_errc stor_space_admit(stor_db *db, uint64_t incoming, stor_error *err)
{
	if (db->read_only) {
		stor_set_err(err, STOR_E_IO, "store disk full: the store was opened read-only on a "
			     "full disk (%s); restart once there is room", db->path);
		db->write_errors++;
		return STOR_E_IO;
	}
	int64_t now = base_mono_ms();
	if (db->disk_full && now - db->disk_checked_ms < RECHECK_MS) {
		stor_set_err(err, STOR_E_IO, "store disk full (%s): write refused; retried when "
			     "space is back", db->path);
		db->write_errors++;
		return STOR_E_IO;
	}
	uint64_t avail, need;
	if (!free_bytes(db, &avail, &need))
		return db->disk_full ? STOR_E_IO : STOR_OK; /* cannot tell: let RocksDB say */
	if (avail < need) {
		char why[160];
		snprintf(why, sizeof(why), "%" PRIu64 " bytes free, below the margin of %" PRIu64,
			 avail, need);
		set_full(db, why);
		stor_set_err(err, STOR_E_IO, "store disk full (%s): %s", db->path, why);
		db->write_errors++;
		return STOR_E_IO;
	}
	if (incoming > (avail - need) / WRITE_COPIES) {
		stor_set_err(err, STOR_E_NOSPACE,
			     "store %s: a write of %" PRIu64 " bytes needs %" PRIu64 " free (the WAL, "
			     "then the flushed file) and a margin of %" PRIu64 "; %" PRIu64 " are free",
			     db->path, incoming, incoming * WRITE_COPIES, need, avail);
		db->space_refused++;
		return STOR_E_NOSPACE;
	}
	if (db->disk_full) {
		char *rerr = stor_shim_resume(db->db);
		if (rerr) {
			db->disk_checked_ms = now;
			stor_set_err(err, STOR_E_IO, "store disk full (%s): resuming writes: %s",
				     db->path, rerr);
			free(rerr);
			db->write_errors++;
			return STOR_E_IO;
		}
		db->disk_full = false;
		base_logf(BASE_LOG_INFO, "store disk has room again, writes resumed",
			  "dir=%s free_bytes=%" PRIu64, db->path, avail);
	}
	return STOR_OK;
}

stor_errc stor_space_write_failed(stor_db *db, char *rerr, stor_error *err, const char *what)
{
	db->write_errors++;
	if (rerr && (strstr(rerr, "No space left") || strstr(rerr, "NoSpace") ||
		     strstr(rerr, "no space"))) {
		set_full(db, rerr);
		stor_errc rc = stor_set_err(err, STOR_E_IO, "store disk full (%s): %s: %s", db->path,
					    what, rerr);
		free(rerr);
		return rc;
	}
	return stor_rocks_err(err, rerr, what);
}

/* du of dir: the bytes of its files, two levels of subdirectories. */
static uint64_t du(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	uint64_t sum = 0;
	char path[4096];
	for (struct dirent *de; (de = readdir(d)) != NULL;) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < 2)
				sum += du(path, depth + 1);
		} else {
			sum += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	return sum;
}

uint64_t stor_space_disk_bytes(stor_db *db)
{
	return du(db->path, 0);
}

void stor_space_refresh(stor_db *db)
{
	int64_t now = base_mono_ms();
	if (!db->max_bytes || (db->disk_measured_ms && now - db->disk_measured_ms < RECHECK_MS))
		return;
	db->disk_measured_ms = now;
	uint64_t disk = du(db->path, 0);
	/* RocksDB's own small files (MANIFEST, OPTIONS, metadata tables) are
	 * the slack; the WAL and files not yet collected are what is counted. */
	uint64_t slack = 4u << 20;
	uint64_t over = disk > db->bytes + slack ? disk - db->bytes - slack : 0;
	db->disk_overhead = over < db->max_bytes / 2 ? over : db->max_bytes / 2;
}
