/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_gzip: gzip of responses (whole buffer), by either of two libraries:
 * ISA-L's igzip (the default: at its level 1 about 2.5 times libdeflate's
 * level 1 speed on a SymbolizeResponse here, for a stream a few percent
 * larger; its level 0, the default, is faster still) or libdeflate
 * (--gzip-library libdeflate), each at a level of its own (--gzip-level). Each thread keeps its own state
 * (made at its first use, freed when it ends), so any thread may compress.
 * Inflating requests is svc_gunzip's (svc_connect.h), with zlib.
 */
#ifndef SVC_GZIP_H
#define SVC_GZIP_H

#include <stdbool.h>
#include <stddef.h>

struct evbuffer;

typedef enum svc_gzip_library {
	SVC_GZIP_ISAL = 0,      /* ISA-L igzip, levels 0 to 3 */
	SVC_GZIP_LIBDEFLATE,    /* libdeflate, levels 1 to 12 */
} svc_gzip_library;

/* The library's own default level: ISA-L 0, libdeflate 1. */
#define SVC_GZIP_LEVEL_DEFAULT (-1)

/* "isal" or "libdeflate"; false for anything else. */
bool svc_gzip_library_parse(const char *name, svc_gzip_library *lib);
const char *svc_gzip_library_name(svc_gzip_library lib);

/* Is level one lib has (or SVC_GZIP_LEVEL_DEFAULT)? */
bool svc_gzip_level_ok(svc_gzip_library lib, int level);

/* The level svc_gzip_with uses for level (SVC_GZIP_LEVEL_DEFAULT: lib's default). */
int svc_gzip_level(svc_gzip_library lib, int level);

/*
 * Deflates in (in_size bytes) into one gzip member appended to buf, with lib
 * at level (svc_gzip_level_ok; ISA-L falls back to libdeflate level 1 for an
 * input past 4 GiB). False when out of memory.
 */
bool svc_gzip_with(svc_gzip_library lib, int level, const void *in, size_t in_size,
		   struct evbuffer *buf);

/* svc_gzip_with the default library (ISA-L) at its default level. */
bool svc_gzip(const void *in, size_t in_size, struct evbuffer *buf);

#endif
