// SPDX-License-Identifier: Apache-2.0
/*
 * gopclntab_synth: the synthetic pclntab (see gopclntab_synth.h), laid out as
 * Go's linker lays one out (cmd/link/internal/ld/pcln.go): header, function
 * names, cu table, file names, pc-value tables, then the functab and _func
 * records; the inline tree in a separate go:func.* buffer.
 */
#include "gopclntab_synth.h"

#include <string.h>

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t add(synth *s, const void *p, size_t n)
{
	size_t at = s->tab_len;
	memcpy(s->tab + at, p, n);
	s->tab_len += n;
	return at;
}

static size_t add32(synth *s, uint32_t v)
{
	uint8_t b[4];
	put32(b, v);
	return add(s, b, 4);
}

static size_t add64(synth *s, uint64_t v)
{
	uint8_t b[8];
	put64(b, v);
	return add(s, b, 8);
}

/* Inline tree node in the version's layout. */
static void inl_node(synth *s, int version, int ix, uint32_t nameoff, int32_t parent_pc,
		     int16_t parent)
{
	uint8_t *p = s->gofunc + (version >= 120 ? 16 : 20) * ix;
	if (version >= 120) {
		put32(p + 4, nameoff);
		put32(p + 8, (uint32_t)parent_pc);
		put32(p + 12, 1);
		s->gofunc_len = 16 * (size_t)(ix + 1);
	} else {
		p[0] = (uint8_t)parent;
		p[1] = (uint8_t)((uint16_t)parent >> 8);
		put32(p + 4, 0);
		put32(p + 8, 0);
		put32(p + 12, nameoff);
		put32(p + 16, (uint32_t)parent_pc);
		s->gofunc_len = 20 * (size_t)(ix + 1);
	}
}

/* One _func record with its pcdata and funcdata. */
static size_t add_func(synth *s, int version, uint32_t entryoff, uint32_t nameoff, uint32_t pcfile,
		       uint32_t pcln, uint32_t inl_pcdata)
{
	size_t at = version >= 118 ? add32(s, entryoff) : add64(s, SYNTH_TEXT + entryoff);
	uint32_t npcdata = inl_pcdata ? 3 : 0;
	uint32_t fields[8] = {nameoff, 0, 0, 0, pcfile, pcln, npcdata, 0};
	for (int i = 0; i < 8; i++)
		add32(s, fields[i]);
	if (version >= 120)
		add32(s, 1);   /* startLine */
	uint8_t tail[4] = {0, 0, 0, (uint8_t)(inl_pcdata ? 4 : 0)};
	add(s, tail, 4);
	if (inl_pcdata) {
		add32(s, 0);
		add32(s, 0);
		add32(s, inl_pcdata);
		if (version >= 118) {
			for (int i = 0; i < 3; i++)
				add32(s, UINT32_MAX);
			add32(s, 0);   /* FUNCDATA_InlTree: offset 0 from go:func.* */
		} else {
			if (s->tab_len & 4)
				add32(s, 0);
			for (int i = 0; i < 3; i++)
				add64(s, 0);
			add64(s, SYNTH_GOFUNC);
		}
	}
	return at;
}

void synth_build(synth *s, int version, int cycle)
{
	memset(s, 0, sizeof(*s));
	uint32_t magic = version >= 120 ? 0xfffffff1u : version >= 118 ? 0xfffffff0u : 0xfffffffau;
	add32(s, magic);
	uint8_t pre[4] = {0, 0, 1, 8};
	add(s, pre, 4);
	unsigned words = version >= 118 ? 8 : 7;
	size_t hdr = s->tab_len;
	s->off_header_nfunc = hdr;
	for (unsigned i = 0; i < words; i++)
		add64(s, 0);
	uint64_t w[8] = {2, 2};
	unsigned k = 2;
	if (version >= 118)
		w[k++] = SYNTH_TEXT;
	/* function names */
	w[k++] = s->tab_len;
	static const char names[] = "main.outer\0main.inl[go.shape.int_0]\0main.f2\0main.leaf";
	add(s, names, sizeof(names));
	uint32_t n_outer = 0, n_inl = 11, n_f2 = 36, n_leaf = 44;
	/* cu table: file 0 a.go, file 1 b.go */
	w[k++] = s->tab_len;
	add32(s, 0);
	add32(s, 5);
	/* file names */
	w[k++] = s->tab_len;
	add(s, "a.go\0b.go", 10);
	/* pc-value tables (offset 0 means none, so a pad byte first) */
	size_t pc = s->tab_len;
	w[k++] = pc;
	uint8_t pad = 0;
	add(s, &pad, 1);
	uint8_t file0[] = {2, 0x40, 0};
	uint8_t line0[] = {22, 0x10, 20, 0x10, 20, 0x20, 0};
	uint8_t inl0[] = {0, 0x10, 2, 0x10, 2, 0x10, 3, 0x10, 0};
	uint8_t file1[] = {4, 0x20, 0};
	uint8_t line1[] = {12, 0x20, 0};
	uint32_t o_file0 = (uint32_t)(add(s, file0, sizeof(file0)) - pc);
	uint32_t o_line0 = (uint32_t)(add(s, line0, sizeof(line0)) - pc);
	uint32_t o_inl0 = (uint32_t)(add(s, inl0, sizeof(inl0)) - pc);
	uint32_t o_file1 = (uint32_t)(add(s, file1, sizeof(file1)) - pc);
	uint32_t o_line1 = (uint32_t)(add(s, line1, sizeof(line1)) - pc);
	while (s->tab_len % 8)
		add(s, &pad, 1);
	/* functab and _func records */
	size_t ft = s->tab_len;
	w[k++] = ft;
	s->off_ftab = ft;
	size_t fsz = version >= 118 ? 4 : 8;
	for (int i = 0; i < 5; i++)
		fsz == 4 ? add32(s, 0) : add64(s, 0);
	s->off_func0 = add_func(s, version, 0, n_outer, o_file0, o_line0, o_inl0);
	s->off_func1 = add_func(s, version, 0x40, n_leaf, o_file1, o_line1, 0);
	uint64_t ftv[5] = {0, s->off_func0 - ft, 0x40, s->off_func1 - ft, 0x60};
	if (version < 118) {
		ftv[0] += SYNTH_TEXT;
		ftv[2] += SYNTH_TEXT;
		ftv[4] += SYNTH_TEXT;
	}
	for (int i = 0; i < 5; i++)
		fsz == 4 ? put32(s->tab + ft + 4 * i, (uint32_t)ftv[i]) : put64(s->tab + ft + 8 * i, ftv[i]);
	for (unsigned i = 0; i < words; i++)
		put64(s->tab + hdr + 8 * i, w[i]);
	/* the inline tree: node 0 main.inl called at 0x08 (line 10), node 1 main.f2
	 * called from node 0 at 0x18 (line 20); with cycle, node 0's call site is
	 * inside node 0 itself */
	inl_node(s, version, 0, n_inl, cycle ? 0x18 : 0x08, -1);
	inl_node(s, version, 1, n_f2, 0x18, 0);
}

/* A 1.2-layout _func: entry, 7 fields, funcID/pad/pad/nfuncdata, pcdata, funcdata. */
static size_t add_func_12(synth *s, int go, uint32_t entryoff, uint32_t nameoff, uint32_t pcfile,
			  uint32_t pcln, uint32_t inl_pcdata)
{
	size_t at = add64(s, SYNTH_TEXT + entryoff);
	unsigned pcd = go >= 113 ? 2 : 1, fd = go >= 113 ? 4 : 2;
	uint32_t npcdata = inl_pcdata ? pcd + 1 : 0;
	uint32_t fields[7] = {nameoff, 0, 0, 0, pcfile, pcln, npcdata};
	for (int i = 0; i < 7; i++)
		add32(s, fields[i]);
	uint8_t tail[4] = {0, 0, 0, (uint8_t)(inl_pcdata ? fd + 1 : 0)};
	add(s, tail, 4);
	if (!inl_pcdata)
		return at;
	for (unsigned i = 0; i < pcd; i++)
		add32(s, 0);
	add32(s, inl_pcdata);
	if (s->tab_len & 4)
		add32(s, 0);
	for (unsigned i = 0; i < fd; i++)
		add64(s, 0);
	add64(s, SYNTH_GOFUNC);
	return at;
}

void synth_build_12(synth *s, int go)
{
	memset(s, 0, sizeof(*s));
	add32(s, 0xfffffffbu);
	uint8_t pre[4] = {0, 0, 1, 8};
	add(s, pre, 4);
	s->off_header_nfunc = add64(s, 2);
	size_t ft = s->tab_len;
	s->off_ftab = ft;
	for (int i = 0; i < 5; i++)
		add64(s, 0);
	size_t fileoff_at = add32(s, 0);
	add32(s, 0);
	static const char names[] = "main.outer\0main.inl\0main.f2\0main.leaf";
	uint32_t n0 = (uint32_t)add(s, names, sizeof(names));
	uint32_t n_outer = n0, n_inl = n0 + 11, n_f2 = n0 + 20, n_leaf = n0 + 28;
	/* the file table: its count (entry 0), then files 1 and 2 */
	size_t ftab = add32(s, 3);
	size_t fa = add32(s, 0), fb = add32(s, 0);
	put32(s->tab + fa, (uint32_t)add(s, "a.go", 5));
	put32(s->tab + fb, (uint32_t)add(s, "b.go", 5));
	put32(s->tab + fileoff_at, (uint32_t)ftab);
	/* pc-value tables, offsets from the table's start; files numbered from 1 */
	uint8_t file0[] = {4, 0x40, 0};
	uint8_t line0[] = {22, 0x10, 20, 0x10, 20, 0x20, 0};
	uint8_t inl0[] = {0, 0x10, 2, 0x10, 2, 0x10, 3, 0x10, 0};
	uint8_t file1[] = {6, 0x20, 0};
	uint8_t line1[] = {12, 0x20, 0};
	uint32_t o_file0 = (uint32_t)add(s, file0, sizeof(file0));
	uint32_t o_line0 = (uint32_t)add(s, line0, sizeof(line0));
	uint32_t o_inl0 = (uint32_t)add(s, inl0, sizeof(inl0));
	uint32_t o_file1 = (uint32_t)add(s, file1, sizeof(file1));
	uint32_t o_line1 = (uint32_t)add(s, line1, sizeof(line1));
	uint8_t pad = 0;
	while (s->tab_len % 8)
		add(s, &pad, 1);
	s->off_func0 = add_func_12(s, go, 0, n_outer, o_file0, o_line0, o_inl0);
	s->off_func1 = add_func_12(s, go, 0x40, n_leaf, o_file1, o_line1, 0);
	uint64_t ftv[5] = {SYNTH_TEXT, s->off_func0, SYNTH_TEXT + 0x40, s->off_func1,
			   SYNTH_TEXT + 0x60};
	for (int i = 0; i < 5; i++)
		put64(s->tab + ft + 8 * i, ftv[i]);
	if (go >= 112) {
		inl_node(s, 116, 0, n_inl, 0x08, -1);   /* 1.12-1.19's 20-byte node */
		inl_node(s, 116, 1, n_f2, 0x18, 0);
		return;
	}
	/* Go 1.9-1.11: {parent int32, file, line, func_} */
	uint32_t old[8] = {UINT32_MAX, 1, 10, n_inl, 0, 1, 20, n_f2};
	for (int i = 0; i < 8; i++)
		put32(s->gofunc + 4 * i, old[i]);
	s->gofunc_len = 32;
}
