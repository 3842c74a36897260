// SPDX-License-Identifier: Apache-2.0
/*
 * src_note: the GNU build ID (and the Go build-ID string) of an ELF file too
 * large to read whole during a package scan (a 600 MB vmlinux, a 100 MB Go
 * program): its program headers from the first bytes, then the PT_NOTE
 * segment, read as the stream goes by (src_package_impl.h).
 * Every offset is bounds-checked; byte order and class from e_ident.
 */
#include "source/src_package_impl.h"

#include <elf.h>
#include <string.h>

static uint64_t rd(const uint8_t *p, int n, bool be)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

bool src_note_segment(const uint8_t *head, size_t len, uint64_t *off, uint64_t *size)
{
	if (len < 64 || memcmp(head, ELFMAG, SELFMAG))
		return false;
	bool is64 = head[EI_CLASS] == ELFCLASS64, be = head[EI_DATA] == ELFDATA2MSB;
	uint64_t phoff = is64 ? rd(head + 32, 8, be) : rd(head + 28, 4, be);
	uint64_t phentsize = rd(head + (is64 ? 54 : 42), 2, be);
	uint64_t phnum = rd(head + (is64 ? 56 : 44), 2, be);
	if (phentsize < (is64 ? 56u : 32u) || phoff > len || phnum > (len - phoff) / phentsize)
		return false;
	for (uint64_t i = 0; i < phnum; i++) {
		const uint8_t *ph = head + phoff + i * phentsize;
		if (rd(ph, 4, be) != PT_NOTE)
			continue;
		*off = is64 ? rd(ph + 8, 8, be) : rd(ph + 4, 4, be);
		*size = is64 ? rd(ph + 32, 8, be) : rd(ph + 16, 4, be);
		return *size > 0 && *size <= (1u << 20);
	}
	return false;
}

/* The first note of type type whose name is name (namesz bytes with its NUL);
 * its descriptor and size. */
static const uint8_t *note_find(const uint8_t *notes, size_t len, bool be, uint64_t type,
				const char *name, uint64_t namesz, uint64_t *descsz)
{
	size_t pos = 0;
	while (len - pos >= 12) {
		uint64_t nsz = rd(notes + pos, 4, be), dsz = rd(notes + pos + 4, 4, be);
		uint64_t t = rd(notes + pos + 8, 4, be);
		uint64_t name_al = (nsz + 3) & ~3ull, desc_al = (dsz + 3) & ~3ull;
		if (name_al > len - pos - 12 || desc_al > len - pos - 12 - name_al)
			return NULL;
		const uint8_t *n = notes + pos + 12;
		if (t == type && nsz == namesz && !memcmp(n, name, namesz)) {
			*descsz = dsz;
			return n + name_al;
		}
		pos += 12 + name_al + desc_al;
	}
	return NULL;
}

bool src_note_go_build_id(const uint8_t *notes, size_t len, bool be, char *text)
{
	uint64_t dsz = 0;
	/* Go's linker: name "Go" NUL-padded to 4 bytes, type 4 (ELF_NOTE_GOBUILDID_TAG) */
	const uint8_t *d = note_find(notes, len, be, 4, "Go\0\0", 4, &dsz);
	if (!d || dsz == 0 || dsz > SYM_GO_BUILD_ID_TEXT_MAX)
		return false;
	memcpy(text, d, dsz);
	text[dsz] = '\0';
	return true;
}

bool src_note_build_id(const uint8_t *notes, size_t len, bool be, sym_build_id *id)
{
	size_t pos = 0;
	while (len - pos >= 12) {
		uint64_t namesz = rd(notes + pos, 4, be), descsz = rd(notes + pos + 4, 4, be);
		uint64_t type = rd(notes + pos + 8, 4, be);
		uint64_t name_al = (namesz + 3) & ~3ull, desc_al = (descsz + 3) & ~3ull;
		if (name_al > len - pos - 12 || desc_al > len - pos - 12 - name_al)
			return false;
		const uint8_t *name = notes + pos + 12;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) && descsz > 0 &&
		    descsz <= SYM_BUILD_ID_MAX) {
			id->len = (uint8_t)descsz;
			id->kind = SYM_ID_GNU;
			memcpy(id->bytes, name + name_al, descsz);
			return true;
		}
		pos += 12 + name_al + desc_al;
	}
	return false;
}
