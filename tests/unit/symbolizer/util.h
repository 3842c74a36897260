/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util: helpers shared by the symbolizer unit tests (fixtures are read with
 * test.h's test_read_fixture): locating sections in an ELF image for surgical corruption.
 */
#ifndef TEST_SYM_UTIL_H
#define TEST_SYM_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Finds a section by name in a 64-bit ELF image: its header offset in the image. */
int find_section(const uint8_t *img, size_t size, const char *name, uint64_t *shdr_off,
		 uint64_t *offset, uint64_t *len);

/* Builds an index; returns the blob (malloc'ed) or NULL and the code in *rc. */
void *build_blob(const uint8_t *img, size_t size, uint64_t cap, size_t *blob_size, int *rc,
		 char *msg, size_t msg_size);

#endif
