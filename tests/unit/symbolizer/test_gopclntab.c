// SPDX-License-Identifier: Apache-2.0
/*
 * The pclntab reader and collector (sym_gopclntab*.c) on synthetic tables in
 * the Go 1.2 (inline trees of Go 1.12 and 1.13-1.15), 1.16, 1.18 and 1.20 layouts (gopclntab_synth.c): functions, files,
 * lines, inline chains with their call lines, Go's printed names; and hostile
 * tables: every truncation, offsets out of range, absurd counts, a cycle in the
 * inline tree, random bytes. Each table is an exact-size heap copy, so ASan
 * sees any read past it.
 */
#include <stdlib.h>
#include <string.h>

#include "gopclntab_synth.h"
#include "symbolizer/sym_goname_impl.h"
#include "symbolizer/sym_gopclntab_collect_impl.h"
#include "symbolizer/sym_index.h"
#include "test.h"
#include "util.h"

#define TAB_VADDR 0x500000u

struct opened {
	uint8_t *tab, *gofunc;
	sym_gopcln_seg seg;
	sym_gopcln t;
	sym_errc rc;
};

static void open_copy(struct opened *o, const synth *s, size_t len)
{
	o->tab = malloc(len ? len : 1);
	o->gofunc = malloc(s->gofunc_len);
	memcpy(o->tab, s->tab, len);
	memcpy(o->gofunc, s->gofunc, s->gofunc_len);
	o->rc = sym_gopcln_open(&o->t, o->tab, len, TAB_VADDR, 0, NULL);
	o->seg = (sym_gopcln_seg){SYNTH_GOFUNC, o->gofunc, s->gofunc_len};
	o->t.segs = &o->seg;
	o->t.nsegs = 1;
	o->t.gofunc = SYNTH_GOFUNC;
}

static void close_copy(struct opened *o)
{
	free(o->tab);
	free(o->gofunc);
}

/* The innermost scope at addr: the deepest span covering it (ties: the last). */
static uint32_t innermost(const sym_collect *c, uint64_t addr)
{
	uint32_t best = SYM_IX_NONE, depth = 0;
	for (size_t i = 0; i < c->scope_spans.len; i++) {
		const sym_span *sp = &BASE_VEC_AT(&c->scope_spans, sym_span, i);
		if (addr >= sp->lo && addr < sp->hi && (best == SYM_IX_NONE || sp->b >= depth)) {
			best = sp->a;
			depth = sp->b;
		}
	}
	return best;
}

static const char *func_name(const sym_collect *c, uint32_t scope)
{
	const struct sym_ix_scope *sc = &BASE_VEC_AT(&c->scopes, struct sym_ix_scope, scope);
	const struct sym_ix_func *f = &BASE_VEC_AT(&c->funcs, struct sym_ix_func, sc->func);
	return sym_strtab_get(&c->strs, f->display);
}

static uint32_t line_at(const sym_collect *c, uint64_t addr, const char **file)
{
	for (size_t i = 0; i < c->line_spans.len; i++) {
		const sym_span *sp = &BASE_VEC_AT(&c->line_spans, sym_span, i);
		if (addr >= sp->lo && addr < sp->hi) {
			*file = sym_strtab_get(&c->strs, sp->a);
			return sp->b;
		}
	}
	*file = "";
	return 0;
}

static void check_version(int version)
{
	synth s;
	synth_build(&s, version, 0);
	struct opened o;
	open_copy(&o, &s, s.tab_len);
	REQUIRE(o.rc == SYM_OK);
	CHECK(o.t.version == version);
	CHECK(o.t.nfunc == 2);
	sym_gopcln_func f;
	REQUIRE(sym_gopcln_func_at(&o.t, 0, &f, NULL) == SYM_OK);
	CHECK(f.entry == SYNTH_TEXT && f.end == SYNTH_TEXT + 0x40);
	CHECK(!strcmp(sym_gopcln_name(&o.t, f.nameoff), "main.outer"));
	CHECK(sym_gopcln_pcvalue(&o.t, f.pcln, &f, SYNTH_TEXT + 0x18, NULL) == 20);
	CHECK(!strcmp(sym_gopcln_file(&o.t, &f, 0), "a.go"));
	CHECK(sym_gopcln_has_inltree(&o.t, &f));
	sym_collect c;
	REQUIRE(sym_collect_init(&c) == 0);
	REQUIRE(sym_gopcln_collect(&o.t, &c, NULL) == SYM_OK);
	/* 0x24: main.f2 a.go:30, in main.inl[...] called at a.go:20, in main.outer called at a.go:10 */
	const char *file;
	CHECK(line_at(&c, SYNTH_TEXT + 0x24, &file) == 30 && !strcmp(file, "a.go"));
	uint32_t sc = innermost(&c, SYNTH_TEXT + 0x24);
	REQUIRE(sc != SYM_IX_NONE);
	CHECK(!strcmp(func_name(&c, sc), "main.f2"));
	const struct sym_ix_scope *s1 = &BASE_VEC_AT(&c.scopes, struct sym_ix_scope, sc);
	CHECK(s1->call_line == 20);
	REQUIRE(s1->parent != SYM_IX_NONE && s1->parent < sc);
	CHECK(!strcmp(func_name(&c, s1->parent), "main.inl[...]"));
	const struct sym_ix_scope *s0 = &BASE_VEC_AT(&c.scopes, struct sym_ix_scope, s1->parent);
	CHECK(s0->call_line == 10);
	CHECK(!strcmp(sym_strtab_get(&c.strs, s0->call_file), "a.go"));
	REQUIRE(s0->parent != SYM_IX_NONE);
	CHECK(!strcmp(func_name(&c, s0->parent), "main.outer"));
	CHECK(BASE_VEC_AT(&c.scopes, struct sym_ix_scope, s0->parent).parent == SYM_IX_NONE);
	/* outside inlined code, and the second function */
	CHECK(!strcmp(func_name(&c, innermost(&c, SYNTH_TEXT + 0x34)), "main.outer"));
	CHECK(!strcmp(func_name(&c, innermost(&c, SYNTH_TEXT + 0x44)), "main.leaf"));
	CHECK(line_at(&c, SYNTH_TEXT + 0x44, &file) == 5 && !strcmp(file, "b.go"));
	sym_collect_deinit(&c);
	close_copy(&o);
}

/* The 1.2 layout: buildinfo says whether the image is Go 1.13+. */
static void check_12(int go, bool buildinfo, bool want_inline)
{
	synth s;
	synth_build_12(&s, go);
	struct opened o;
	open_copy(&o, &s, s.tab_len);
	REQUIRE(o.rc == SYM_OK);
	o.t.buildinfo = buildinfo;
	CHECK(o.t.version == SYM_GOPCLN_12 && o.t.nfunc == 2);
	sym_gopcln_func f;
	REQUIRE(sym_gopcln_func_at(&o.t, 0, &f, NULL) == SYM_OK);
	CHECK(!strcmp(sym_gopcln_name(&o.t, f.nameoff), "main.outer"));
	CHECK(!strcmp(sym_gopcln_file(&o.t, &f, 1), "a.go"));
	CHECK(sym_gopcln_has_inltree(&o.t, &f) == want_inline);
	sym_collect c;
	REQUIRE(sym_collect_init(&c) == 0);
	REQUIRE(sym_gopcln_collect(&o.t, &c, NULL) == SYM_OK);
	const char *file;
	CHECK(line_at(&c, SYNTH_TEXT + 0x24, &file) == 30 && !strcmp(file, "a.go"));
	uint32_t sc = innermost(&c, SYNTH_TEXT + 0x24);
	REQUIRE(sc != SYM_IX_NONE);
	if (want_inline) {
		CHECK(!strcmp(func_name(&c, sc), "main.f2"));
		const struct sym_ix_scope *s1 = &BASE_VEC_AT(&c.scopes, struct sym_ix_scope, sc);
		CHECK(s1->call_line == 20);
		REQUIRE(s1->parent != SYM_IX_NONE);
		CHECK(!strcmp(func_name(&c, s1->parent), "main.inl"));
		const struct sym_ix_scope *s0 =
			&BASE_VEC_AT(&c.scopes, struct sym_ix_scope, s1->parent);
		CHECK(s0->call_line == 10 && !strcmp(sym_strtab_get(&c.strs, s0->call_file), "a.go"));
		REQUIRE(s0->parent != SYM_IX_NONE);
		CHECK(!strcmp(func_name(&c, s0->parent), "main.outer"));
	} else {
		CHECK(!strcmp(func_name(&c, sc), "main.outer"));   /* no chain, never a wrong one */
	}
	CHECK(line_at(&c, SYNTH_TEXT + 0x44, &file) == 5 && !strcmp(file, "b.go"));
	sym_collect_deinit(&c);
	close_copy(&o);
}

TEST(go115_layout) { check_12(115, true, true); }
TEST(go112_layout) { check_12(112, false, true); }
/* Go 1.9-1.11's tree in 1.12's slots: refused by its shape. */
TEST(go111_layout_refused) { check_12(111, false, false); }
/* A Go 1.13-1.15 table read as 1.12's (no build-info blob): its slot 1 is not
 * the inline index, so no chain. */
TEST(go115_without_buildinfo) { check_12(115, false, false); }

TEST(go116) { check_version(116); }
TEST(go118) { check_version(118); }
TEST(go120) { check_version(120); }

TEST(inline_cycle_ends)
{
	for (int v = 116; v <= 120; v += 2) {
		synth s;
		synth_build(&s, v == 116 ? 116 : v, 1);
		struct opened o;
		open_copy(&o, &s, s.tab_len);
		REQUIRE(o.rc == SYM_OK);
		sym_collect c;
		REQUIRE(sym_collect_init(&c) == 0);
		CHECK(sym_gopcln_collect(&o.t, &c, NULL) == SYM_OK);
		/* every chain ends, and parents come first */
		for (size_t i = 0; i < c.scopes.len; i++) {
			const struct sym_ix_scope *sc = &BASE_VEC_AT(&c.scopes, struct sym_ix_scope, i);
			CHECK(sc->parent == SYM_IX_NONE || sc->parent < i);
		}
		sym_collect_deinit(&c);
		close_copy(&o);
	}
}

/* Opens and collects whatever the bytes are; only the absence of a crash counts. */
static void survive(const synth *s, size_t len)
{
	struct opened o;
	open_copy(&o, s, len);
	if (o.rc == SYM_OK) {
		sym_collect c;
		if (sym_collect_init(&c) == 0) {
			sym_error err;
			if (sym_gopcln_collect(&o.t, &c, &err) != SYM_OK)
				CHECK(err.msg[0] != '\0');
			sym_collect_deinit(&c);
		}
	}
	close_copy(&o);
}

TEST(every_truncation)
{
	for (int v = 116; v <= 120; v++) {
		if (v != 116 && v != 118 && v != 120)
			continue;
		synth s;
		synth_build(&s, v, 0);
		for (size_t n = 0; n < s.tab_len; n++)
			survive(&s, n);
	}
}

TEST(offsets_out_of_range)
{
	static const uint64_t bad[] = {0, 7, 0x3ff, 0x400, 0xffffffffu, 0x7fffffffffffffffull,
				       UINT64_MAX};
	for (int v = 116; v <= 120; v += 2) {
		synth base;
		synth_build(&base, v, 0);
		unsigned words = v >= 118 ? 8 : 7;
		for (unsigned w = 0; w < words; w++)
			for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
				synth s = base;
				for (int i = 0; i < 8; i++)
					s.tab[base.off_header_nfunc + 8 * w + i] = (uint8_t)(bad[b] >> (8 * i));
				survive(&s, s.tab_len);
			}
		/* every uint32 of the _func records and the functab */
		for (size_t off = base.off_ftab; off + 4 <= base.tab_len; off += 4)
			for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
				synth s = base;
				for (int i = 0; i < 4; i++)
					s.tab[off + i] = (uint8_t)(bad[b] >> (8 * i));
				survive(&s, s.tab_len);
			}
	}
}

TEST(absurd_counts)
{
	synth s;
	synth_build(&s, 120, 0);
	struct opened o;
	/* 2^40 functions: refused, not allocated for or looped over */
	synth t = s;
	t.tab[s.off_header_nfunc + 5] = 1;
	open_copy(&o, &t, t.tab_len);
	CHECK(o.rc != SYM_OK);
	close_copy(&o);
	/* npcdata and nfuncdata at their maximum */
	t = s;
	memset(t.tab + s.off_func0 + 4 + 6 * 4, 0xff, 4);
	t.tab[s.off_func0 + 43] = 0xff;
	survive(&t, t.tab_len);
	/* an inline index of 2^30 and a pc delta of 2^32 - 1 */
	t = s;
	for (size_t i = 0; i + 4 < t.tab_len; i++)
		if (!memcmp(t.tab + i, "\x00\x10\x02\x10\x02\x10\x03\x10", 8)) {
			memcpy(t.tab + i, "\xff\xff\xff\xff\x0f\x10\x02\x10", 8);
			break;
		}
	survive(&t, t.tab_len);
}

TEST(random_bytes)
{
	srand(28);
	for (int round = 0; round < 3000; round++) {
		synth s;
		synth_build(&s, round % 3 == 0 ? 116 : round % 3 == 1 ? 118 : 120, round & 1);
		int flips = 1 + rand() % 8;
		for (int k = 0; k < flips; k++)
			s.tab[8 + (size_t)rand() % (s.tab_len - 8)] = (uint8_t)rand();
		for (int k = 0; k < 2; k++)
			s.gofunc[(size_t)rand() % s.gofunc_len] = (uint8_t)rand();
		survive(&s, s.tab_len);
	}
}

TEST(not_a_pclntab)
{
	static const uint8_t junk[16] = {0xf1, 0xff, 0xff, 0xff, 0, 0, 3, 8};
	sym_gopcln t;
	sym_error err;
	CHECK(sym_gopcln_open(&t, junk, sizeof(junk), 0, 0, &err) != SYM_OK);
	CHECK(!sym_gopcln_looks_like(junk, 8));
}

TEST(go_names)
{
	char buf[128];
	CHECK(sym_goname_print("main.Map[go.shape.int_0,go.shape.string_1]", buf, sizeof(buf)) &&
	      !strcmp(buf, "main.Map[...]"));
	CHECK(sym_goname_print("main.(*T[go.shape.int_0]).Method", buf, sizeof(buf)) &&
	      !strcmp(buf, "main.(*T[...]).Method"));
	CHECK(sym_goname_print("main.F[main.S[int]].func1", buf, sizeof(buf)) &&
	      !strcmp(buf, "main.F[...].func1"));
	CHECK(!sym_goname_print("main.Map[...]", buf, sizeof(buf)));
	CHECK(!sym_goname_print("main.(*T).Method", buf, sizeof(buf)));
	CHECK(!sym_goname_print("main.f.func1", buf, sizeof(buf)));
	CHECK(!sym_goname_print("odd]name[", buf, sizeof(buf)));
	CHECK(!sym_goname_print("main.Map[x]", buf, 6));   /* too small: left as it is */
}

/* sym_index_get_info names the source: DWARF, or symbols for a file without. */
static void check_source(const char *fixture, sym_index_source want)
{
	size_t n, bs;
	uint8_t *img = test_read_fixture(fixture, &n);
	REQUIRE(img);
	int rc;
	void *blob = build_blob(img, n, 0, &bs, &rc, NULL, 0);
	REQUIRE(rc == SYM_OK);
	sym_index *idx;
	REQUIRE(sym_index_load(blob, bs, &idx, NULL) == SYM_OK);
	sym_index_info info;
	sym_index_get_info(idx, &info);
	CHECK_EQ_U(info.source, want);
	CHECK(!(info.flags & SYM_INDEX_FROM_PCLNTAB));
	sym_index_destroy(idx);
	free(blob);
	free(img);
}

TEST(index_source)
{
	check_source("c_O2_dw5", SYM_INDEX_SOURCE_DWARF);
	check_source("symtab_only", SYM_INDEX_SOURCE_SYMTAB);
	CHECK(!strcmp(sym_index_source_name(SYM_INDEX_SOURCE_PCLNTAB), "pclntab"));
	CHECK(!strcmp(sym_index_source_name(SYM_INDEX_SOURCE_DWARF), "dwarf"));
	CHECK(!strcmp(sym_index_source_name((sym_index_source)99), "none"));
}

TEST_MAIN()
