/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_file_write: the one decision every write of a file for an identity
 * goes through, whatever its route (an upload, a debug dir, a package, an
 * upstream download): the new file is ranked against the file the store
 * holds (executable < debug file without lines < debug file with lines) and
 * written only when it is better, or forced (an upload's ?force=1). The
 * compare and the write are one step per identity across the process: the
 * identity is reserved from the look at the held file to the end of the
 * write (a reservation in its striped slot; another writer of the same
 * identity waits for it), so an upload made while a download of the same ID
 * is in flight is never replaced by it (issue 25, item 3). The slot's lock
 * is held only for the look and for the store's write: a write to the S3
 * tier between them (an upload's, svc_file_decide then svc_file_commit,
 * issue 30) holds the identity, not 1/64 of them. Worker threads; never the
 * loop (the held file may be read to rank it).
 */
#ifndef SVC_FILE_WRITE_H
#define SVC_FILE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/stor_db.h"
#include "symbolizer/sym_build_id.h"
#include "symbolizer/sym_elf.h"

typedef enum svc_file_rank {
	SVC_RANK_NONE = 0,       /* nothing held */
	SVC_RANK_EXECUTABLE,     /* an executable without DWARF */
	SVC_RANK_NO_LINES,       /* a debug file without a line table */
	SVC_RANK_LINES,          /* a debug file with one */
} svc_file_rank;

/* "nothing", "an executable without DWARF", ... (for answers and logs). */
const char *svc_file_rank_name(svc_file_rank r);

/* The rank of a checked file of kind (its probe's info). */
svc_file_rank svc_file_rank_of(stor_kind kind, const sym_elf_info *info);

typedef enum svc_file_verdict {
	SVC_FILE_WRITTEN = 0,    /* stored (nothing was held, or it was worse, or forced) */
	SVC_FILE_SAME,           /* the store holds these very bytes: nothing written */
	SVC_FILE_KEPT,           /* the store holds a file as good or better: nothing written */
	SVC_FILE_FAILED,         /* the store failed (*err; its code says how: NOSPACE, ...) */
	SVC_FILE_REFUSED,        /* the before hook said no: nothing written (it says why) */
} svc_file_verdict;

/* Called once the write is decided, before the store's, with the identity
 * reserved but no lock held. False: nothing is written. */
typedef bool (*svc_file_before_fn)(void *arg, const stor_meta *meta);

typedef struct svc_file_outcome {
	svc_file_verdict verdict;
	svc_file_rank held;      /* what the store held before (NONE: nothing) */
	svc_file_rank offered;   /* the new file's */
	bool held_debuginfo;     /* the held file was a debug file */
	stor_errc stored;        /* FAILED: the store's code */
} svc_file_outcome;

/*
 * Writes data (size bytes, already checked: src_check_file) as id's file
 * with meta (kind, source, alt) when it ranks above the held file, or force.
 * A forced executable over held debug info deletes the entry first (the
 * store never lets an executable replace debug info by itself).
 */
void svc_file_write(stor_db *store, const sym_build_id *id, stor_meta *meta, const void *data,
		    size_t size, const sym_elf_info *info, bool force, svc_file_before_fn before,
		    void *before_arg, svc_file_outcome *out, stor_error *err);

/* An identity reserved for a decided write (caller-owned, e.g. in an
 * upload): from svc_file_decide to svc_file_commit or svc_file_release. */
typedef struct svc_file_reservation {
	struct svc_file_reservation *next;
	sym_build_id id;
	unsigned slot;
	stor_meta meta;          /* what commit writes */
	svc_file_outcome out;    /* the decision */
} svc_file_reservation;

/* The longest a writer waits for another's reservation of the same
 * identity (an upload's S3 write): then it fails (STOR_E_IO, "busy"). */
#define SVC_FILE_WAIT_MS 120000

/*
 * The decision of svc_file_write without the write: true when the file is
 * to be written, with id reserved in *res (every other writer of id waits
 * until svc_file_commit or svc_file_release); false with the verdict in
 * *out (SAME, KEPT, FAILED) and nothing reserved.
 */
bool svc_file_decide(stor_db *store, const sym_build_id *id, const stor_meta *meta,
		     const void *data, size_t size, const sym_elf_info *info, bool force,
		     svc_file_reservation *res, svc_file_outcome *out, stor_error *err);
/* Writes the decided file (res->meta) and ends the reservation; *out the
 * decision with the verdict WRITTEN or FAILED. */
void svc_file_commit(stor_db *store, svc_file_reservation *res, const void *data, size_t size,
		     svc_file_outcome *out, stor_error *err);
/* Ends a reservation without writing (the S3 write failed). */
void svc_file_release(svc_file_reservation *res);

#endif
