// SPDX-License-Identifier: Apache-2.0
/*
 * sym_error: formatting and naming of symbolizer errors (see sym_error.h).
 */
#include "symbolizer/sym_error.h"

#include <stdio.h>
#include <string.h>

sym_errc sym_error_set(sym_error *err, sym_errc code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

void sym_error_prefix(sym_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	char prefix[SYM_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof(prefix) - 2, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t plen = strlen(prefix);
	memcpy(prefix + plen, ": ", 3);
	plen += 2;
	size_t mlen = strnlen(err->msg, sizeof(err->msg) - 1);
	if (plen + mlen >= sizeof(err->msg))
		mlen = sizeof(err->msg) - 1 - plen;
	memmove(err->msg + plen, err->msg, mlen);
	memcpy(err->msg, prefix, plen);
	err->msg[plen + mlen] = '\0';
}

const char *sym_errc_name(sym_errc code)
{
	switch (code) {
	case SYM_OK: return "ok";
	case SYM_E_NOMEM: return "no_memory";
	case SYM_E_INVALID: return "invalid_argument";
	case SYM_E_BAD_ELF: return "bad_elf";
	case SYM_E_BAD_DWARF: return "bad_dwarf";
	case SYM_E_UNSUPPORTED: return "unsupported";
	case SYM_E_TOO_LARGE: return "too_large";
	case SYM_E_NO_SYMBOLS: return "no_symbols";
	case SYM_E_BAD_INDEX: return "bad_index";
	case SYM_E_MISSING_ALT: return "missing_alt";
	case SYM_E_IO: return "io";
	}
	return "unknown";
}
