// SPDX-License-Identifier: Apache-2.0
/*
 * test_layout_hostile: symbolizer/sym_layout on hostile input: type-reference
 * loops patched into real DWARF (a typedef naming itself, a struct embedding
 * itself), absurd sizes, truncated and bit-flipped images, truncated and
 * corrupt blobs. Every case ends with an error or a usable answer, never a
 * crash or a hang (ASan/UBSan builds watch the rest).
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_layout.h"
#include "test.h"

/* Builds and, when that works, loads and queries every type. */
static sym_errc exercise(const uint8_t *img, size_t size)
{
	void *blob = NULL;
	size_t bs = 0;
	sym_layout *l = NULL;
	sym_errc rc = sym_layout_build(img, size, NULL, &blob, &bs, NULL);
	if (!rc)
		rc = sym_layout_load(blob, bs, &l, NULL);
	if (!rc) {
		for (uint32_t t = 0; t < sym_layout_type_count(l); t++) {
			sym_layout_type_info ti;
			sym_layout_field f;
			uint32_t found[2];
			if (!sym_layout_type(l, t, &ti))
				continue;
			sym_layout_find(l, ti.name, found, 2);
			sym_layout_field_in(l, t, "a.b", &f, NULL);
		}
	}
	sym_layout_destroy(l);
	free(blob);
	return rc;
}

/* The image offset of a DIE's attribute value (libdw reads the image in place). */
static long attr_offset(uint8_t *img, size_t size, const char *die_name, unsigned attr,
			int want_tag, int64_t *die_cu_off)
{
	Elf *elf = elf_memory((char *)img, size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	long found = -1;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, sub;
	Dwarf_Half ver;
	uint8_t ut;
	while (dw && found < 0 && dwarf_get_units(dw, cu, &cu, &ver, &ut, &cudie, &sub) == 0) {
		Dwarf_Die c;
		if (dwarf_child(&cudie, &c) != 0)
			continue;
		do {
			const char *n = dwarf_diename(&c);
			Dwarf_Attribute a;
			if (dwarf_tag(&c) != want_tag || !n || strcmp(n, die_name) != 0)
				continue;
			Dwarf_Die target = c;
			if (want_tag == 0x13 && dwarf_child(&c, &target) != 0)   /* first member */
				continue;
			if (!dwarf_attr(&target, attr, &a) || dwarf_whatform(&a) != 0x13 /* ref4 */)
				continue;
			found = (long)((const uint8_t *)a.valp - img);
			Dwarf_Off cu_start = dwarf_dieoffset(&cudie) - dwarf_cuoffset(&cudie);
			*die_cu_off = (int64_t)(dwarf_dieoffset(&c) - cu_start);
			break;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	return found >= 0 && (size_t)found + 4 <= size ? found : -1;
}

static void patch_self_ref(const char *name, int tag, unsigned attr)
{
	size_t size;
	uint8_t *img = test_read_fixture("layout_c_dw4", &size);
	REQUIRE(img);
	elf_version(EV_CURRENT);
	int64_t self;
	long at = attr_offset(img, size, name, attr, tag, &self);
	if (at < 0) {
		TEST_FAIL_("%s: attribute not found", name);
		free(img);
		return;
	}
	uint32_t v = (uint32_t)self;
	memcpy(img + at, &v, 4);
	sym_errc rc = exercise(img, size);
	CHECK(rc == SYM_OK || rc == SYM_E_BAD_DWARF);
	free(img);
}

/* typedef holder_t -> itself */
TEST(typedef_loop) { patch_self_ref("holder_t", 0x16, 0x49); }
/* struct holder's first member has type struct holder (embeds itself) */
TEST(struct_embeds_itself) { patch_self_ref("holder", 0x13, 0x49); }

TEST(truncated_images)
{
	size_t size;
	uint8_t *img = test_read_fixture("layout_c_dw5", &size);
	REQUIRE(img);
	for (size_t n = 0; n < size; n += 1 + n / 16) {
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, img, n);
		exercise(cut, n);
		free(cut);
	}
	free(img);
}

TEST(flipped_images)
{
	size_t size;
	uint8_t *img = test_read_fixture("layout_cxx", &size);
	REQUIRE(img);
	uint8_t *copy = malloc(size);
	srand(14);
	for (int i = 0; i < 300; i++) {
		memcpy(copy, img, size);
		for (int k = 0; k < 8; k++)
			copy[(size_t)rand() % size] ^= (uint8_t)(1u << (rand() % 8));
		exercise(copy, size);
	}
	free(copy);
	free(img);
}

TEST(corrupt_blobs)
{
	size_t size, bs;
	uint8_t *img = test_read_fixture("layout_cxx", &size);
	REQUIRE(img);
	void *blob = NULL;
	REQUIRE(sym_layout_build(img, size, NULL, &blob, &bs, NULL) == SYM_OK);
	sym_layout *l = NULL;
	for (size_t n = 0; n < bs; n++)
		CHECK(sym_layout_load(blob, n, &l, NULL) == SYM_E_BAD_INDEX && !l);
	uint8_t *copy = malloc(bs + 1);
	srand(41);
	int loaded = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(copy + 1, blob, bs);   /* misaligned on purpose */
		copy[1 + (size_t)rand() % bs] ^= (uint8_t)(1u << (rand() % 8));
		if (sym_layout_load(copy + 1, bs, &l, NULL) == SYM_OK) {
			loaded++;
			for (uint32_t t = 0; t < sym_layout_type_count(l); t++) {
				sym_layout_type_info ti;
				sym_layout_field f;
				if (sym_layout_type(l, t, &ti))
					sym_layout_field_in(l, t, "a.b.c", &f, NULL);
			}
			sym_layout_destroy(l);
		}
	}
	CHECK(loaded > 0);
	uint32_t v = 99;
	memcpy(copy, blob, bs);
	memcpy(copy + 8, &v, 4);   /* another version */
	CHECK(sym_layout_load(copy, bs, &l, NULL) == SYM_E_BAD_INDEX);
	free(copy);
	free(blob);
	free(img);
}

TEST_MAIN()
