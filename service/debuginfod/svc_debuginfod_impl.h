/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_debuginfod_impl: shared between the files of service/debuginfod/ only.
 */
#ifndef SVC_DEBUGINFOD_IMPL_H
#define SVC_DEBUGINFOD_IMPL_H

#include <stdbool.h>
#include <stddef.h>

/* Section bytes of an ELF image (svc_debuginfod_section.c): *out points into
 * data; false when absent, SHT_NOBITS, still compressed, or malformed. */
bool svc_debuginfod_find_section(const void *data, size_t size, const char *name,
				 const void **out, size_t *out_size);

#endif
