// SPDX-License-Identifier: Apache-2.0
/*
 * bench_lookup: warm lookup rate of one index held in memory.
 *
 * Reads an ELF file (and optionally its dwz supplementary file), builds its
 * index with sym_index_build (timed), loads it, then symbolizes the addresses
 * of ADDR_FILE (one hex address per line, as bench_symbolize.sh writes them)
 * in a loop on one thread, full inline chain each time, best of several
 * passes: in batches of 1,000 (sym_index_find_batch, then sym_index_frames
 * with the hits' rows fetched ahead, as a request's batch is served), or one
 * sym_index_lookup at a time with --single; with --ids, the frames as
 * numbers (sym_index_frame_ids_batch: function and file ids, line, column),
 * as the daemon's response reads them, naming each function and file once. Prints
 * one `key value` line per figure for the script to show.
 *
 * usage: bench_lookup ELF ADDR_FILE [--alt FILE] [--passes N] [--blob-out FILE] [--threads N]
 *        [--single] [--ids]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base_clock.h"
#include "bench/bench_io.h"
#include "symbolizer/sym_index.h"

struct alt {
	const void *data;
	size_t size;
};

static bool alt_resolve(void *ctx, const sym_build_id *id, const char *path, const void **data,
			size_t *size)
{
	struct alt *a = ctx;
	(void)id;
	(void)path;
	if (!a->data)
		return false;
	*data = a->data;
	*size = a->size;
	return true;
}

struct args {
	const char *elf_path, *addr_path, *blob_out;
	struct alt alt;
	int passes;
	unsigned threads; /* --threads: the build's DWARF walk threads, 0 = per CPU */
	bool single;
	bool ids;      /* --ids: sym_frame_ids, not sym_frame */
};

#define BATCH 1000

/* The command line into a; false (told) on bad usage. */
static bool parse_args(int argc, char **argv, struct args *a)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_lookup ELF ADDR_FILE [--alt FILE] [--passes N] "
				"[--blob-out FILE] [--threads N] [--single] [--ids]\n");
		return false;
	}
	a->elf_path = argv[1];
	a->addr_path = argv[2];
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--alt") && i + 1 < argc)
			a->alt.data = read_file(argv[++i], &a->alt.size);
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			a->passes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			a->threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--single"))
			a->single = true;
		else if (!strcmp(argv[i], "--ids"))
			a->ids = true;
		else if (!strcmp(argv[i], "--blob-out") && i + 1 < argc)
			a->blob_out = argv[++i];
		else {
			fprintf(stderr, "bench_lookup: unknown argument %s\n", argv[i]);
			return false;
		}
	}
	return true;
}

/*
 * The index of ELF built (timed), ELF freed, the index written to --blob-out;
 * false (told) on failure.
 */
static bool build(struct args *a, void *elf, size_t elf_size, void **blob, size_t *blob_size,
		  double *t_build)
{
	sym_build_options opts = {0};
	opts.alt_resolver = alt_resolve;
	opts.alt_ctx = &a->alt;
	opts.threads = a->threads;
	sym_error err = {0};
	double t0 = base_mono_s();
	if (sym_index_build(elf, elf_size, &opts, blob, blob_size, &err) != SYM_OK) {
		fprintf(stderr, "bench_lookup: index build: %s\n", err.msg);
		return false;
	}
	*t_build = base_mono_s() - t0;
	free(elf);
	if (a->blob_out) {
		FILE *f = fopen(a->blob_out, "wb");
		if (!f || fwrite(*blob, 1, *blob_size, f) != *blob_size || fclose(f) != 0) {
			fprintf(stderr, "bench_lookup: writing %s failed\n", a->blob_out);
			return false;
		}
	}
	return true;
}

struct figures {
	uint64_t sink, found, total_frames;
	double best; /* seconds of the fastest pass */
};

/* Frames of addrs[0..n) into f, one sym_index_lookup each (--single). */
static void pass_single(const sym_index *idx, const uint64_t *addrs, size_t n, bool first,
			struct figures *f)
{
	sym_frame frames[64];
	for (size_t i = 0; i < n; i++) {
		size_t k = sym_index_lookup(idx, addrs[i], frames, 64);
		f->sink += k ? frames[0].line + (uintptr_t)frames[0].display_name : 0;
		if (first) {
			f->found += k > 0;
			f->total_frames += k;
		}
	}
}

/* Counts the chain of k frames whose innermost is line (and name) into f. */
static inline void tally(struct figures *f, bool first, size_t k, uint64_t innermost)
{
	f->sink += k ? innermost : 0;
	if (first) {
		f->found += k > 0;
		f->total_frames += k;
	}
}

/* Frames as numbers of a batch's hits, as the daemon reads them
 * (sym_index_frame_ids_batch). */
static void batch_ids(const sym_index *idx, const uint32_t *hits, size_t m, bool first,
		      struct figures *f)
{
	static sym_frame_ids fids[4 * BATCH];
	uint32_t at[BATCH], counts[BATCH];
	for (size_t i = 0; i < m;) {
		size_t k = sym_index_frame_ids_batch(idx, hits + i, m - i, 64, fids,
						     sizeof(fids) / sizeof(fids[0]), at + i,
						     counts + i);
		for (size_t j = i; j < i + k; j++)
			tally(f, first, counts[j], fids[at[j]].line + fids[at[j]].function_id);
		i += k;
	}
}

/* The same in batches of BATCH: search all, then frames with rows fetched
 * ahead (or their ids). */
static void pass_batch(const sym_index *idx, const uint64_t *addrs, size_t n, bool first,
		       bool ids, struct figures *f)
{
	sym_frame frames[64];
	uint32_t hits[BATCH];
	for (size_t b = 0; b < n; b += BATCH) {
		size_t m = n - b < BATCH ? n - b : BATCH;
		sym_index_find_batch(idx, addrs + b, m, hits);
		if (ids) {
			/* No hints: the ids of a chain read rows the search has
			 * fetched (its range) or small tables (scopes); hinting them
			 * cost more than it saved. */
			batch_ids(idx, hits, m, first, f);
			continue;
		}
		for (size_t i = 0; i < m; i++) {
			if (i + 8 < m)
				sym_index_prefetch_hit(idx, hits[i + 8], 0);
			if (i + 4 < m)
				sym_index_prefetch_hit(idx, hits[i + 4], 1);
			size_t k = sym_index_frames(idx, hits[i], frames, 64);
			tally(f, first, k, frames[0].line + (uintptr_t)frames[0].display_name);
		}
	}
}

/* PASSES passes of lookups over the N addresses; counts from the first. */
static struct figures measure(const sym_index *idx, const uint64_t *addrs, size_t n, int passes,
			      bool single, bool ids)
{
	struct figures f = {.best = 1e30};
	for (int p = 0; p < passes; p++) {
		double t0 = base_mono_s();
		if (single)
			pass_single(idx, addrs, n, p == 0, &f);
		else
			pass_batch(idx, addrs, n, p == 0, ids, &f);
		double t = base_mono_s() - t0;
		if (t < f.best)
			f.best = t;
	}
	return f;
}

int main(int argc, char **argv)
{
	struct args a = {.passes = 5};
	if (!parse_args(argc, argv, &a))
		return 2;
	size_t elf_size, n;
	void *elf = read_file(a.elf_path, &elf_size);
	uint64_t *addrs = read_addrs(a.addr_path, &n);
	void *blob = NULL;
	size_t blob_size = 0;
	double t_build;
	if (!build(&a, elf, elf_size, &blob, &blob_size, &t_build))
		return 1;

	sym_index *idx = NULL;
	sym_error err = {0};
	double t0 = base_mono_s();
	if (sym_index_load(blob, blob_size, &idx, &err) != SYM_OK) {
		fprintf(stderr, "bench_lookup: index load: %s\n", err.msg);
		return 1;
	}
	double t_load = base_mono_s() - t0;

	struct figures f = measure(idx, addrs, n, a.passes, a.single, a.ids);
	printf("addresses %zu\n", n);
	printf("found %" PRIu64 "\n", f.found);
	printf("frames_per_address %.3f\n", (double)f.total_frames / (double)n);
	printf("build_seconds %.3f\n", t_build);
	printf("load_seconds %.6f\n", t_load);
	printf("blob_bytes %zu\n", blob_size);
	printf("lookup_seconds_best %.6f\n", f.best);
	printf("lookups_per_second %.0f\n", (double)n / f.best);
	printf("ns_per_lookup %.1f\n", f.best * 1e9 / (double)n);
	printf("checksum %" PRIu64 "\n", f.sink);
	sym_index_destroy(idx);
	free(blob);
	free(addrs);
	free((void *)a.alt.data);
	return 0;
}
