// SPDX-License-Identifier: Apache-2.0
/*
 * sym_gopclntab_find: where a Go binary's pclntab and module data are (see
 * sym_gopclntab_collect.h).
 *
 * Internal linking names the table's section .gopclntab (a PIE's
 * .data.rel.ro.gopclntab); external linking keeps the runtime.pclntab and
 * runtime.epclntab symbols until the file is stripped; without either, the
 * loaded segments of a Go program (its build-info blob or Go build-ID note
 * present) are scanned for a header that opens and whose first function lies
 * in executable code. The module data (runtime.firstmoduledata,
 * runtime/symtab.go's moduledata) starts with a pointer to the header and one
 * to the function-name table: its text (word 22) is the text start of a
 * 1.18+ table whose header holds none, and its gofunc (word 38, 40 since Go
 * 1.20 added covctrs) the base of the inline trees' offsets.
 */
#include "symbolizer/sym_gopclntab_collect_impl.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "symbolizer/sym_symtab_impl.h"

#include <string.h>

#define MD_TEXT 22
#define MD_GOFUNC_118 38
#define MD_GOFUNC_120 40

static size_t load_segments(const sym_elf_info *info, const uint8_t *data, size_t size,
			    sym_gopcln_seg *segs)
{
	size_t n = 0;
	for (uint32_t i = 0; i < info->n_loads && n < SYM_ELF_MAX_LOADS; i++) {
		const sym_elf_load *l = &info->loads[i];
		if (l->offset >= size || !l->filesz)
			continue;
		uint64_t len = l->filesz < size - l->offset ? l->filesz : size - l->offset;
		segs[n++] = (sym_gopcln_seg){l->vaddr, data + l->offset, (size_t)len};
	}
	return n;
}

static bool executable(const sym_elf_info *info, uint64_t addr)
{
	for (uint32_t i = 0; i < info->n_loads; i++) {
		const sym_elf_load *l = &info->loads[i];
		if ((l->flags & PF_X) && addr >= l->vaddr && addr - l->vaddr < l->memsz)
			return true;
	}
	return false;
}

/* The lowest address of an executable section (.text), 0 when none. */
static uint64_t text_address(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name = sym_elf_section_name(elf, scn, &sh);
		if (name && !strcmp(name, ".text"))
			return sh.sh_addr;
	}
	return 0;
}

/* Opens a candidate and checks that its first function is code. */
static bool try_open(sym_gopcln *t, const uint8_t *p, size_t len, uint64_t vaddr, uint64_t text,
		     const sym_elf_info *info, sym_error *err)
{
	sym_gopcln_func f;
	return sym_gopcln_open(t, p, len, vaddr, text, err) == SYM_OK &&
	       sym_gopcln_func_at(t, 0, &f, err) == SYM_OK && executable(info, f.entry);
}

static bool by_section(Elf *elf, sym_gopcln_image *im, const uint8_t *data, size_t size,
		       uint64_t text, const sym_elf_info *info, sym_error *err)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name = sym_elf_section_name(elf, scn, &sh);
		size_t nlen = name ? strlen(name) : 0;
		if (nlen < 9 || strcmp(name + nlen - 9, "gopclntab") || sh.sh_type == SHT_NOBITS ||
		    sh.sh_offset >= size || sh.sh_size > size - sh.sh_offset)
			continue;
		if (try_open(&im->tab, data + sh.sh_offset, sh.sh_size, sh.sh_addr, text, info, err)) {
			im->found_by = "section";
			return true;
		}
		return false;   /* err says what is wrong with it */
	}
	return false;
}

static const uint8_t *image_at(const sym_gopcln_image *im, size_t nsegs, uint64_t addr,
			       size_t *avail)
{
	for (size_t i = 0; i < nsegs; i++) {
		const sym_gopcln_seg *s = &im->segs[i];
		if (addr >= s->vaddr && addr - s->vaddr < s->size) {
			*avail = s->size - (size_t)(addr - s->vaddr);
			return s->data + (addr - s->vaddr);
		}
	}
	return NULL;
}

static bool by_symbol(Elf *elf, sym_gopcln_image *im, size_t nsegs, uint64_t text,
		      const sym_elf_info *info, sym_error *err)
{
	static const char *const names[2] = {"runtime.pclntab", "runtime.epclntab"};
	uint64_t v[2] = {0, 0};
	sym_symtab_find(elf, names, v, 2);
	size_t avail;
	const uint8_t *p = v[0] ? image_at(im, nsegs, v[0], &avail) : NULL;
	if (!p)
		return false;
	if (v[1] > v[0] && v[1] - v[0] < avail)
		avail = (size_t)(v[1] - v[0]);
	if (!try_open(&im->tab, p, avail, v[0], text, info, err))
		return false;
	im->found_by = "symbol";
	return true;
}

/*
 * Whether the image is a Go program: its loaded bytes hold the build-info blob
 * (runtime/debug's "\xff Go buildinf:", Go 1.13+) or the Go build-ID note
 * (type 4, name "Go"). Only then are its segments scanned for a table.
 */
static const char BUILDINFO[] = "\xff Go buildinf:";

static bool has_buildinfo(const sym_gopcln_image *im, size_t nsegs)
{
	for (size_t i = 0; i < nsegs; i++)
		if (memmem(im->segs[i].data, im->segs[i].size, BUILDINFO, sizeof(BUILDINFO) - 1))
			return true;
	return false;
}

static bool is_go(const sym_gopcln_image *im, size_t nsegs)
{
	static const char note[] = "\x04\0\0\0Go\0\0";
	if (has_buildinfo(im, nsegs))
		return true;
	for (size_t i = 0; i < nsegs; i++)
		if (memmem(im->segs[i].data, im->segs[i].size, note, sizeof(note) - 1))
			return true;
	return false;
}

static bool by_scan(sym_gopcln_image *im, size_t nsegs, uint64_t text, const sym_elf_info *info,
		    sym_error *err)
{
	if (!is_go(im, nsegs))
		return false;
	for (size_t i = 0; i < nsegs; i++) {
		const sym_gopcln_seg *s = &im->segs[i];
		for (size_t off = (size_t)(-s->vaddr & 3); off + 16 <= s->size; off += 4) {
			const uint8_t *p = s->data + off;
			if ((p[0] != 0xff && p[3] != 0xff) || !sym_gopcln_looks_like(p, s->size - off))
				continue;
			if (try_open(&im->tab, p, s->size - off, s->vaddr + off, text, info, err)) {
				im->found_by = "scan";
				return true;
			}
		}
	}
	return false;
}

/* The module data: a pointer-aligned word equal to the table's address, then funcnametab's. */
static void find_moduledata(sym_gopcln_image *im, size_t nsegs)
{
	sym_gopcln *t = &im->tab;
	unsigned ps = t->ptrsize;
	unsigned words = t->version >= SYM_GOPCLN_120 ? MD_GOFUNC_120 + 1 : MD_GOFUNC_118 + 1;
	if (t->version < SYM_GOPCLN_116 || !t->vaddr)
		return;
	uint8_t want[8], want2[8];
	for (unsigned k = 0; k < ps; k++) {
		unsigned sh = t->big_endian ? (ps - 1 - k) * 8 : k * 8;
		want[k] = (uint8_t)(t->vaddr >> sh);
		want2[k] = (uint8_t)((t->vaddr + t->name_off) >> sh);
	}
	for (size_t i = 0; i < nsegs; i++) {
		const sym_gopcln_seg *s = &im->segs[i];
		for (size_t off = (size_t)(-s->vaddr & (ps - 1)); off + (size_t)words * ps <= s->size;
		     off += ps) {
			const uint8_t *p = s->data + off;
			if (memcmp(p, want, ps) || memcmp(p + ps, want2, ps))
				continue;
			uint64_t w[MD_GOFUNC_120 + 1];
			for (unsigned k = 0; k < words; k++) {
				const uint8_t *q = p + (size_t)k * ps;
				w[k] = 0;
				for (unsigned b = 0; b < ps; b++)
					w[k] |= (uint64_t)q[b] << (t->big_endian ? (ps - 1 - b) * 8 : b * 8);
			}
			im->moduledata = s->vaddr + off;
			if (t->version >= SYM_GOPCLN_118) {
				t->gofunc = w[words - 1];
				if (!t->text_from_header && w[MD_TEXT])
					t->text_start = w[MD_TEXT];   /* over .text's address */
			}
			return;
		}
	}
}

sym_errc sym_gopcln_find(Elf *elf, const void *data, size_t size, const sym_elf_info *info,
			 sym_gopcln_image *out, sym_error *err)
{
	memset(out, 0, sizeof(*out));
	size_t nsegs = load_segments(info, data, size, out->segs);
	uint64_t text = text_address(elf);
	sym_error e = {0}, ignored;
	bool found = by_section(elf, out, data, size, text, info, &e) ||
		     by_symbol(elf, out, nsegs, text, info, &ignored) ||
		     by_scan(out, nsegs, text, info, &ignored);
	if (!found) {
		if (e.code) {   /* a .gopclntab section that does not read */
			if (err)
				*err = e;
			sym_error_prefix(err, "section .gopclntab");
			return e.code;
		}
		return sym_error_set(err, SYM_E_NO_SYMBOLS, "no Go pclntab");
	}
	out->tab.segs = out->segs;
	out->tab.nsegs = nsegs;
	/* A 1.2 table's inline-tree slots depend on whether this is Go 1.13+. */
	out->tab.buildinfo = out->tab.version == SYM_GOPCLN_12 && has_buildinfo(out, nsegs);
	find_moduledata(out, nsegs);
	return SYM_OK;
}
