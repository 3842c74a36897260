// SPDX-License-Identifier: Apache-2.0
/*
 * mapping_status: MappingResult.Status values as symbolctl prints them (see
 * mapping_status.h); the order is the proto's.
 */
#include "cmd/symbolctl/mapping_status.h"

const char *mapping_status_name(int s)
{
	static const char *const names[] = {"unspecified", "ok",      "not_found",  "pending",
					    "error",       "no_symbols", "invalid", "too_large"};
	return s >= 0 && s < 8 ? names[s] : "unknown";
}
