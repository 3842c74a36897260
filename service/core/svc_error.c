// SPDX-License-Identifier: Apache-2.0
/*
 * svc_error: the service's error codes and their table (svc_error.h).
 */
#include "service/core/svc_error.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int http;
} connect_codes[SVC_CONNECT_N_CODES] = {
	[SVC_CONNECT_OK] = {"ok", 200},
	[SVC_CONNECT_CANCELED] = {"canceled", 499},
	[SVC_CONNECT_UNKNOWN] = {"unknown", 500},
	[SVC_CONNECT_INVALID_ARGUMENT] = {"invalid_argument", 400},
	[SVC_CONNECT_DEADLINE_EXCEEDED] = {"deadline_exceeded", 504},
	[SVC_CONNECT_NOT_FOUND] = {"not_found", 404},
	[SVC_CONNECT_ALREADY_EXISTS] = {"already_exists", 409},
	[SVC_CONNECT_PERMISSION_DENIED] = {"permission_denied", 403},
	[SVC_CONNECT_RESOURCE_EXHAUSTED] = {"resource_exhausted", 429},
	[SVC_CONNECT_FAILED_PRECONDITION] = {"failed_precondition", 400},
	[SVC_CONNECT_ABORTED] = {"aborted", 409},
	[SVC_CONNECT_OUT_OF_RANGE] = {"out_of_range", 400},
	[SVC_CONNECT_UNIMPLEMENTED] = {"unimplemented", 501},
	[SVC_CONNECT_INTERNAL] = {"internal", 500},
	[SVC_CONNECT_UNAVAILABLE] = {"unavailable", 503},
	[SVC_CONNECT_DATA_LOSS] = {"data_loss", 500},
	[SVC_CONNECT_UNAUTHENTICATED] = {"unauthenticated", 401},
};

static const struct {
	const char *name;
	svc_connect_code connect;
	int http;   /* 0: the Connect code's own status */
} table[SVC_E_N_CODES] = {
	[SVC_OK] = {"ok", SVC_CONNECT_OK, 0},
	[SVC_E_INVALID] = {"invalid", SVC_CONNECT_INVALID_ARGUMENT, 0},
	[SVC_E_NOT_FOUND] = {"not_found", SVC_CONNECT_NOT_FOUND, 0},
	[SVC_E_UNIMPLEMENTED] = {"unimplemented", SVC_CONNECT_UNIMPLEMENTED, 0},
	[SVC_E_METHOD] = {"method_not_allowed", SVC_CONNECT_UNIMPLEMENTED, 405},
	[SVC_E_MEDIA_TYPE] = {"unsupported_media_type", SVC_CONNECT_UNIMPLEMENTED, 415},
	[SVC_E_TOO_LARGE] = {"too_large", SVC_CONNECT_RESOURCE_EXHAUSTED, 0},
	[SVC_E_OVERLOADED] = {"overloaded", SVC_CONNECT_RESOURCE_EXHAUSTED, 0},
	[SVC_E_UNAUTHENTICATED] = {"unauthenticated", SVC_CONNECT_UNAUTHENTICATED, 0},
	[SVC_E_NOMEM] = {"out_of_memory", SVC_CONNECT_RESOURCE_EXHAUSTED, 0},
	[SVC_E_DEADLINE] = {"deadline_exceeded", SVC_CONNECT_DEADLINE_EXCEEDED, 0},
	[SVC_E_SHUTTING_DOWN] = {"shutting_down", SVC_CONNECT_UNAVAILABLE, 0},
	[SVC_E_UPSTREAM] = {"upstream", SVC_CONNECT_UNAVAILABLE, 0},
	[SVC_E_BAD_FILE] = {"bad_file", SVC_CONNECT_FAILED_PRECONDITION, 0},
	[SVC_E_NO_SYMBOLS] = {"no_symbols", SVC_CONNECT_FAILED_PRECONDITION, 0},
	[SVC_E_STORE] = {"store", SVC_CONNECT_INTERNAL, 0},
	[SVC_E_NO_SPACE] = {"no_space", SVC_CONNECT_RESOURCE_EXHAUSTED, 507},
	[SVC_E_IO] = {"io", SVC_CONNECT_INTERNAL, 0},
	[SVC_E_INTERNAL] = {"internal", SVC_CONNECT_INTERNAL, 0},
};

const char *svc_connect_code_name(svc_connect_code code)
{
	return (unsigned)code < SVC_CONNECT_N_CODES ? connect_codes[code].name : "unknown";
}

int svc_connect_http_status(svc_connect_code code)
{
	return (unsigned)code < SVC_CONNECT_N_CODES ? connect_codes[code].http : 500;
}

const char *svc_errc_name(svc_errc code)
{
	return (unsigned)code < SVC_E_N_CODES ? table[code].name : "unknown";
}

svc_connect_code svc_errc_connect(svc_errc code)
{
	return (unsigned)code < SVC_E_N_CODES ? table[code].connect : SVC_CONNECT_INTERNAL;
}

int svc_errc_http_status(svc_errc code)
{
	if ((unsigned)code >= SVC_E_N_CODES)
		return 500;
	return table[code].http ? table[code].http : svc_connect_http_status(table[code].connect);
}

svc_errc svc_error_vset(svc_error *err, svc_errc code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code;
}

svc_errc svc_error_set(svc_error *err, svc_errc code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	svc_error_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

void svc_error_prefix(svc_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	char prefix[SVC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	char old[SVC_ERROR_MSG_MAX];
	memcpy(old, err->msg, sizeof(old));
	/* Cut at the end of the buffer: the message's head says the most. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old) < 0)
		err->msg[0] = '\0';
}

static svc_errc from_sym_code(sym_errc c)
{
	switch (c) {
	case SYM_OK: return SVC_OK;
	case SYM_E_NOMEM: return SVC_E_NOMEM;
	case SYM_E_INVALID: return SVC_E_INVALID;
	case SYM_E_TOO_LARGE: return SVC_E_TOO_LARGE;
	case SYM_E_NO_SYMBOLS: return SVC_E_NO_SYMBOLS;
	case SYM_E_IO: return SVC_E_IO;
	case SYM_E_BAD_ELF:
	case SYM_E_BAD_DWARF:
	case SYM_E_UNSUPPORTED:
	case SYM_E_BAD_INDEX:
	case SYM_E_MISSING_ALT: return SVC_E_BAD_FILE;
	}
	return SVC_E_INTERNAL;
}

svc_errc svc_error_from_sym(svc_error *err, const sym_error *from, const char *what)
{
	svc_errc code = from_sym_code(from->code);
	if (what)
		return svc_error_set(err, code, "%s: %s", what, from->msg);
	return svc_error_set(err, code, "%s", from->msg);
}

svc_errc svc_error_from_stor(svc_error *err, stor_errc code, const stor_error *from,
			     const char *what)
{
	svc_errc c = code == STOR_OK ? SVC_OK
		     : code == STOR_E_NOMEM ? SVC_E_NOMEM
		     : code == STOR_E_TOO_LARGE ? SVC_E_TOO_LARGE
		     : code == STOR_E_NOT_FOUND ? SVC_E_NOT_FOUND
		     : code == STOR_E_INVALID ? SVC_E_INVALID
		     : code == STOR_E_NOSPACE ? SVC_E_NO_SPACE
					     : SVC_E_STORE;
	const char *msg = from ? from->msg : stor_errc_name(code);
	if (what)
		return svc_error_set(err, c, "%s: %s", what, msg);
	return svc_error_set(err, c, "%s", msg);
}
