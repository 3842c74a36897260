/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_error: the error object of the symbolizer library.
 *
 * Fallible functions return a sym_errc and, when given a sym_error, fill it with
 * a message that names what failed ("libdw: invalid DWARF", "index: truncated
 * string table"). The object is a fixed-size value: reporting an error never
 * allocates, so it works when memory is what ran out.
 */
#ifndef SYM_ERROR_H
#define SYM_ERROR_H

#include <stdarg.h>

typedef enum sym_errc {
	SYM_OK = 0,
	SYM_E_NOMEM,         /* allocation failed */
	SYM_E_INVALID,       /* bad argument from the caller */
	SYM_E_BAD_ELF,       /* not an ELF file, or a malformed one */
	SYM_E_BAD_DWARF,     /* DWARF that libdw or we refuse */
	SYM_E_UNSUPPORTED,   /* valid but not handled (class, byte order, compression) */
	SYM_E_TOO_LARGE,     /* past a size cap (decompression, counts) */
	SYM_E_NO_SYMBOLS,    /* neither DWARF nor a symbol table */
	SYM_E_BAD_INDEX,     /* index blob truncated, corrupt, or of another version */
	SYM_E_MISSING_ALT,   /* dwz supplementary file needed but not supplied */
	SYM_E_IO,            /* reading or writing a file failed */
} sym_errc;

#define SYM_ERROR_MSG_MAX 256

typedef struct sym_error {
	sym_errc code;
	char msg[SYM_ERROR_MSG_MAX];
} sym_error;

/* Sets *err (when err is not NULL) and returns code, for `return sym_error_set(...)`. */
sym_errc sym_error_set(sym_error *err, sym_errc code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with "what: " (context as it propagates up). */
void sym_error_prefix(sym_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A short stable name for a code: "bad_elf", "too_large", ... */
const char *sym_errc_name(sym_errc code);

#endif
