/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_gzip: gzip of responses (whole buffer, level 1), by either of two
 * libraries: ISA-L's igzip (the default: about 2.5 times libdeflate's speed
 * on a SymbolizeResponse here, for a stream a few percent larger) or
 * libdeflate (--gzip-library libdeflate). Each thread keeps its own state
 * (made at its first use, freed when it ends), so any thread may compress.
 * Inflating requests is svc_gunzip's (svc_connect.h), with zlib.
 */
#ifndef SVC_GZIP_H
#define SVC_GZIP_H

#include <stdbool.h>
#include <stddef.h>

struct evbuffer;

typedef enum svc_gzip_library {
	SVC_GZIP_ISAL = 0,      /* ISA-L igzip, level 1 */
	SVC_GZIP_LIBDEFLATE,    /* libdeflate, level 1 */
} svc_gzip_library;

/* "isal" or "libdeflate"; false for anything else. */
bool svc_gzip_library_parse(const char *name, svc_gzip_library *lib);
const char *svc_gzip_library_name(svc_gzip_library lib);

/*
 * Deflates in (in_size bytes) into one gzip member appended to buf, with lib
 * (ISA-L falls back to libdeflate for an input past 4 GiB). False when out
 * of memory.
 */
bool svc_gzip_with(svc_gzip_library lib, const void *in, size_t in_size, struct evbuffer *buf);

/* svc_gzip_with the default library (ISA-L). */
bool svc_gzip(const void *in, size_t in_size, struct evbuffer *buf);

#endif
