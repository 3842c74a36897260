/*
 * bench_lookup: warm lookup rate of one index held in memory.
 *
 * Reads an ELF file (and optionally its dwz supplementary file), builds its
 * index with sym_index_build (timed), loads it, then symbolizes the addresses
 * of ADDR_FILE (one hex address per line, as bench_symbolize.sh writes them)
 * in a loop on one thread, full inline chain each time, best of several
 * passes. Prints one `key value` line per figure for the script to show.
 *
 * usage: bench_lookup ELF ADDR_FILE [--alt FILE] [--passes N] [--blob-out FILE]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_io.h"
#include "symbolizer/sym_index.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: bench_lookup ELF ADDR_FILE [--alt FILE] [--passes N] "
				"[--blob-out FILE]\n");
		return 2;
	}
	const char *elf_path = argv[1], *addr_path = argv[2], *blob_out = NULL;
	struct alt alt = {0};
	int passes = 5;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--alt") && i + 1 < argc)
			alt.data = read_file(argv[++i], &alt.size);
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			passes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--blob-out") && i + 1 < argc)
			blob_out = argv[++i];
		else {
			fprintf(stderr, "bench_lookup: unknown argument %s\n", argv[i]);
			return 2;
		}
	}

	size_t elf_size, n;
	void *elf = read_file(elf_path, &elf_size);
	uint64_t *addrs = read_addrs(addr_path, &n);

	sym_build_options opts = {0};
	opts.alt_resolver = alt_resolve;
	opts.alt_ctx = &alt;
	sym_error err = {0};
	void *blob = NULL;
	size_t blob_size = 0;
	double t0 = now();
	if (sym_index_build(elf, elf_size, &opts, &blob, &blob_size, &err) != SYM_OK) {
		fprintf(stderr, "bench_lookup: index build: %s\n", err.msg);
		return 1;
	}
	double t_build = now() - t0;
	free(elf);
	if (blob_out) {
		FILE *f = fopen(blob_out, "wb");
		if (!f || fwrite(blob, 1, blob_size, f) != blob_size || fclose(f) != 0) {
			fprintf(stderr, "bench_lookup: writing %s failed\n", blob_out);
			return 1;
		}
	}

	sym_index *idx = NULL;
	t0 = now();
	if (sym_index_load(blob, blob_size, &idx, &err) != SYM_OK) {
		fprintf(stderr, "bench_lookup: index load: %s\n", err.msg);
		return 1;
	}
	double t_load = now() - t0;

	sym_frame frames[64];
	uint64_t sink = 0, found = 0, total_frames = 0;
	double best = 1e30;
	for (int p = 0; p < passes; p++) {
		t0 = now();
		for (size_t i = 0; i < n; i++) {
			size_t k = sym_index_lookup(idx, addrs[i], frames, 64);
			sink += k ? frames[0].line + (uintptr_t)frames[0].display_name : 0;
			if (p == 0) {
				found += k > 0;
				total_frames += k;
			}
		}
		double t = now() - t0;
		if (t < best)
			best = t;
	}
	printf("addresses %zu\n", n);
	printf("found %" PRIu64 "\n", found);
	printf("frames_per_address %.3f\n", (double)total_frames / (double)n);
	printf("build_seconds %.3f\n", t_build);
	printf("load_seconds %.6f\n", t_load);
	printf("blob_bytes %zu\n", blob_size);
	printf("lookup_seconds_best %.6f\n", best);
	printf("lookups_per_second %.0f\n", (double)n / best);
	printf("ns_per_lookup %.1f\n", best * 1e9 / (double)n);
	printf("checksum %" PRIu64 "\n", sink);
	sym_index_destroy(idx);
	free(blob);
	free(addrs);
	free((void *)alt.data);
	return 0;
}
