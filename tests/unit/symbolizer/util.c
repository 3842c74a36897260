// SPDX-License-Identifier: Apache-2.0
/*
 * util: fixture and ELF helpers for the symbolizer unit tests (see util.h).
 */
#include "util.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_index.h"
#include "test.h"

int find_section(const uint8_t *img, size_t size, const char *name, uint64_t *shdr_off,
		 uint64_t *offset, uint64_t *len)
{
	Elf64_Ehdr eh;
	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size || eh.e_shstrndx >= eh.e_shnum)
		return -1;
	Elf64_Shdr strsh;
	memcpy(&strsh, img + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof(strsh));
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		uint64_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
		memcpy(&sh, img + at, sizeof(sh));
		if (strsh.sh_offset + sh.sh_name >= size)
			continue;
		if (strcmp((const char *)img + strsh.sh_offset + sh.sh_name, name) == 0) {
			*shdr_off = at;
			*offset = sh.sh_offset;
			*len = sh.sh_size;
			return 0;
		}
	}
	return -1;
}

void *build_blob(const uint8_t *img, size_t size, uint64_t cap, size_t *blob_size, int *rc,
		 char *msg, size_t msg_size)
{
	sym_build_options o = {.max_decompressed_bytes = cap, .threads = 1};
	void *blob = NULL;
	sym_error err = {0};
	*rc = sym_index_build(img, size, &o, &blob, blob_size, &err);
	if (msg)
		snprintf(msg, msg_size, "%s", *rc ? err.msg : "");
	return blob;
}
