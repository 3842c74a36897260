/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_response: builds and encodes a SymbolizeResponse.
 *
 * svc_lookup fills it a location at a time (svc_response_frames), from
 * frames as numbers (sym_frame_ids): each frame becomes a Line, and the
 * function table and the string table are kept free of repeats (a function
 * entry per (index, function, file of the line), named from the index when
 * first met; each distinct string once, found by address inside one index
 * blob and by content across blobs). Each
 * table entry and each LocationResult is encoded as it is made (to protobuf
 * bytes, or to JSON text for a JSON call: svc_response_json.h), into one
 * section per repeated field; svc_response_take() adds the MappingResults
 * and hands the sections over as they are, with no copy joining them. The
 * bytes are exactly those protobuf-c packs for the same message
 * (test_svc_response checks this), without protobuf-c's per-message structs
 * and reflective packing; the JSON, the codec's (test_svc_response_json).
 *
 * Seen functions and strings are found by their dense ordinals in the index
 * (the function_id of a frame; a string's svc_string_rank ordinal, read from
 * the index's records of its functions' and files' names) in arrays of
 * slots, else (an index without ordinals, a function met at a second file)
 * in hash tables keyed by ids and addresses. The slots, hash tables and
 * sections live in svc_response_tables (svc_response_tables.c), which are
 * reused from call to call (a generation stamp empties a table in O(1)); a
 * svc_response_pool hands one to each call in progress, on any thread.
 */
#ifndef SVC_RESPONSE_H
#define SVC_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "service/resolve/svc_string_rank.h"
#include "service/rpc/svc_rpc_json.h"
#include "symbolizer/sym_index.h"

/* Lines (inline frames) a location may have. */
#define SVC_RESPONSE_MAX_LINES 128

typedef struct svc_response_tables svc_response_tables;
typedef struct svc_response_pool svc_response_pool;

svc_response_pool *svc_response_pool_create(void);
void svc_response_pool_destroy(svc_response_pool *p);

/* What a MappingResult says. */
typedef struct svc_response_mapping {
	int status;              /* Symbolizer__V1__MappingResult__Status */
	const char *error;       /* "" none */
	uint32_t retry_after_ms;
	uint32_t flags;          /* SYM_INDEX_HAS_* of the index; 0 without one */
} svc_response_mapping;

typedef struct svc_response {
	svc_response_pool *pool;
	svc_response_tables *t;
	size_t budget;           /* bytes the tables may grow by in this call */
	size_t n_locations;
	size_t next_location;    /* svc_response_frames() calls so far */
	const svc_rpc_json *json;  /* NULL: protobuf; else the message's JSON as this
				    * codec writes it (svc_response_json.h) */
	unsigned n_entries;      /* distinct indexes seen (svc_response_entry) */
	bool no_demangle;
	bool oom;                /* a table hit the budget or memory ran out */
} svc_response;

/*
 * Starts a response of n_locations locations (pool may be NULL: private
 * tables), written in protobuf, or in JSON as json (the SymbolizeResponse's
 * codec) writes the same message when json is not NULL. budget bounds the
 * memory the tables may take in this call. False when out of memory.
 */
bool svc_response_begin(svc_response *r, svc_response_pool *pool, size_t n_locations,
			bool no_demangle, const svc_rpc_json *json, size_t budget);
/* Gives the tables back to the pool (or frees them); also after a failed begin. */
void svc_response_end(svc_response *r);

/*
 * A small number for an index blob, the same for every mapping that uses it
 * (entry: its key, such as its cache entry). index names the functions and
 * files of its frames (sym_frame_ids). strings (the index's string
 * ordinals, svc_index_entry.strings; NULL: none) and n_functions (its
 * sym_index_info.n_functions) give it dense tables: an array slot per
 * function and per string, stamped with the call's generation, instead of
 * hashing their keys (taken when they fit the budget and pay off for the
 * call's number of locations; the bytes of the response are the same either
 * way). Every index of the call is entered before its first location
 * (svc_response_frames): a string met while the call had one index is not
 * matched by content with a later index's, so it may be repeated.
 */
uint32_t svc_response_entry(svc_response *r, const void *entry, const sym_index *index,
			    const svc_string_rank *strings, uint32_t n_functions);

/*
 * The next location's LocationResult, encoded straight into the response:
 * the Lines of frames f of the index numbered entry (n of them, innermost
 * first; no_inline: one Line, at f[0]'s line, of the outermost function
 * f[n - 1]), then address, its normalized_address (0: none). Each Line's
 * function goes through the function table: one Function entry per (index,
 * function, file of the line; SYM_INDEX_NO_FUNCTION: unknown), named from
 * the index when first met. More than SVC_RESPONSE_MAX_LINES lines, or a
 * table out of budget, sets r->oom.
 */
void svc_response_frames(svc_response *r, uint32_t entry, const sym_frame_ids *f, size_t n,
			 bool no_inline, uint64_t address);

/* svc_response_frames for count locations in a row, in one call: location
 * k's are entry[k], f + first[k], n[k] and address[k] (it stops early once
 * r->oom is set). */
void svc_response_frames_batch(svc_response *r, size_t count, const uint32_t *entry,
			       const sym_frame_ids *f, const uint32_t *first, const uint32_t *n,
			       bool no_inline, const uint64_t *address);

/* Bytes of an encoded response, handed over: malloc'ed, the caller's to free(). */
typedef struct svc_response_piece {
	uint8_t *data;
	size_t len;
} svc_response_piece;

/* The most pieces a response is handed over in. */
#define SVC_RESPONSE_PIECES 3

/*
 * Ends the response (the locations not yet given end empty), adds the
 * MappingResults of maps, and hands the encoded SymbolizeResponse over in
 * pieces: out[0, returned) in order are its bytes (the tables' sections as
 * they were built, not copied: each section takes a new allocation as large
 * for the next call). 0 when r->oom is set (before, or by the
 * MappingResults' room).
 */
size_t svc_response_take(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
			 svc_response_piece out[SVC_RESPONSE_PIECES]);

#endif
