// SPDX-License-Identifier: Apache-2.0
/*
 * test_ctl_perf: symbolctl's perf.data reader (cmd/symbolctl/ctl_perf_data.h)
 * on files built here byte by byte: a good one (user, kernel and module
 * frames, build IDs from MMAP2 and from HEADER_BUILD_ID, equal stacks added
 * up, a comm), then hostile ones: every truncation of it, wrong and
 * big-endian magic, pipe mode, sections and records whose sizes overflow or
 * run past the end, a callchain and read group of huge counts, caps reached,
 * a --call-graph dwarf recording. Real perf recordings: tests/integration/perf_test.py.
 */
#include <stdint.h>
#include <string.h>

#include "cmd/symbolctl/ctl_perf_data.h"
#include "test.h"

#define KERNEL_TEXT 0xffffffff81000000ull
#define MODULE_BASE 0xffffffffc0100000ull
#define ST_GOOD ((1u << 0) | (1u << 1) | (1u << 2) | (1u << 5) | (1u << 8))

typedef struct file {
	uint8_t b[8192];
	size_t n;
} file;

static void put(file *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}
static void put64(file *f, uint64_t v) { put(f, &v, 8); }
static void put32(file *f, uint32_t v) { put(f, &v, 4); }
static void at64(file *f, size_t at, uint64_t v) { memcpy(f->b + at, &v, 8); }

static void rec_header(file *f, uint32_t type, uint16_t misc, uint16_t size)
{
	put32(f, type);
	put(f, &misc, 2);
	put(f, &size, 2);
}

/* A file name padded with NULs to a multiple of 8 bytes. */
static void put_name(file *f, const char *s, size_t padded)
{
	uint8_t z[64] = {0};
	memcpy(z, s, strlen(s));
	put(f, z, padded);
}

static void mmap2(file *f, uint32_t pid, uint16_t misc, uint64_t start, uint64_t len,
		  uint64_t pgoff, const char *name, uint8_t bid_byte)
{
	rec_header(f, 10, misc | (bid_byte ? 1u << 14 : 0), 8 + 64 + 32);
	put32(f, pid);
	put32(f, pid);
	put64(f, start);
	put64(f, len);
	put64(f, pgoff);
	uint8_t id[24] = {bid_byte ? 20 : 0};
	memset(id + 4, bid_byte, 20);
	put(f, id, 24);
	put32(f, 5);   /* prot */
	put32(f, 2);   /* flags */
	put_name(f, name, 32);
}

static void sample(file *f, uint32_t pid, uint64_t period, const uint64_t *chain, size_t n)
{
	rec_header(f, 9, 2, (uint16_t)(8 + 8 + 8 + 8 + 8 + 8 + 8 * n));
	put64(f, chain[n - 1]);   /* ip */
	put32(f, pid);
	put32(f, pid);
	put64(f, 1000);          /* time */
	put64(f, period);
	put64(f, n);
	for (size_t i = 0; i < n; i++)
		put64(f, chain[i]);
}

/* The good file; *data_at the data section's offset (its size is at 48). */
static void good(file *f, uint64_t sample_type, size_t *data_at)
{
	memset(f, 0, sizeof(*f));
	put(f, "PERFILE2", 8);
	put64(f, 104);
	put64(f, 16 + 64);        /* attr_size: a VER0 attribute and its ids section */
	put64(f, 104);            /* attrs */
	put64(f, 80);
	put64(f, 0);              /* data: set below */
	put64(f, 0);
	put64(f, 0);              /* event_types */
	put64(f, 0);
	put64(f, 1u << 2);        /* features: HEADER_BUILD_ID */
	put64(f, 0);
	put64(f, 0);
	put64(f, 0);
	/* the attribute: cpu-clock, period 250000, sample_id_all */
	put32(f, 1);
	put32(f, 64);
	put64(f, 0);
	put64(f, 250000);
	put64(f, sample_type);
	put64(f, 0);
	put64(f, 1ull << 18);
	put64(f, 0);
	put64(f, 0);
	put64(f, 0);
	put64(f, 0);              /* ids section: none */
	put64(f, 0);
	*data_at = f->n;
	mmap2(f, 42, 2, 0x400000, 0x1000, 0x1000, "/bin/prog", 0xab);
	mmap2(f, UINT32_MAX, 1, KERNEL_TEXT, UINT64_MAX - KERNEL_TEXT, KERNEL_TEXT,
	      "[kernel.kallsyms]_text", 0);
	mmap2(f, UINT32_MAX, 1, MODULE_BASE, 0x4000, 0, "/lib/modules/x/m.ko", 0);
	rec_header(f, 3, 0, 8 + 8 + 8);   /* COMM 42/42 "prog" */
	put32(f, 42);
	put32(f, 42);
	put_name(f, "prog", 8);
	const uint64_t kchain[] = {(uint64_t)-128, MODULE_BASE + 0x10, KERNEL_TEXT + 0x20,
				   (uint64_t)-512, 0x400100, 0x400200};
	const uint64_t uchain[] = {(uint64_t)-512, 0x400300, 0x400200, 0x900000};
	sample(f, 42, 250000, kchain, 6);
	sample(f, 42, 250000, kchain, 6);
	sample(f, 42, 500000, uchain, 4);
	at64(f, 40, *data_at);
	at64(f, 48, f->n - *data_at);
	/* feature section table, then HEADER_BUILD_ID: one entry for the kernel */
	size_t table = f->n;
	put64(f, 0);
	put64(f, 0);
	size_t feat = f->n;
	rec_header(f, 0, 1, 8 + 4 + 24 + 24);
	put32(f, UINT32_MAX);
	uint8_t id[24];
	memset(id, 0xcd, sizeof(id));
	put(f, id, 24);
	put_name(f, "[kernel.kallsyms]", 24);
	at64(f, table, feat);
	at64(f, table + 8, f->n - feat);
}

static bool read_file(const file *f, size_t len, const ctl_perf_limits *lim, ctl_perf_data *d,
		      char *why)
{
	return ctl_perf_read(f->b, len, lim ? lim : &ctl_perf_default_limits, d, why, 256);
}

static const ctl_perf_map *map_of(const ctl_perf_data *d, const ctl_perf_frame *fr)
{
	return fr->map ? &d->maps[fr->map - 1] : NULL;
}

TEST(good_file)
{
	file f;
	size_t data_at;
	good(&f, ST_GOOD, &data_at);
	ctl_perf_data d;
	char why[256];
	REQUIRE(read_file(&f, f.n, NULL, &d, why));
	CHECK_EQ_U(d.n_samples, 3);
	REQUIRE(d.n_stacks == 2);
	CHECK(d.has_period);
	const ctl_perf_stack *k = &d.stacks[0], *u = &d.stacks[1];
	CHECK_EQ_U(k->count, 2);
	CHECK_EQ_U(k->period, 500000);
	CHECK_EQ_U(u->count, 1);
	CHECK(k->comm && !strcmp(k->comm, "prog"));
	REQUIRE(k->n == 4 && u->n == 3);
	const ctl_perf_frame *kf = &d.frames[k->first], *uf = &d.frames[u->first];
	CHECK(kf[0].kernel && kf[1].kernel && !kf[2].kernel);
	const ctl_perf_map *mod = map_of(&d, &kf[0]), *kern = map_of(&d, &kf[1]),
			   *prog = map_of(&d, &kf[2]);
	REQUIRE(mod && kern && prog);
	CHECK(!strcmp(mod->file, "/lib/modules/x/m.ko"));   /* inside the kernel's range */
	CHECK(!strcmp(kern->file, "[kernel.kallsyms]_text"));
	CHECK(kern->build_id_len == 20 && kern->build_id[0] == 0xcd);   /* HEADER_BUILD_ID */
	CHECK(!strcmp(prog->file, "/bin/prog"));
	CHECK(prog->build_id_len == 20 && prog->build_id[19] == 0xab);   /* MMAP2 */
	CHECK_EQ_U(prog->start, 0x400000);
	CHECK_EQ_U(prog->pgoff, 0x1000);
	CHECK(mod->build_id_len == 0);
	CHECK(map_of(&d, &uf[2]) == NULL);   /* 0x900000: in no mapping */
	CHECK(map_of(&d, &uf[0]) == prog);
	ctl_perf_data_release(&d);
}

TEST(every_truncation)
{
	file f;
	size_t data_at;
	good(&f, ST_GOOD, &data_at);
	char why[256];
	for (size_t len = 0; len < f.n; len++) {
		ctl_perf_data d;
		if (read_file(&f, len, NULL, &d, why)) {
			TEST_FAIL_("a cut at %zu of %zu bytes was read", len, f.n);
			ctl_perf_data_release(&d);
		} else {
			CHECK(why[0] != '\0');
		}
	}
}

static void expect_refused(const file *f, const ctl_perf_limits *lim, const char *what)
{
	ctl_perf_data d;
	char why[256];
	bool ok = read_file(f, f->n, lim, &d, why);
	CHECK(!ok);
	if (ok)
		ctl_perf_data_release(&d);
	else if (!strstr(why, what))
		TEST_FAIL_("'%s' does not say '%s'", why, what);
}

TEST(magic_and_modes)
{
	file f;
	size_t data_at;
	good(&f, ST_GOOD, &data_at);
	memcpy(f.b, "PERFILE3", 8);
	expect_refused(&f, NULL, "no PERFILE2 magic");
	memcpy(f.b, "2ELIFREP", 8);
	expect_refused(&f, NULL, "big-endian");
	memcpy(f.b, "PERFILE2", 8);
	at64(&f, 8, 16);
	expect_refused(&f, NULL, "pipe");
	good(&f, ST_GOOD | (1u << 12) | (1u << 13), &data_at);
	expect_refused(&f, NULL, "--call-graph dwarf");
}

TEST(sizes_overflowing)
{
	file f;
	size_t data_at;
	good(&f, ST_GOOD, &data_at);
	at64(&f, 40, UINT64_MAX - 8);   /* data offset */
	expect_refused(&f, NULL, "data section");
	good(&f, ST_GOOD, &data_at);
	at64(&f, 48, UINT64_MAX);       /* data size */
	expect_refused(&f, NULL, "data section");
	good(&f, ST_GOOD, &data_at);
	at64(&f, 32, 79);               /* attrs size not a whole attribute */
	expect_refused(&f, NULL, "whole number");
	good(&f, ST_GOOD, &data_at);
	at64(&f, 16, UINT64_MAX);       /* attr_size */
	expect_refused(&f, NULL, "attribute size");
	good(&f, ST_GOOD, &data_at);
	memset(f.b + data_at + 6, 0, 2);   /* first record: size 0 */
	expect_refused(&f, NULL, "below its header");
	good(&f, ST_GOOD, &data_at);
	memset(f.b + data_at + 6, 0xff, 2);   /* first record: size past the end */
	expect_refused(&f, NULL, "runs past the data section");
}

TEST(huge_counts)
{
	file f;
	size_t data_at;
	good(&f, ST_GOOD, &data_at);
	/* the first sample's callchain count: 4 MMAP2 + COMM records before it */
	size_t s = data_at + 3 * 104 + 24;
	REQUIRE(f.b[s] == 9);
	at64(&f, s + 8 + 8 + 8 + 8 + 8, 1ull << 60);
	expect_refused(&f, NULL, "callchain of");
	/* a read group of 2^60 values */
	good(&f, ST_GOOD | (1u << 4), &data_at);
	memcpy(f.b + 104 + 32, &(uint64_t){1u << 3}, 8);   /* read_format GROUP */
	at64(&f, s + 8 + 8 + 8 + 8 + 8, 1ull << 60);           /* its count, where nr was */
	expect_refused(&f, NULL, "read values");
	good(&f, ST_GOOD, &data_at);
	ctl_perf_limits lim = ctl_perf_default_limits;
	lim.max_stacks = 1;
	expect_refused(&f, &lim, "more than 1 distinct stacks");
	lim = ctl_perf_default_limits;
	lim.max_maps = 2;
	expect_refused(&f, &lim, "more than 2 MMAP records");
	lim = ctl_perf_default_limits;
	lim.max_frames = 5;
	expect_refused(&f, &lim, "more than 5 frames");
	/* the build-ID feature's section past the end of the file */
	good(&f, ST_GOOD, &data_at);
	uint64_t table;
	memcpy(&table, f.b + 40, 8);
	uint64_t dsize;
	memcpy(&dsize, f.b + 48, 8);
	at64(&f, table + dsize + 8, UINT64_MAX);
	expect_refused(&f, NULL, "HEADER_BUILD_ID section");
}

TEST_MAIN()
