// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the index format's structures (sym_index_format_impl.h): each
 * packed table, the 16-bit starts and their buckets, the file table and the
 * string table, corrupted one at a time by hand, must make sym_index_load
 * refuse the blob with SYM_E_BAD_INDEX; and the writer's blob round-trips
 * (each range start, and the byte before it, find their own range's row).
 */
#include <stdlib.h>
#include <string.h>

#include "symbolizer/sym_bits_impl.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_index_format_impl.h"
#include "symbolizer/sym_index_impl.h"
#include "test.h"
#include "util.h"

static uint8_t *fixture_blob_of(const char *name, size_t *bs)
{
	size_t n;
	uint8_t *img = test_read_fixture(name, &n);
	if (!img)
		return NULL;
	int rc;
	uint8_t *blob = build_blob(img, n, 0, bs, &rc, NULL, 0);
	free(img);
	return blob;
}

static uint8_t *fixture_blob(size_t *bs)
{
	return fixture_blob_of("c_O2_dw5", bs);
}

static uint8_t *copy_of(const uint8_t *blob, size_t bs)
{
	void *p = NULL;
	if (posix_memalign(&p, 8, bs))
		return NULL;
	memcpy(p, blob, bs);
	return p;
}

/* The fields' widths of a row. */
static uint32_t field_bits(const struct sym_ix_table *t)
{
	uint32_t r = 0;
	for (int f = 0; f < SYM_IX_MAX_FIELDS; f++)
		r += t->bits[f];
	return r;
}

/* A row's width: its fields', rounded up to whole bytes (format 7). */
static uint32_t row_bits(const struct sym_ix_table *t)
{
	return (field_bits(t) + 7) & ~7u;
}

static uint64_t field_bit(const struct sym_ix_table *t, uint32_t i, int f)
{
	uint64_t bit = (uint64_t)i * row_bits(t);
	for (int g = 0; g < f; g++)
		bit += t->bits[g];
	return bit;
}

static uint32_t get_field(const uint8_t *b, const struct sym_ix_table *t, uint32_t i, int f)
{
	return sym_bits_get(b + t->off, field_bit(t, i, f), t->bits[f]);
}

/* Overwrites a field; false when v does not fit its width (the case can't be built). */
static bool set_field(uint8_t *b, const struct sym_ix_table *t, uint32_t i, int f, uint32_t v)
{
	unsigned w = t->bits[f];
	if (w < 32 && v >> w)
		return false;
	uint64_t bit = field_bit(t, i, f);
	for (unsigned k = 0; k < w; k++, bit++)
		b[t->off + bit / 8] &= (uint8_t)~(1u << (bit % 8));
	sym_bits_put(b + t->off, field_bit(t, i, f), w, v);
	return true;
}

/* Is the blob refused (and never read out of bounds: ASan watches)? */
static bool refused(const uint8_t *b, size_t bs)
{
	sym_index *idx = NULL;
	sym_error err;
	sym_errc rc = sym_index_load(b, bs, &idx, &err);
	sym_index_destroy(idx);
	return rc == SYM_E_BAD_INDEX;
}

/* The header of a copy, for editing. */
#define HDR(b) ((struct sym_ix_header *)(b))

TEST(pristine_blob_loads)
{
	size_t bs;
	uint8_t *blob = fixture_blob(&bs);
	REQUIRE(blob);
	CHECK(!refused(blob, bs));
	const struct sym_ix_header *h = HDR(blob);
	CHECK_EQ_U(h->version, SYM_IX_VERSION);
	CHECK(h->ranges.count > 2);
	CHECK(h->scopes.count > 0 && h->funcs.count > 0 && h->files.count > 1);
	CHECK(h->bucket_shift <= SYM_IX_MAX_SHIFT);
	/* Narrow rows: a fixture's ranges need far fewer than the 128 bits of four u32s. */
	CHECK(row_bits(&h->ranges) < 64);
	CHECK_EQ_U(row_bits(&h->ranges) % 8, 0);
	CHECK_EQ_U(h->buckets.bits[SYM_IX_B_FIRST], SYM_IX_BUCKET_BITS);
	free(blob);
}

TEST(header_descriptors_checked)
{
	size_t bs;
	uint8_t *blob = fixture_blob(&bs);
	REQUIRE(blob);
	uint8_t *c;
	struct sym_ix_table *tabs[5];
	for (int t = 0; t < 5; t++) {
		c = copy_of(blob, bs);
		tabs[0] = &HDR(c)->ranges, tabs[1] = &HDR(c)->scopes, tabs[2] = &HDR(c)->funcs;
		tabs[3] = &HDR(c)->files, tabs[4] = &HDR(c)->buckets;
		tabs[t]->bits[0] = 33;                          /* wider than a field may be */
		CHECK(refused(c, bs));
		memcpy(c, blob, bs);
		if (t != 1 && t != 2) {                         /* tables with fewer fields */
			tabs[t]->bits[SYM_IX_MAX_FIELDS - 1] = 1; /* a field the table lacks */
			CHECK(refused(c, bs));
			memcpy(c, blob, bs);
		}
		tabs[t]->off += 4;                              /* misaligned */
		CHECK(refused(c, bs));
		memcpy(c, blob, bs);
		tabs[t]->off = bs - 8;                          /* rows and padding past the end */
		CHECK(refused(c, bs));
		memcpy(c, blob, bs);
		tabs[t]->count += (uint32_t)(bs * 8);           /* more rows than the blob holds */
		CHECK(refused(c, bs));
		memcpy(c, blob, bs);
		memset(tabs[t]->bits, 0, sizeof(tabs[t]->bits)); /* zero-width rows, absurd count */
		tabs[t]->count = UINT32_MAX;
		CHECK(refused(c, bs));
		free(c);
	}
	c = copy_of(blob, bs);
	HDR(c)->bucket_shift = SYM_IX_MAX_SHIFT + 1;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->buckets.count = 1;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->off_starts = (bs - 2 * HDR(c)->ranges.count + 8 + 7) & ~(uint64_t)7;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->version = 1;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	/* Format 7's search needs: 32-bit bucket rows, and the padding after the starts. */
	HDR(c)->buckets.bits[SYM_IX_B_FIRST] = 31;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->off_starts = (bs - 2 * HDR(c)->ranges.count - SYM_IX_STARTS_PAD + 8) & ~(uint64_t)7;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	c[HDR(c)->off_strtab + HDR(c)->strtab_size - 1] = 'x';   /* last string unterminated */
	CHECK(refused(c, bs));
	free(c);
	free(blob);
}

/* Format 4's section table: extent, count, names; and version 3 blobs refused. */
TEST(section_table_checked)
{
	size_t bs;
	uint8_t *blob = fixture_blob(&bs);
	REQUIRE(blob);
	const struct sym_ix_header *h = HDR(blob);
	REQUIRE(h->n_sections > 3);
	const struct sym_ix_section *secs = (const void *)(blob + h->off_sections);
	bool text = false;
	for (uint32_t i = 0; i < h->n_sections; i++)
		text |= !strcmp((const char *)blob + h->off_strtab + secs[i].name, ".text");
	CHECK(text);
	uint8_t *c = copy_of(blob, bs);
	HDR(c)->version = 3;                       /* an index written before sections */
	sym_error err;
	sym_index *idx = NULL;
	CHECK_EQ_U(sym_index_load(c, bs, &idx, &err), SYM_E_BAD_INDEX);
	CHECK(strstr(err.msg, "version 3, expected 8") != NULL);
	/* A blob of the previous layout (bit-packed rows, 8 to 16 ranges a bucket), or
	 * of the previous content (a function row for each unit inlining it): the
	 * service rebuilds it from the stored file (svc_resolve_load.c). */
	HDR(c)->version = 6;
	CHECK_EQ_U(sym_index_load(c, bs, &idx, &err), SYM_E_BAD_INDEX);
	CHECK(strstr(err.msg, "version 6, expected 8") != NULL);
	HDR(c)->version = 7;
	CHECK_EQ_U(sym_index_load(c, bs, &idx, &err), SYM_E_BAD_INDEX);
	CHECK(strstr(err.msg, "version 7, expected 8") != NULL);
	memcpy(c, blob, bs);
	HDR(c)->n_sections = SYM_IX_MAX_SECTIONS + 1;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->n_sections = (uint32_t)(bs / sizeof(struct sym_ix_section));  /* past the end */
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->off_sections += 4;                 /* misaligned */
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	HDR(c)->off_sections = bs + 8;
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	((struct sym_ix_section *)(c + h->off_sections))[1].name = h->strtab_size;
	CHECK(refused(c, bs));
	free(c);
	free(blob);
}

TEST(starts_and_buckets_checked)
{
	size_t bs;
	uint8_t *blob = fixture_blob(&bs);
	REQUIRE(blob);
	const struct sym_ix_header *h = HDR(blob);
	uint16_t *starts = (uint16_t *)(blob + h->off_starts);
	/* A bucket with two ranges or more, and where they are. */
	uint32_t k = 0, lo = 0, hi = 0;
	for (; k + 1 < h->buckets.count; k++) {
		lo = get_field(blob, &h->buckets, k, SYM_IX_B_FIRST);
		hi = get_field(blob, &h->buckets, k + 1, SYM_IX_B_FIRST);
		if (hi - lo >= 2)
			break;
	}
	REQUIRE(hi - lo >= 2);
	uint8_t *c = copy_of(blob, bs);
	uint16_t *cs = (uint16_t *)(c + h->off_starts);
	cs[lo + 1] = cs[lo];                               /* not strictly ascending */
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	cs[lo] = starts[lo + 1], cs[lo + 1] = starts[lo];  /* swapped */
	CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	/* A start whose high bits leave its bucket (unless a bucket spans the whole page). */
	if (h->bucket_shift < SYM_IX_MAX_SHIFT) {
		cs[lo] ^= (uint16_t)(1u << h->bucket_shift);
		CHECK(refused(c, bs));
		memcpy(c, blob, bs);
	}
	/* Bucket entries: the first not 0, the last not n, one going backwards. */
	if (set_field(c, &h->buckets, 0, SYM_IX_B_FIRST, 1))
		CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	if (set_field(c, &h->buckets, h->buckets.count - 1, SYM_IX_B_FIRST, h->ranges.count - 1))
		CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	CHECK(set_field(c, &h->buckets, k + 1, SYM_IX_B_FIRST, lo - (lo > 0)) || lo == 0);
	if (lo > 0)
		CHECK(refused(c, bs));
	memcpy(c, blob, bs);
	/* Moving a bucket boundary by one puts a range in the wrong bucket. */
	CHECK(set_field(c, &h->buckets, k + 1, SYM_IX_B_FIRST, hi - 1));
	CHECK(refused(c, bs));
	free(c);
	free(blob);
}

/* Sets field f of some row of t to the widest value it holds; expects refusal
 * when that is past limit (a reference one past the end is refused). */
static void check_out_of_range(const uint8_t *blob, size_t bs, size_t tab_off, int f,
			       uint32_t limit, const char *what)
{
	uint8_t *c = copy_of(blob, bs);
	const struct sym_ix_table *t = (const struct sym_ix_table *)(c + tab_off);
	unsigned w = t->bits[f];
	uint32_t v = w >= 32 ? UINT32_MAX : (uint32_t)((UINT64_C(1) << w) - 1);
	if (t->count == 0 || v <= limit) {
		fprintf(stderr, "  (%s: no out-of-range value fits %u bits)\n", what, w);
	} else {
		CHECK(set_field(c, t, t->count - 1, f, v));
		if (!refused(c, bs))
			TEST_FAIL_("%s out of range accepted", what);
		/* And the first value past the limit, when it fits. */
		memcpy(c, blob, bs);
		if (set_field(c, t, 0, f, limit + 1) && !refused(c, bs))
			TEST_FAIL_("%s one past the end accepted", what);
	}
	free(c);
}

#define TAB(name) offsetof(struct sym_ix_header, name)

TEST(references_checked)
{
	size_t bs;
	uint8_t *blob = fixture_blob(&bs);
	REQUIRE(blob);
	const struct sym_ix_header *h = HDR(blob);
	uint32_t ns = h->strtab_size, nf = h->files.count;
	check_out_of_range(blob, bs, TAB(ranges), SYM_IX_R_SCOPE, h->scopes.count, "range scope");
	check_out_of_range(blob, bs, TAB(ranges), SYM_IX_R_FILE, nf - 1, "range file");
	check_out_of_range(blob, bs, TAB(scopes), SYM_IX_S_FUNC, h->funcs.count - 1, "scope func");
	check_out_of_range(blob, bs, TAB(scopes), SYM_IX_S_CALL_FILE, nf - 1, "scope call file");
	check_out_of_range(blob, bs, TAB(funcs), SYM_IX_F_NAME, ns - 1, "func name");
	check_out_of_range(blob, bs, TAB(funcs), SYM_IX_F_DISPLAY, ns - 1, "func display name");
	check_out_of_range(blob, bs, TAB(funcs), SYM_IX_F_DECL_FILE, nf - 1, "func decl file");
	check_out_of_range(blob, bs, TAB(files), SYM_IX_FILE_NAME, ns - 1, "file name");

	/* A parent that is the scope itself, or after it: chains could loop. */
	uint32_t with_parent = UINT32_MAX, max_parent = 0;
	for (uint32_t i = 0; i < h->scopes.count; i++) {
		uint32_t p = get_field(blob, &h->scopes, i, SYM_IX_S_PARENT);
		if (p > max_parent)
			max_parent = p, with_parent = i;
	}
	REQUIRE(with_parent != UINT32_MAX);
	uint8_t *c = copy_of(blob, bs);
	/* Scope max_parent - 1 (a parent) pointing at itself: stored plus one. */
	CHECK(set_field(c, &h->scopes, max_parent - 1, SYM_IX_S_PARENT, max_parent));
	CHECK(refused(c, bs));
	free(c);
	free(blob);
}

/* Expects the lookup of addr to give row i (or nothing for a gap). */
static void check_row(sym_index *idx, const uint8_t *blob, uint32_t i, uint64_t addr)
{
	const struct sym_ix_header *h = HDR(blob);
	sym_frame f[16];
	size_t got = sym_index_lookup(idx, addr, f, 16);
	uint32_t scope = get_field(blob, &h->ranges, i, SYM_IX_R_SCOPE);
	uint32_t file = get_field(blob, &h->ranges, i, SYM_IX_R_FILE);
	if (scope == 0 && file == 0) {
		CHECK(got == 0);
		return;
	}
	REQUIRE(got >= 1);
	CHECK_EQ_U(f[0].line, get_field(blob, &h->ranges, i, SYM_IX_R_LINE));
	CHECK_EQ_U(f[0].column, get_field(blob, &h->ranges, i, SYM_IX_R_COLUMN));
}

/* Each range's full start, rebuilt from its bucket, finds that range, and the
 * byte before it the range before (across buckets and 64 KiB pages too). */
static void round_trip(const char *fixture, bool many_pages)
{
	size_t bs;
	uint8_t *blob = fixture_blob_of(fixture, &bs);
	if (!blob) {
		fprintf(stderr, "  (fixture %s absent)\n", fixture);
		return;
	}
	sym_index *idx;
	REQUIRE(sym_index_load(blob, bs, &idx, NULL) == SYM_OK);
	const struct sym_ix_header *h = HDR(blob);
	const uint16_t *starts = (const uint16_t *)(blob + h->off_starts);
	uint64_t prev = 0;
	for (uint32_t k = 0; k + 1 < h->buckets.count; k++) {
		uint32_t lo = get_field(blob, &h->buckets, k, SYM_IX_B_FIRST);
		uint32_t hi = get_field(blob, &h->buckets, k + 1, SYM_IX_B_FIRST);
		uint64_t page = ((uint64_t)k << h->bucket_shift) & ~(uint64_t)0xffff;
		for (uint32_t i = lo; i < hi; i++) {
			uint64_t addr = h->base + page + starts[i];
			CHECK(i == 0 || addr > prev);
			check_row(idx, blob, i, addr);
			if (i > 0)
				check_row(idx, blob, i - 1, addr - 1);
			prev = addr;
		}
	}
	CHECK_EQ_U(prev - h->base >= 0x10000, many_pages);
	sym_index_destroy(idx);
	free(blob);
}

TEST(every_range_start_round_trips)
{
	round_trip("c_O2_dw5", false);
	round_trip("rust_v0", true);   /* spans several 64 KiB pages */
}

/* The SSE2 count of starts at or below o agrees with the binary search, on
 * every length a bucket's first steps take, with the lanes past n garbage. */
TEST(bucket_search_agrees_with_binary_search)
{
	uint16_t buf[64 + 16];
	uint32_t seed = 12345;
	for (int round = 0; round < 2000; round++) {
		uint32_t n = (uint32_t)round % 49;
		for (size_t i = 0; i < sizeof(buf) / sizeof(buf[0]); i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (uint16_t)(seed >> 8);   /* past n: whatever follows */
		}
		/* n ascending starts, clustered low, high or spread over the page. */
		uint32_t v = round % 3 == 0 ? 0 : round % 3 == 1 ? 0xffff - 3 * n : seed % 1000;
		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v += 1 + (round % 3 == 1 ? 0 : (seed >> 16) % 300);
			buf[i] = (uint16_t)(v > 0xffff ? 0xffff - (n - i) : v);
		}
		for (uint32_t i = 1; i < n; i++)   /* keep them strictly ascending */
			if (buf[i] <= buf[i - 1])
				buf[i] = (uint16_t)(buf[i - 1] + 1);
		if (n && buf[n - 1] < (n > 1 ? buf[n - 2] : 0))
			continue;   /* wrapped: not a bucket */
		uint16_t probes[] = {0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff,
				     n ? buf[0] : 5, n ? (uint16_t)(buf[n - 1] + 1) : 6,
				     n > 2 ? buf[n / 2] : 7, n > 2 ? (uint16_t)(buf[n / 2] - 1) : 8};
		for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++) {
			uint32_t want = 0;
			for (uint32_t i = 0; i < n; i++)
				want += buf[i] <= probes[p];
			CHECK_EQ_U(sym_ix_count_le(buf, n, probes[p]), want);
			CHECK_EQ_U(sym_ix_count_le_scalar(buf, n, probes[p]), want);
		}
	}
}

TEST_MAIN()
