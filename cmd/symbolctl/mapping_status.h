/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mapping_status: the names symbolctl prints for a MappingResult status of the
 * Symbolize RPC (ok, not_found, pending, error, no_symbols, invalid, too_large).
 */
#ifndef SYMBOLCTL_MAPPING_STATUS_H
#define SYMBOLCTL_MAPPING_STATUS_H

const char *mapping_status_name(int status);

#endif
