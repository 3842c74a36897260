// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod_section: finds a section by name in an ELF image held in
 * memory (after sym_inflate_image, so compressed sections are already
 * inflated), for /buildid/ID/section/NAME. Bounds-checked; reads nothing
 * outside [data, data + size).
 */
#include "service/debuginfod/svc_debuginfod_impl.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

typedef struct shdr {
	uint32_t name, type;
	uint64_t flags, offset, size;
} shdr;

static bool in_range(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static bool read_shdr(const unsigned char *d, size_t size, bool is64, uint64_t off, shdr *out)
{
	if (is64) {
		Elf64_Shdr s;
		if (!in_range(size, off, sizeof(s)))
			return false;
		memcpy(&s, d + off, sizeof(s));
		*out = (shdr){s.sh_name, s.sh_type, s.sh_flags, s.sh_offset, s.sh_size};
	} else {
		Elf32_Shdr s;
		if (!in_range(size, off, sizeof(s)))
			return false;
		memcpy(&s, d + off, sizeof(s));
		*out = (shdr){s.sh_name, s.sh_type, s.sh_flags, s.sh_offset, s.sh_size};
	}
	return true;
}

/* Host byte order only (the daemon serves what it can symbolize). */
static bool header(const unsigned char *d, size_t size, bool *is64, uint64_t *shoff,
		   uint64_t *shentsize, uint64_t *shnum, uint64_t *shstrndx)
{
	if (size < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) != 0)
		return false;
	*is64 = d[EI_CLASS] == ELFCLASS64;
	if (*is64) {
		Elf64_Ehdr e;
		if (size < sizeof(e))
			return false;
		memcpy(&e, d, sizeof(e));
		*shoff = e.e_shoff, *shentsize = e.e_shentsize, *shnum = e.e_shnum;
		*shstrndx = e.e_shstrndx;
	} else {
		Elf32_Ehdr e;
		if (d[EI_CLASS] != ELFCLASS32 || size < sizeof(e))
			return false;
		memcpy(&e, d, sizeof(e));
		*shoff = e.e_shoff, *shentsize = e.e_shentsize, *shnum = e.e_shnum;
		*shstrndx = e.e_shstrndx;
	}
	return *shentsize >= (*is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) &&
	       *shnum < 65536 && in_range(size, *shoff, *shnum * *shentsize);
}

bool svc_debuginfod_find_section(const void *data, size_t size, const char *name,
				 const void **out, size_t *out_size)
{
	const unsigned char *d = data;
	bool is64;
	uint64_t shoff, shentsize, shnum, shstrndx;
	shdr strtab, s;
	if (!header(d, size, &is64, &shoff, &shentsize, &shnum, &shstrndx) || shstrndx >= shnum ||
	    !read_shdr(d, size, is64, shoff + shstrndx * shentsize, &strtab) ||
	    !in_range(size, strtab.offset, strtab.size))
		return false;
	size_t want = strlen(name);
	for (uint64_t i = 1; i < shnum; i++) {
		if (!read_shdr(d, size, is64, shoff + i * shentsize, &s))
			return false;
		if (s.name >= strtab.size || strtab.size - s.name < want + 1)
			continue;
		const char *n = (const char *)d + strtab.offset + s.name;
		if (memcmp(n, name, want) != 0 || n[want] != '\0')
			continue;
		if (s.type == SHT_NOBITS || (s.flags & SHF_COMPRESSED) ||
		    !in_range(size, s.offset, s.size))
			return false;
		*out = d + s.offset;
		*out_size = (size_t)s.size;
		return true;
	}
	return false;
}
