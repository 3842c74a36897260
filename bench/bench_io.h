/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_io: the input files of the benchmark programs: a whole file read into
 * memory, and the address lists (one hex address per line) that the bench
 * scripts draw. Each program includes it once; errors end the program.
 */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_vec.h"

static inline void *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench: reading %s failed\n", path);
		exit(1);
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

static inline uint64_t *read_addrs(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	base_vec v;
	base_vec_init(&v, sizeof(uint64_t), SIZE_MAX / sizeof(uint64_t));
	char line[128];
	bool ok = true;
	while (ok && fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);
		if (end != line)
			ok = base_vec_append(&v, &a) == 0;
	}
	fclose(f);
	if (!ok || v.len == 0) {
		fprintf(stderr, "bench: no addresses in %s\n", path);
		exit(1);
	}
	return base_vec_take(&v, n);
}

#endif
