/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_io: the input files of the benchmark programs: a whole file read into
 * memory, and the address lists (one hex address per line) that the bench
 * scripts draw. Each program includes it once; errors end the program.
 */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	size_t cap = 1 << 16, len = 0;
	uint64_t *v = malloc(cap * sizeof(*v));
	char line[128];
	while (v && fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);
		if (end == line)
			continue;
		if (len == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				break;
		}
		v[len++] = a;
	}
	fclose(f);
	if (!v || len == 0) {
		fprintf(stderr, "bench: no addresses in %s\n", path);
		exit(1);
	}
	*n = len;
	return v;
}

#endif
