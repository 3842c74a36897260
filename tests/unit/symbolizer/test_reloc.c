// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of relocatable files (sym_reloc): the index of `gcc -c -g`
 * objects (x86-64 DWARF 5, zlib-compressed DWARF 4, AArch64) answers every
 * byte of every function exactly as the index of the executable linked from
 * the same object does at the linked address (names, files, lines, columns,
 * inline chains); the section table; the type layouts of an object (member
 * names are relocated string offsets); and hostile relocation sections.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_index.h"
#include "symbolizer/sym_layout.h"
#include "symbolizer/sym_reloc_impl.h"
#include "test.h"
#include "util.h"

#define MAX_FUNCS 64

struct fsym {
	char name[64];
	uint64_t value, size;
	char section[32];
};

/* The sized STT_FUNC symbols of an image and their sections' names. */
static size_t functions(const uint8_t *img, size_t n, struct fsym *out)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)img, n);
	size_t count = 0, shstrndx = 0;
	Elf_Scn *scn = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize && count < MAX_FUNCS; i++) {
			GElf_Sym s;
			GElf_Shdr ss;
			const char *name, *sec;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || !(name = elf_strptr(elf, sh.sh_link, s.st_name)) ||
			    !gelf_getshdr(elf_getscn(elf, s.st_shndx), &ss) ||
			    !(sec = elf_strptr(elf, shstrndx, ss.sh_name)))
				continue;
			struct fsym *f = &out[count++];
			snprintf(f->name, sizeof(f->name), "%s", name);
			snprintf(f->section, sizeof(f->section), "%s", sec);
			f->value = s.st_value;
			f->size = s.st_size;
		}
	}
	elf_end(elf);
	return count;
}

static sym_index *index_of(const char *name, uint8_t **img, size_t *n, void **blob)
{
	*img = test_read_fixture(name, n);
	*blob = NULL;
	if (!*img)
		return NULL;
	int rc;
	size_t bs;
	char msg[256];
	*blob = build_blob(*img, *n, 0, &bs, &rc, msg, sizeof(msg));
	if (rc)
		fprintf(stderr, "%s: %s\n", name, msg);
	sym_index *idx = NULL;
	if (*blob && sym_index_load(*blob, bs, &idx, NULL) != SYM_OK)
		return NULL;
	return idx;
}

static bool same_frames(const sym_frame *a, size_t na, const sym_frame *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || strcmp(a[i].file, b[i].file) ||
		    a[i].line != b[i].line || a[i].column != b[i].column ||
		    strcmp(a[i].decl_file, b[i].decl_file) || a[i].decl_line != b[i].decl_line)
			return false;
	return true;
}

/* Every byte of every function of obj against exe: the same frames. */
static void compare_object(const char *obj, const char *exe)
{
	uint8_t *oimg, *eimg;
	size_t on, en;
	void *oblob, *eblob;
	sym_index *oi = index_of(obj, &oimg, &on, &oblob);
	sym_index *ei = index_of(exe, &eimg, &en, &eblob);
	REQUIRE(oi && ei);
	sym_index_info info;
	sym_index_get_info(oi, &info);
	CHECK_EQ_U(info.elf_type, ET_REL);
	CHECK(info.flags & SYM_INDEX_FROM_DWARF);
	CHECK(info.flags & SYM_INDEX_HAS_INLINE_FRAMES);
	struct fsym of[MAX_FUNCS], ef[MAX_FUNCS];
	size_t no = functions(oimg, on, of), ne = functions(eimg, en, ef);
	size_t compared = 0, bytes = 0, inlined = 0;
	for (size_t i = 0; i < no; i++) {
		uint64_t base, size;
		REQUIRE(sym_index_section(oi, of[i].section, &base, &size));
		CHECK(of[i].value + of[i].size <= size);
		for (size_t j = 0; j < ne; j++) {
			if (strcmp(of[i].name, ef[j].name) || of[i].size != ef[j].size)
				continue;
			compared++;
			for (uint64_t k = 0; k < of[i].size; k++) {
				sym_frame a[16], b[16];
				size_t na = sym_index_lookup(oi, base + of[i].value + k, a, 16);
				size_t nb = sym_index_lookup(ei, ef[j].value + k, b, 16);
				if (!same_frames(a, na, b, nb)) {
					fprintf(stderr, "%s: %s+0x%llx: %zu frames (%s %s:%u) vs %zu (%s %s:%u)\n",
						obj, of[i].name, (unsigned long long)k, na,
						na ? a[0].name : "", na ? a[0].file : "", na ? a[0].line : 0,
						nb, nb ? b[0].name : "", nb ? b[0].file : "",
						nb ? b[0].line : 0);
					CHECK(!"object and executable differ");
					goto out;
				}
				bytes++;
				inlined += na > 1;
			}
		}
	}
	CHECK(compared >= 4);
	CHECK(bytes > 200);
	CHECK(inlined > 0);
out:
	sym_index_destroy(oi);
	sym_index_destroy(ei);
	free(oblob);
	free(eblob);
	free(oimg);
	free(eimg);
}

TEST(object_x86_64_dwarf5_equals_linked_executable)
{
	compare_object("reloc_O2.o", "reloc_O2_exe");
}

TEST(object_compressed_dwarf4_equals_linked_executable)
{
	compare_object("reloc_O2_zlib.o", "reloc_O2_zlib_exe");
}

TEST(object_aarch64_equals_linked_executable)
{
	compare_object("reloc_aarch64.o", "reloc_aarch64_exe");
}

TEST(sections_laid_out_from_zero_in_order)
{
	uint8_t *img;
	size_t n;
	void *blob;
	sym_index *idx = index_of("reloc_O2.o", &img, &n, &blob);
	REQUIRE(idx);
	uint64_t text, text_size, hot, hot_size;
	REQUIRE(sym_index_section(idx, ".text", &text, &text_size));
	REQUIRE(sym_index_section(idx, ".text.startup", &hot, &hot_size));
	CHECK_EQ_U(text, 0);   /* the first allocated section of a gcc object */
	CHECK(hot >= text + text_size);
	CHECK(!sym_index_section(idx, ".debug_info", &hot, &hot_size)); /* not allocated */
	CHECK(!sym_index_section(idx, ".nope", &hot, &hot_size));
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

/* Struct member names of an object are .debug_str offsets that need relocation. */
TEST(object_layouts_have_relocated_names)
{
	size_t n, on;
	uint8_t *exe = test_read_fixture("layout_c_dw5", &n);
	uint8_t *obj = test_read_fixture("layout_c.o", &on);
	REQUIRE(exe && obj);
	void *eb = NULL, *ob = NULL;
	size_t ebs = 0, obs = 0;
	sym_error err;
	REQUIRE(sym_layout_build(exe, n, NULL, &eb, &ebs, &err) == SYM_OK);
	REQUIRE(sym_layout_build(obj, on, NULL, &ob, &obs, &err) == SYM_OK);
	sym_layout *el = NULL, *ol = NULL;
	REQUIRE(sym_layout_load(eb, ebs, &el, &err) == SYM_OK);
	REQUIRE(sym_layout_load(ob, obs, &ol, &err) == SYM_OK);
	const char *names[] = {"holder", "nest"};
	for (size_t t = 0; t < 2; t++) {
		uint32_t ta, tb;
		sym_layout_type_info a, b;
		REQUIRE(sym_layout_find(el, names[t], &ta, 1) >= 1);
		REQUIRE(sym_layout_find(ol, names[t], &tb, 1) >= 1);
		REQUIRE(sym_layout_type(el, ta, &a) && sym_layout_type(ol, tb, &b));
		CHECK_EQ_U(a.size, b.size);
		REQUIRE(a.n == b.n && a.n > 2);
		for (uint32_t m = 0; m < a.n; m++) {
			sym_layout_member_info ma, mb;
			REQUIRE(sym_layout_member(el, a.first + m, &ma));
			REQUIRE(sym_layout_member(ol, b.first + m, &mb));
			CHECK_STREQ(ma.name, mb.name);
			CHECK_STREQ(ma.type_name, mb.type_name);
			CHECK_EQ_U(ma.offset, mb.offset);
		}
	}
	sym_layout_destroy(el);
	sym_layout_destroy(ol);
	free(eb);
	free(ob);
	free(exe);
	free(obj);
}

/* A copy of reloc_O2.o with the section header of name at *sh (64-bit). */
static uint8_t *object_with_section(const char *name, size_t *n, Elf64_Shdr **sh)
{
	uint8_t *img = test_read_fixture("reloc_O2.o", n);
	uint64_t at, off, len;
	if (!img || find_section(img, *n, name, &at, &off, &len)) {
		free(img);
		return NULL;
	}
	*sh = (Elf64_Shdr *)(img + at);
	return img;
}

static int build(const uint8_t *img, size_t n, char *msg)
{
	int rc;
	size_t bs;
	void *blob = build_blob(img, n, 0, &bs, &rc, msg, 256);
	free(blob);
	return rc;
}

TEST(hostile_relocations)
{
	size_t n;
	Elf64_Shdr *sh;
	char msg[256];
	/* A relocation section linked to a section that is not a symbol table. */
	uint8_t *img = object_with_section(".rela.debug_info", &n, &sh);
	REQUIRE(img);
	sh->sh_link = sh->sh_info;
	CHECK_EQ_U(build(img, n, msg), SYM_E_BAD_ELF);
	CHECK(strstr(msg, "relocation section") != NULL);
	/* Its target out of range: left alone (the DWARF is then unrelocated, not unsafe). */
	free(img);
	img = object_with_section(".rela.debug_info", &n, &sh);
	sh->sh_info = 0xffff;
	int rc = build(img, n, msg);
	CHECK(rc == SYM_OK || rc == SYM_E_BAD_DWARF);
	/* Entries pointing past their target and at symbols that do not exist. */
	free(img);
	img = object_with_section(".rela.debug_info", &n, &sh);
	Elf64_Rela *r = (Elf64_Rela *)(img + sh->sh_offset);
	size_t count = sh->sh_size / sizeof(*r);
	for (size_t i = 0; i < count; i += 2) {
		if (i % 4 == 0)
			r[i].r_offset = UINT64_MAX - 3;
		else
			r[i].r_info = ELF64_R_INFO(0xffffff, ELF64_R_TYPE(r[i].r_info));
	}
	rc = build(img, n, msg);
	CHECK(rc == SYM_OK || rc == SYM_E_BAD_DWARF);
	/* Relocation entries claimed past the end of the file. */
	free(img);
	img = object_with_section(".rela.debug_line", &n, &sh);
	sh->sh_size = (uint64_t)1 << 40;
	(void)rc; /* any answer: no crash, no read outside the image (ASan) */
	build(img, n, msg);
	/* An allocated section with an alignment that is not a power of two. */
	free(img);
	img = object_with_section(".text", &n, &sh);
	sh->sh_addralign = 3;
	CHECK_EQ_U(build(img, n, msg), SYM_E_BAD_ELF);
	CHECK(strstr(msg, "alignment") != NULL);
	/* Sections too large to lay out. */
	free(img);
	img = object_with_section(".text", &n, &sh);
	sh->sh_type = SHT_NOBITS;
	sh->sh_size = (uint64_t)1 << 60;
	CHECK_EQ_U(build(img, n, msg), SYM_E_TOO_LARGE);
	free(img);
}

TEST(prepare_leaves_other_files_alone)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	void *out = (void *)1;
	size_t out_size = 7;
	sym_error err;
	CHECK_EQ_U(sym_reloc_prepare(img, n, 0, &out, &out_size, &err), SYM_OK);
	CHECK(out == NULL);   /* nothing to inflate or relocate: the input as is */
	free(img);
}

TEST_MAIN()
