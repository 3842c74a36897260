// SPDX-License-Identifier: Apache-2.0
/*
 * sym_symtab: symbol-table scopes (see sym_symtab_impl.h).
 *
 * STT_FUNC and STT_GNU_IFUNC symbols defined in a section. Of several symbols at
 * one address (aliases) one is kept: a sized one, then GLOBAL over WEAK over
 * LOCAL, then .symtab over .dynsym; its span's c field tells whether there were
 * others (sym_prefer then matches its name to DWARF's strictly). A zero-size symbol reaches to the next
 * symbol or the end of its section. A local symbol's function records the
 * STT_FILE before it as its file: where no line table covers the code, that
 * is the file the frame names (with line 0), as llvm-symbolizer does.
 */
#include "symbolizer/sym_symtab_impl.h"
#include "symbolizer/sym_demangle_impl.h"
#include "symbolizer/sym_elf_util_impl.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct fsym {
	uint64_t addr, size, sec_end;
	const char *name;
	const char *file;  /* a local symbol's STT_FILE, or NULL */
	int rank;      /* lower is preferred */
	uint32_t order;
};

static int bind_rank(int bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

static int cmp_fsym(const void *pa, const void *pb)
{
	const struct fsym *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static sym_errc read_table(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, int table_rank, base_vec *syms,
			   sym_error *err)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !sh->sh_entsize)
		return SYM_OK;
	size_t n = data->d_size / sh->sh_entsize, shnum = 0;
	elf_getshdrnum(elf, &shnum);
	GElf_Ehdr eh;
	/* An ET_REL symbol's value is an offset in its section (laid out by sym_reloc). */
	bool rel = gelf_getehdr(elf, &eh) && eh.e_type == ET_REL;
	const char *file = NULL;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			break;
		int type = GELF_ST_TYPE(s.st_info);
		if (type == STT_FILE) {
			/* Names the source of the local symbols that follow it (ELF spec). */
			file = elf_strptr(elf, sh->sh_link, s.st_name);
			continue;
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= shnum)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		GElf_Shdr sec;
		Elf_Scn *sscn = elf_getscn(elf, s.st_shndx);
		bool have_sec = sscn && gelf_getshdr(sscn, &sec);
		uint64_t sec_end = have_sec ? sec.sh_addr + sec.sh_size : 0;
		if (rel)
			s.st_value += have_sec ? sec.sh_addr : 0;
		if (s.st_value == 0 && !rel)
			continue;   /* undefined in an executable; a .o's first function is at 0 */
		struct fsym *f = base_vec_push(syms);
		if (!f)
			return sym_error_set(err, SYM_E_NOMEM, "out of memory reading symbols");
		*f = (struct fsym){.addr = s.st_value, .size = s.st_size, .sec_end = sec_end,
				   .name = name,
				   .file = GELF_ST_BIND(s.st_info) == STB_LOCAL ? file : NULL,
				   .rank = (s.st_size ? 0 : 8) + bind_rank(GELF_ST_BIND(s.st_info)) * 2 +
					   table_rank,
				   .order = (uint32_t)syms->len};
	}
	return SYM_OK;
}

/*
 * Whether a and b name one function: equal, or Itanium names that differ only
 * in a constructor's or destructor's variant (C1/C2, D1/D2: complete and base
 * object versions, which compilers emit as aliases).
 */
static bool same_function(const char *a, const char *b)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	if (!a[i] && !b[i])
		return true;
	if (i == 0 || (a[i - 1] != 'C' && a[i - 1] != 'D') || a[i] < '0' || a[i] > '4' ||
	    b[i] < '0' || b[i] > '4')
		return false;
	return strcmp(a + i + 1, b + i + 1) == 0;
}

static sym_errc add_symbol(sym_collect *out, const struct fsym *f, uint64_t hi, bool aliased,
			   sym_error *err)
{
	struct sym_ix_func fn = {0};
	fn.name = sym_strtab_add_cstr(&out->strs, f->name);
	char *d = sym_demangle(f->name);
	fn.linkage = d ? fn.name : 0;
	fn.display = d ? sym_strtab_add_cstr(&out->strs, d) : fn.name;
	fn.decl_file = sym_strtab_add_cstr(&out->strs, f->file);
	free(d);
	uint32_t fid = (uint32_t)out->funcs.len, sid = (uint32_t)out->scopes.len;
	struct sym_ix_func *pf = base_vec_push(&out->funcs);
	struct sym_ix_scope *ps = base_vec_push(&out->scopes);
	sym_span *sp = base_vec_push(&out->scope_spans);
	if (!pf || !ps || !sp || fn.name == SYM_STR_NONE || fn.display == SYM_STR_NONE ||
	    fn.decl_file == SYM_STR_NONE)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory reading symbols");
	*pf = fn;
	*ps = (struct sym_ix_scope){.func = fid, .parent = SYM_IX_NONE};
	*sp = (sym_span){.lo = f->addr, .hi = hi, .a = sid, .c = aliased, .order = sid};
	return SYM_OK;
}

sym_errc sym_symtab_collect(Elf *elf, sym_collect *out, sym_error *err)
{
	base_vec syms;
	base_vec_init(&syms, sizeof(struct fsym), SYM_MAX_SPANS);
	sym_errc rc = SYM_OK;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn)) != NULL && !rc) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				rc = read_table(elf, scn, &sh, pass, &syms, err);
		}
	}
	if (rc)
		goto out;
	struct fsym *v = syms.data;
	size_t n = syms.len;
	if (n)
		qsort(v, n, sizeof(*v), cmp_fsym);
	for (size_t i = 0; i < n && !rc; i++) {
		if (i > 0 && v[i].addr == v[i - 1].addr)
			continue; /* an alias of the one kept */
		size_t j = i + 1;
		while (j < n && v[j].addr == v[i].addr)
			j++;
		uint64_t hi;
		if (v[i].size) {
			hi = v[i].addr + v[i].size;
		} else {
			hi = j < n ? v[j].addr : v[i].sec_end;
			if (v[i].sec_end > v[i].addr && hi > v[i].sec_end)
				hi = v[i].sec_end;
		}
		if (hi <= v[i].addr || v[i].addr < out->min_code_addr)
			continue;
		bool aliased = false;
		for (size_t k = i + 1; k < j && !aliased; k++)
			aliased = !same_function(v[k].name, v[i].name);
		rc = add_symbol(out, &v[i], hi, aliased, err);
	}
out:
	base_vec_deinit(&syms);
	return rc;
}

void sym_symtab_find(Elf *elf, const char *const *names, uint64_t *values, size_t n)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		size_t count = data->d_size / sh.sh_entsize;
		for (size_t i = 1; i < count; i++) {
			GElf_Sym s;
			if (!gelf_getsym(data, (int)i, &s))
				break;
			if (s.st_shndx == SHN_UNDEF || !s.st_value || s.st_name == 0)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			for (size_t k = 0; name && k < n; k++)
				if (!values[k] && !strcmp(name, names[k]))
					values[k] = s.st_value;
		}
	}
}
