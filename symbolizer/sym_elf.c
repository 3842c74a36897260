// SPDX-License-Identifier: Apache-2.0
/*
 * sym_elf: the probe of an ELF image in memory (see sym_elf.h).
 *
 * Everything goes through libelf, which checks section and segment extents
 * against the image size; we add checks on what libelf leaves to the caller
 * (note payload sizes, the .gnu_debugaltlink and .gnu_debuglink layouts).
 */
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_elf_util_impl.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;

static void libelf_init(void)
{
	elf_version(EV_CURRENT);
}

sym_errc sym_elf_begin(const void *data, size_t size, Elf **out, sym_error *err)
{
	pthread_once(&libelf_once, libelf_init);
	*out = NULL;
	if (!data || size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0)
		return sym_error_set(err, SYM_E_BAD_ELF, "not an ELF file");
	Elf *elf = elf_memory((char *)data, size);
	if (!elf)
		return sym_error_set(err, SYM_E_BAD_ELF, "libelf: %s", elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return sym_error_set(err, SYM_E_BAD_ELF, "not an ELF object");
	}
	GElf_Ehdr ehdr;
	if (!gelf_getehdr(elf, &ehdr)) {
		sym_error_set(err, SYM_E_BAD_ELF, "libelf: bad ELF header: %s", elf_errmsg(-1));
		elf_end(elf);
		return SYM_E_BAD_ELF;
	}
	*out = elf;
	return SYM_OK;
}

const char *sym_elf_section_name(Elf *elf, Elf_Scn *scn, GElf_Shdr *shdr)
{
	size_t shstrndx;
	if (!gelf_getshdr(scn, shdr) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	return elf_strptr(elf, shstrndx, shdr->sh_name);
}

/* Scans one block of notes for NT_GNU_BUILD_ID. */
static bool find_build_id_note(Elf_Data *data, sym_build_id *out)
{
	GElf_Nhdr nhdr;
	size_t off = 0, name_off, desc_off, next;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *base = data->d_buf;
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    memcmp(base + name_off, "GNU", 4) == 0 && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= SYM_BUILD_ID_MAX && desc_off + nhdr.n_descsz <= data->d_size) {
			out->len = (uint8_t)nhdr.n_descsz;
			out->kind = SYM_ID_GNU;
			memcpy(out->bytes, base + desc_off, nhdr.n_descsz);
			return true;
		}
		off = next;
	}
	return false;
}

/* .gnu_debugaltlink: a NUL-terminated path, then the build ID bytes. */
static void read_altlink(Elf_Data *data, sym_elf_info *out)
{
	const char *p = data->d_buf;
	size_t n = data->d_size;
	const char *nul = p ? memchr(p, '\0', n) : NULL;
	if (!nul)
		return;
	size_t path_len = (size_t)(nul - p), id_len = n - path_len - 1;
	if (id_len == 0 || id_len > SYM_BUILD_ID_MAX || path_len >= SYM_ELF_ALT_PATH_MAX)
		return;
	memcpy(out->alt_path, p, path_len + 1);
	out->alt_build_id.len = (uint8_t)id_len;
	out->alt_build_id.kind = SYM_ID_GNU;
	memcpy(out->alt_build_id.bytes, nul + 1, id_len);
	out->has_alt = true;
}

/* .gnu_debuglink: a NUL-terminated file name, zero padding to 4 bytes, then
 * the CRC-32 of the debug file in the ELF file's byte order. */
static void read_debuglink(Elf *elf, Elf_Data *data, sym_elf_info *out)
{
	const unsigned char *p = data->d_buf;
	size_t n = data->d_size;
	const unsigned char *nul = p ? memchr(p, '\0', n) : NULL;
	if (!nul || nul == p)
		return;
	size_t name_len = (size_t)(nul - p), crc_off = (name_len + 4) & ~(size_t)3;
	if (name_len >= SYM_ELF_ALT_PATH_MAX || crc_off + 4 > n)
		return;
	const char *ident = elf_getident(elf, NULL);
	const unsigned char *c = p + crc_off;
	bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
	out->debuglink_crc = big ? (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
					   (uint32_t)c[2] << 8 | c[3]
				 : (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 |
					   (uint32_t)c[1] << 8 | c[0];
	memcpy(out->debuglink, p, name_len + 1);
	out->has_debuglink = true;
}

static void probe_sections(Elf *elf, sym_elf_info *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name = sym_elf_section_name(elf, scn, &shdr);
		if (!name)
			continue;
		bool has_bytes = shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
		if (!has_bytes)
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) {
			out->has_debug_info = true;
		} else if (!strcmp(name, ".debug_line") || !strcmp(name, ".zdebug_line")) {
			out->has_debug_line = true;
		} else if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize &&
			   shdr.sh_size / shdr.sh_entsize > 1) {
			out->has_symtab = true;
		} else if (shdr.sh_type == SHT_DYNSYM && shdr.sh_entsize &&
			   shdr.sh_size / shdr.sh_entsize > 1) {
			out->has_dynsym = true;
		} else if (shdr.sh_type == SHT_PROGBITS && (shdr.sh_flags & SHF_EXECINSTR)) {
			out->has_text = true;
		} else if (shdr.sh_type == SHT_NOTE && out->build_id.len == 0) {
			Elf_Data *data = elf_getdata(scn, NULL);
			if (data && data->d_buf)
				find_build_id_note(data, &out->build_id);
		} else if (!strcmp(name, ".gnu_debugaltlink")) {
			Elf_Data *data = elf_getdata(scn, NULL);
			if (data && data->d_buf)
				read_altlink(data, out);
		} else if (!strcmp(name, ".gnu_debuglink")) {
			Elf_Data *data = elf_getdata(scn, NULL);
			if (data && data->d_buf)
				read_debuglink(elf, data, out);
		}
	}
}

static void probe_segments(Elf *elf, const void *image, size_t size, sym_elf_info *out)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			break;
		if (ph.p_type == PT_LOAD && out->n_loads < SYM_ELF_MAX_LOADS) {
			out->loads[out->n_loads++] = (sym_elf_load){
				.vaddr = ph.p_vaddr, .offset = ph.p_offset, .filesz = ph.p_filesz,
				.memsz = ph.p_memsz, .flags = ph.p_flags};
		} else if (ph.p_type == PT_NOTE && out->build_id.len == 0 &&
			   ph.p_offset < size && ph.p_filesz <= size - ph.p_offset) {
			Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
							      ph.p_filesz, ELF_T_NHDR);
			if (data && data->d_buf)
				find_build_id_note(data, &out->build_id);
		}
	}
	(void)image;
}

sym_errc sym_elf_probe(const void *data, size_t size, sym_elf_info *out, sym_error *err)
{
	memset(out, 0, sizeof(*out));
	Elf *elf;
	sym_errc rc = sym_elf_begin(data, size, &elf, err);
	if (rc)
		return rc;
	GElf_Ehdr ehdr;
	gelf_getehdr(elf, &ehdr);
	out->machine = ehdr.e_machine;
	out->type = ehdr.e_type;
	out->is_64 = gelf_getclass(elf) == ELFCLASS64;
	probe_sections(elf, out);
	probe_segments(elf, data, size, out);
	elf_end(elf);
	return SYM_OK;
}
