// SPDX-License-Identifier: Apache-2.0
/*
 * sym_reloc: ET_REL section layout and DWARF relocations (see sym_reloc_impl.h).
 *
 * Reads headers, symbols and relocations through libelf over the writable
 * copy, computes every section's address in an array of its own, then writes
 * the relocated values and the sh_addr fields as bytes of the copy (in the
 * file's byte order), each write checked to fall inside its section and the
 * image. The libelf handle is ended before libdw opens the image afresh.
 */
#include "symbolizer/sym_reloc_impl.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "symbolizer/sym_inflate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Highest laid-out address: far below any wrap, whatever the headers claim. */
#define LAYOUT_MAX ((uint64_t)1 << 48)
#define ALIGN_MAX ((uint64_t)1 << 24)

/* Width in bytes of an absolute data relocation of this machine, 0 = not applied. */
static unsigned abs_width(unsigned machine, unsigned type)
{
	switch (machine) {
	case EM_X86_64:
		return type == 1 ? 8 : (type == 10 || type == 11) ? 4 : 0;  /* R_X86_64_64, _32, _32S */
	case EM_386:
		return type == 1 ? 4 : 0;                                   /* R_386_32 */
	case EM_AARCH64:
		return type == 257 ? 8 : type == 258 ? 4 : 0;               /* ABS64, ABS32 */
	case EM_ARM:
		return type == 2 ? 4 : 0;                                   /* R_ARM_ABS32 */
	case EM_PPC64:
		return type == 38 ? 8 : type == 1 ? 4 : 0;                  /* ADDR64, ADDR32 */
	case EM_PPC:
		return type == 1 ? 4 : 0;                                   /* R_PPC_ADDR32 */
	case EM_S390:
		return type == 22 ? 8 : type == 4 ? 4 : 0;                  /* R_390_64, _32 */
	case 243: /* EM_RISCV */
	case 258: /* EM_LOONGARCH */
		return type == 2 ? 8 : type == 1 ? 4 : 0;                   /* _64, _32 */
	default:
		return 0;
	}
}

struct rel_ctx {
	uint8_t *image;
	size_t size;
	bool big_endian;
	unsigned machine;
	size_t shnum;
	uint64_t *addr;     /* laid-out address of each section (0: not allocated) */
};

static uint64_t get_bytes(const uint8_t *p, unsigned w, bool be)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < w; i++)
		v |= (uint64_t)p[be ? w - 1 - i : i] << (8 * i);
	return v;
}

static void put_bytes(uint8_t *p, unsigned w, bool be, uint64_t v)
{
	for (unsigned i = 0; i < w; i++)
		p[be ? w - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* Assigns addresses to the SHF_ALLOC sections and writes them into the section headers. */
static sym_errc lay_out(Elf *elf, struct rel_ctx *c, const GElf_Ehdr *eh, sym_error *err)
{
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	size_t entsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size_t addr_at = is64 ? offsetof(Elf64_Shdr, sh_addr) : offsetof(Elf32_Shdr, sh_addr);
	unsigned addr_w = is64 ? 8 : 4;
	if (eh->e_shentsize != entsize || eh->e_shoff > c->size ||
	    c->shnum > (c->size - eh->e_shoff) / entsize)
		return sym_error_set(err, SYM_E_BAD_ELF, "section header table outside the file");
	uint64_t next = SYM_RELOC_BASE;
	for (size_t i = 1; i < c->shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;
		if (align & (align - 1) || align > ALIGN_MAX)
			return sym_error_set(err, SYM_E_BAD_ELF, "section %zu: bad alignment %llu", i,
					     (unsigned long long)align);
		next = (next + align - 1) & ~(align - 1);
		if (sh.sh_size > LAYOUT_MAX || next + sh.sh_size > LAYOUT_MAX ||
		    (!is64 && next + sh.sh_size > UINT32_MAX))
			return sym_error_set(err, SYM_E_TOO_LARGE, "sections too large to lay out");
		c->addr[i] = next;
		put_bytes(c->image + eh->e_shoff + i * entsize + addr_at, addr_w, c->big_endian, next);
		next += sh.sh_size;
	}
	return SYM_OK;
}

/* S of a relocation: the symbol's value plus its section's address; false to skip. */
static bool symbol_value(const struct rel_ctx *c, Elf_Data *syms, size_t nsyms, size_t i,
			 uint64_t *s)
{
	GElf_Sym sym;
	if (i >= nsyms || !gelf_getsym(syms, (int)i, &sym))
		return false;
	if (sym.st_shndx == SHN_ABS || sym.st_shndx == SHN_UNDEF) {
		*s = sym.st_shndx == SHN_ABS ? sym.st_value : 0;
		return true;
	}
	if (sym.st_shndx >= c->shnum || sym.st_shndx >= SHN_LORESERVE)
		return false;
	*s = sym.st_value + c->addr[sym.st_shndx];
	return true;
}

/* Applies one relocation section to its (non-allocated) target. */
static sym_errc apply_section(Elf *elf, struct rel_ctx *c, Elf_Scn *rscn, const GElf_Shdr *rsh,
			      sym_error *err)
{
	GElf_Shdr tsh, ssh;
	Elf_Scn *tscn = rsh->sh_info < c->shnum ? elf_getscn(elf, rsh->sh_info) : NULL;
	Elf_Scn *sscn = rsh->sh_link < c->shnum ? elf_getscn(elf, rsh->sh_link) : NULL;
	if (!tscn || !gelf_getshdr(tscn, &tsh) || (tsh.sh_flags & SHF_ALLOC) ||
	    tsh.sh_type == SHT_NOBITS || (tsh.sh_flags & SHF_COMPRESSED))
		return SYM_OK;   /* code, or nothing we read: left alone */
	if (!sscn || !gelf_getshdr(sscn, &ssh) || ssh.sh_type != SHT_SYMTAB || !ssh.sh_entsize ||
	    tsh.sh_offset > c->size || tsh.sh_size > c->size - tsh.sh_offset)
		return sym_error_set(err, SYM_E_BAD_ELF, "relocation section %u: bad links",
				     (unsigned)elf_ndxscn(rscn));
	Elf_Data *rel = elf_getdata(rscn, NULL), *syms = elf_getdata(sscn, NULL);
	if (!rel || !syms || !rsh->sh_entsize)
		return sym_error_set(err, SYM_E_BAD_ELF, "relocation section %u: unreadable",
				     (unsigned)elf_ndxscn(rscn));
	size_t nsyms = syms->d_size / ssh.sh_entsize, n = rel->d_size / rsh->sh_entsize;
	bool rela = rsh->sh_type == SHT_RELA;
	uint8_t *target = c->image + tsh.sh_offset;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Rel rl;
		if (rela ? !gelf_getrela(rel, (int)i, &r) : !gelf_getrel(rel, (int)i, &rl))
			break;
		if (!rela)
			r = (GElf_Rela){.r_offset = rl.r_offset, .r_info = rl.r_info};
		/* libelf gives a 32-bit file's r_info in the 64-bit layout too. */
		unsigned type = (unsigned)GELF_R_TYPE(r.r_info);
		size_t symi = GELF_R_SYM(r.r_info);
		unsigned w = abs_width(c->machine, type);
		uint64_t s;
		if (!w || r.r_offset > tsh.sh_size || w > tsh.sh_size - r.r_offset ||
		    !symbol_value(c, syms, nsyms, symi, &s))
			continue;
		uint8_t *p = target + r.r_offset;
		uint64_t a = rela ? (uint64_t)r.r_addend : get_bytes(p, w, c->big_endian);
		put_bytes(p, w, c->big_endian, s + a);
	}
	return SYM_OK;
}

sym_errc sym_reloc_apply(void *image, size_t size, sym_error *err)
{
	Elf *elf;
	sym_errc rc = sym_elf_begin(image, size, &elf, err);
	if (rc)
		return rc;
	GElf_Ehdr eh;
	struct rel_ctx c = {.image = image, .size = size};
	if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_REL || elf_getshdrnum(elf, &c.shnum) ||
	    c.shnum < 2)
		goto out;
	c.big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	c.machine = eh.e_machine;
	c.addr = calloc(c.shnum, sizeof(*c.addr));
	if (!c.addr) {
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory laying out sections");
		goto out;
	}
	if ((rc = lay_out(elf, &c, &eh, err)))
		goto out;
	Elf_Scn *scn = NULL;
	while (!rc && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL))
			rc = apply_section(elf, &c, scn, &sh, err);
	}
out:
	free(c.addr);
	elf_end(elf);
	return rc;
}

static bool is_rel(const void *data, size_t size)
{
	const unsigned char *p = data;
	if (size < EI_NIDENT + 2 || memcmp(p, ELFMAG, SELFMAG))
		return false;
	unsigned t = p[EI_DATA] == ELFDATA2MSB ? (unsigned)p[16] << 8 | p[17]
					       : (unsigned)p[17] << 8 | p[16];
	return t == ET_REL;
}

sym_errc sym_reloc_prepare(const void *data, size_t size, uint64_t max_bytes, void **out,
			   size_t *out_size, sym_error *err)
{
	sym_errc rc = sym_inflate_image(data, size, max_bytes, out, out_size, err);
	if (rc || !is_rel(data, size))
		return rc;
	if (!*out) {
		if (!(*out = malloc(size ? size : 1)))
			return sym_error_set(err, SYM_E_NOMEM, "out of memory copying a %zu-byte file",
					     size);
		memcpy(*out, data, size);
		*out_size = size;
	}
	rc = sym_reloc_apply(*out, *out_size, err);
	if (rc) {
		free(*out);
		*out = NULL;
		*out_size = 0;
	}
	return rc;
}
