/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_build_id: the service's check of a build ID written at its edges (URLs,
 * requests): lowercase hex, even length, 2..128 digits (DESIGN.md).
 */
#ifndef SVC_BUILD_ID_H
#define SVC_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>

#include "symbolizer/sym_build_id.h"

/* Parses hex[0..len) into *out; false unless it is lowercase hex, even, 2..128. */
bool svc_build_id_parse(const char *hex, size_t len, sym_build_id *out);

/* The same for a request's build_id field: NULL when *out is set, else what is
 * wrong with it, for the caller's error (an INVALID mapping, a 400). */
const char *svc_build_id_check(const char *hex, sym_build_id *out);

#endif
