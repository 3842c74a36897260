// SPDX-License-Identifier: Apache-2.0
/*
 * Hostile ELF and DWARF: garbage sections, headers pointing outside the file,
 * absurd counts, DIE reference and sibling loops. The build must end with an
 * index or a clear error, never a crash (ASan/UBSan), a hang, or a blow-up.
 */
#include <elf.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <stdlib.h>

#include "symbolizer/sym_index.h"
#include "test.h"
#include "util.h"

static void build_and_check(const uint8_t *img, size_t n, const char *what)
{
	int rc;
	size_t bs;
	char msg[256];
	void *blob = build_blob(img, n, 0, &bs, &rc, msg, sizeof(msg));
	if (rc == 0) {
		sym_index *idx;
		CHECK(sym_index_load(blob, bs, &idx, NULL) == SYM_OK);
		if (idx) {
			sym_frame f[32];
			for (uint64_t a = 0; a < 0x20000; a += 7)
				sym_index_lookup(idx, a, f, 32);
			sym_index_destroy(idx);
		}
	} else {
		CHECK(msg[0] != '\0');
		if (!msg[0])
			fprintf(stderr, "  %s: error without a message\n", what);
	}
	free(blob);
}

static void garble_section(const char *section, unsigned seed)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	uint64_t sh, off, len;
	REQUIRE(find_section(img, n, section, &sh, &off, &len) == 0);
	srand(seed);
	for (int round = 0; round < 20; round++) {
		uint8_t *copy = malloc(n);
		memcpy(copy, img, n);
		for (uint64_t k = 0; k < len; k++)
			if (rand() % 8 == 0)
				copy[off + k] = (uint8_t)rand();
		build_and_check(copy, n, section);
		free(copy);
	}
	free(img);
}

TEST(garbage_debug_info) { garble_section(".debug_info", 1); }
TEST(garbage_debug_abbrev) { garble_section(".debug_abbrev", 2); }
TEST(garbage_debug_line) { garble_section(".debug_line", 3); }
TEST(garbage_debug_rnglists) { garble_section(".debug_rnglists", 4); }
TEST(garbage_debug_str) { garble_section(".debug_str", 5); }

TEST(section_headers_outside_file)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	const char *names[] = {".debug_info", ".debug_line", ".symtab", ".strtab", ".debug_abbrev"};
	for (int i = 0; i < 5; i++) {
		uint64_t sh, off, len;
		REQUIRE(find_section(img, n, names[i], &sh, &off, &len) == 0);
		Elf64_Shdr hdr, saved;
		memcpy(&saved, img + sh, sizeof(hdr));
		hdr = saved;
		hdr.sh_offset = n + 4096;
		memcpy(img + sh, &hdr, sizeof(hdr));
		build_and_check(img, n, names[i]);
		hdr = saved;
		hdr.sh_size = UINT64_MAX / 2;
		memcpy(img + sh, &hdr, sizeof(hdr));
		build_and_check(img, n, names[i]);
		memcpy(img + sh, &saved, sizeof(saved));
	}
	free(img);
}

TEST(absurd_counts)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	Elf64_Ehdr eh, saved;
	memcpy(&saved, img, sizeof(eh));
	eh = saved;
	eh.e_shnum = 0xffff;
	memcpy(img, &eh, sizeof(eh));
	build_and_check(img, n, "e_shnum");
	eh = saved;
	eh.e_phnum = 0xffff;
	memcpy(img, &eh, sizeof(eh));
	build_and_check(img, n, "e_phnum");
	eh = saved;
	eh.e_shstrndx = 0xfffe;
	memcpy(img, &eh, sizeof(eh));
	build_and_check(img, n, "e_shstrndx");
	memcpy(img, &saved, sizeof(saved));
	uint64_t sh, off, len;
	REQUIRE(find_section(img, n, ".symtab", &sh, &off, &len) == 0);
	Elf64_Shdr hdr;
	memcpy(&hdr, img + sh, sizeof(hdr));
	hdr.sh_entsize = 1;
	memcpy(img + sh, &hdr, sizeof(hdr));
	build_and_check(img, n, "sh_entsize");
	free(img);
}

TEST(truncated_files)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	for (size_t len = 0; len < n; len += 1 + len / 3) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, img, len);
		build_and_check(copy, len, "truncated");
		free(copy);
	}
	free(img);
}

/*
 * Rewrites DW_FORM_ref4 attributes of the fixture through libdw's view of our
 * own buffer (Dwarf_Attribute.valp points into it): make references loop.
 */
enum loop_kind { SELF_ORIGIN, ORIGIN_PAIR, SIBLING_BACK };

static int make_loops(uint8_t *img, size_t n, enum loop_kind kind)
{
	Elf *elf = elf_memory((char *)img, n);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	int changed = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t ut;
	Dwarf_Half ver;
	uint32_t prev_target = 0;
	while (dw && dwarf_get_units(dw, cu, &cu, &ver, &ut, &cudie, NULL) == 0) {
		Dwarf_Off cu_off = dwarf_dieoffset(&cudie) - dwarf_cuoffset(&cudie);
		Dwarf_Die stack[64];
		int depth = 0;
		if (dwarf_child(&cudie, &stack[0]) != 0)
			continue;
		for (;;) {
			Dwarf_Die *d = &stack[depth];
			Dwarf_Attribute a;
			int attr = kind == SIBLING_BACK ? DW_AT_sibling : DW_AT_abstract_origin;
			if (dwarf_attr(d, attr, &a) && a.form == DW_FORM_ref4 &&
			    a.valp > img && a.valp + 4 <= img + n) {
				uint32_t self = (uint32_t)dwarf_cuoffset(d);
				uint32_t v = kind == ORIGIN_PAIR && prev_target ? prev_target : self;
				memcpy(a.valp, &v, 4);
				prev_target = self;
				changed++;
			}
			(void)cu_off;
			if (depth < 63 && dwarf_child(d, &stack[depth + 1]) == 0) {
				depth++;
				continue;
			}
			while (depth >= 0 && dwarf_siblingof(&stack[depth], &stack[depth]) != 0)
				depth--;
			if (depth < 0)
				break;
		}
	}
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	return changed;
}

static void check_loops(enum loop_kind kind)
{
	size_t n;
	uint8_t *img = test_read_fixture("c_O2_dw5", &n);
	REQUIRE(img);
	elf_version(EV_CURRENT);
	CHECK(make_loops(img, n, kind) > 0);
	build_and_check(img, n, "loops");
	free(img);
}

TEST(abstract_origin_points_to_itself) { check_loops(SELF_ORIGIN); }
TEST(abstract_origins_in_a_cycle) { check_loops(ORIGIN_PAIR); }
TEST(sibling_points_backwards) { check_loops(SIBLING_BACK); }

TEST(not_elf_and_empty)
{
	build_and_check((const uint8_t *)"", 0, "empty");
	build_and_check((const uint8_t *)"\x7f" "ELF", 4, "magic only");
	uint8_t hdr[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	build_and_check(hdr, sizeof(hdr), "header only");
	int rc;
	size_t bs;
	void *blob = build_blob(hdr, sizeof(hdr), 0, &bs, &rc, NULL, 0);
	CHECK(rc != 0);
	free(blob);
}

TEST_MAIN()
