// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of function names: assembler labels in C (the source name shown,
 * the label kept as linkage name), C++ names qualified from DIE parents, and
 * the .symtab name preferred for an outermost frame when it is a fuller form
 * of the DWARF one (sym_prefer_matches, and on the cxx_names_O2 fixture).
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_index.h"
#include "symbolizer/sym_prefer_impl.h"
#include "test.h"
#include "util.h"

static uint64_t symbol_address(const uint8_t *img, size_t n, const char *want)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)img, n);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			if (gelf_getsym(d, (int)i, &s) && (name = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    !strcmp(name, want))
				addr = s.st_value;
		}
	}
	elf_end(elf);
	return addr;
}

struct loaded {
	uint8_t *img;
	size_t n;
	void *blob;
	sym_index *idx;
};

static bool load(struct loaded *l, const char *fixture)
{
	memset(l, 0, sizeof(*l));
	l->img = test_read_fixture(fixture, &l->n);
	if (!l->img)
		return false;
	size_t bs;
	int rc;
	l->blob = build_blob(l->img, l->n, 0, &bs, &rc, NULL, 0);
	return l->blob && sym_index_load(l->blob, bs, &l->idx, NULL) == SYM_OK;
}

static void unload(struct loaded *l)
{
	sym_index_destroy(l->idx);
	free(l->blob);
	free(l->img);
}

TEST(prefer_matches)
{
	size_t len;
	const char *d = "outer::(anonymous namespace)::Buffer<int, 8>::push(int const&) [clone .cold]";
	CHECK(sym_prefer_matches("outer::(anonymous namespace)::Buffer<int, 8>::push", d, false, &len));
	CHECK_EQ_U(len, strlen(d) - strlen(" [clone .cold]"));
	/* A lambda's closure type has no name in DWARF; libiberty numbers it. */
	CHECK(sym_prefer_matches("outer::lambdas(int)::(anonymous struct)::operator()",
				 "outer::lambdas(int)::{lambda(int)#1}::operator()(int) const", false,
				 &len));
	/* A return type before the name; "> >" and ">>" are one spelling. */
	CHECK(sym_prefer_matches("ns::f<std::vector<int> >", "int ns::f<std::vector<int>>(int)",
				 false, &len));
	/* Identical code folding: another instance is not a fuller form... */
	CHECK(!sym_prefer_matches("ns::Buffer<int, 8>::sum", "ns::Buffer<unsigned int, 8>::sum() const",
				  false, &len));
	/* ...but a symbol alone at its address is, whatever the arguments' spelling. */
	CHECK(sym_prefer_matches("ns::stackvec<62>::len", "ns::stackvec<(unsigned short)62>::len() const",
				 true, &len));
	CHECK(sym_prefer_matches("ns::category::message", "ns::category::message[abi:cxx11](int) const",
				 false, &len));
	CHECK(sym_prefer_matches("std::key_init::key_s::key_s", "std::key_init()::key_s::key_s()", false,
				 &len));
	CHECK(!sym_prefer_matches("ns::g", "ns::f(int)", false, &len));
	CHECK(!sym_prefer_matches("b::f", "ab::f()", false, &len));
}

TEST(c_assembler_label)
{
	struct loaded l;
	REQUIRE(load(&l, "c_label"));
	uint64_t a = symbol_address(l.img, l.n, "__internal_visible_sum");
	REQUIRE(a);
	sym_frame f[8];
	size_t k = sym_index_lookup(l.idx, a, f, 8);
	REQUIRE(k >= 1);
	CHECK_STREQ(f[k - 1].display_name, "visible_sum");
	CHECK_STREQ(f[k - 1].name, "visible_sum");
	CHECK_STREQ(f[k - 1].linkage_name, "__internal_visible_sum");
	unload(&l);
}

TEST(cxx_outermost_from_symtab)
{
	struct loaded l;
	REQUIRE(load(&l, "cxx_names_O2"));
	/* outer::local_classes(int)::Counter::hit(int): no DW_AT_linkage_name. */
	uint64_t a = symbol_address(l.img, l.n, "_ZZN5outer13local_classesEiEN7Counter3hitEi");
	REQUIRE(a);
	sym_frame f[16];
	size_t k = sym_index_lookup(l.idx, a, f, 16);
	REQUIRE(k >= 1);
	CHECK_STREQ(f[k - 1].display_name, "outer::local_classes(int)::Counter::hit(int)");
	CHECK_STREQ(f[k - 1].name, "hit");
	unload(&l);
}

TEST(cxx_inlined_frames_qualified)
{
	struct loaded l;
	REQUIRE(load(&l, "cxx_names_O2"));
	uint64_t main_addr = symbol_address(l.img, l.n, "main");
	REQUIRE(main_addr);
	size_t qualified = 0, bare = 0;
	for (uint64_t a = main_addr; a < main_addr + 0x400; a++) {
		sym_frame f[32];
		size_t k = sym_index_lookup(l.idx, a, f, 32);
		for (size_t i = 0; i + 1 < k && i < 32; i++) {
			if (!strstr(f[i].display_name, "(anonymous namespace)::Buffer<"))
				continue;
			/* DW_AT_name bare, the shown name qualified: ends in "::" + name. */
			size_t dn = strlen(f[i].display_name), nn = strlen(f[i].name);
			if (dn > nn + 2 && !strcmp(f[i].display_name + dn - nn, f[i].name) &&
			    !strncmp(f[i].display_name + dn - nn - 2, "::", 2))
				qualified++;
			else
				bare++;
		}
	}
	CHECK(qualified > 0);
	CHECK_EQ_U(bare, 0);
	unload(&l);
}

TEST_MAIN()
