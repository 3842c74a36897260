/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_perf_data: a reader of `perf record`'s perf.data files (the format of the
 * kernel tree's tools/perf/Documentation/perf.data-file-format.txt), written
 * for `symbolctl pprof --perf`. It reads the file header, the event attributes
 * (sample_type, read_format, sample_id_all), the HEADER_BUILD_ID feature
 * section and the records: SAMPLE (IP or callchain with PERF_CONTEXT_*
 * markers, pid, time, period), MMAP and MMAP2 (with the build ID when the
 * kernel put it there, PERF_RECORD_MISC_MMAP_BUILD_ID), COMM and FORK. Samples
 * with the same process and stack are added up into one stack; each frame is
 * given the mapping it falls in (kernel frames the kernel's and modules',
 * user frames their process's or a forked-from parent's). ctl_perf_profile.c
 * turns the result into a pprof profile.
 *
 * The bytes are untrusted: every offset and size is checked against the
 * buffer before it is read, every array has a cap (ctl_perf_limits), and what
 * is not supported is refused with a message naming it (a pipe-mode or
 * big-endian file, compressed records, --call-graph dwarf recordings).
 * Little-endian hosts only (as perf.data written on them). Not thread-safe:
 * one call, one thread; the result points into buf (file names, comms).
 */
#ifndef SYMBOLCTL_CTL_PERF_DATA_H
#define SYMBOLCTL_CTL_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_PERF_BUILD_ID_MAX 20
#define CTL_PERF_KERNEL_PID UINT32_MAX  /* the pid of kernel and module mappings */

typedef struct ctl_perf_limits {
	size_t max_maps;     /* MMAP/MMAP2 records kept */
	size_t max_stacks;   /* distinct (pid, stack) pairs */
	size_t max_frames;   /* frames of all distinct stacks together */
	size_t max_depth;    /* frames of one callchain (deeper ones are refused) */
	size_t max_attrs;    /* event attributes */
} ctl_perf_limits;

/* 1M mappings, 4M stacks, 64M frames, 4096 deep, 4096 attributes. */
extern const ctl_perf_limits ctl_perf_default_limits;

typedef struct ctl_perf_map {
	uint64_t start, limit, pgoff;
	const char *file;         /* NUL-terminated, inside the buffer */
	uint32_t pid;             /* CTL_PERF_KERNEL_PID for the kernel and modules */
	uint32_t seq;             /* order of the record in the file */
	uint8_t build_id[CTL_PERF_BUILD_ID_MAX];
	uint8_t build_id_len;     /* 0: none known */
	bool used;                /* some frame falls in it */
} ctl_perf_map;

typedef struct ctl_perf_frame {
	uint64_t ip;
	uint32_t map;             /* index in maps + 1; 0: in no known mapping */
	uint8_t kernel;           /* PERF_CONTEXT_KERNEL (1) or user (0) */
} ctl_perf_frame;

typedef struct ctl_perf_stack {
	uint32_t pid;
	uint32_t attr;            /* index of the event attribute */
	size_t first, n;          /* frames[first .. first + n), leaf first */
	uint64_t count, period;   /* samples, sum of their periods */
	const char *comm;         /* the process's name when a COMM told it, else NULL */
} ctl_perf_stack;

typedef struct ctl_perf_attr {
	uint32_t type;
	uint64_t config, sample_period, sample_type, read_format;
	bool freq, sample_id_all;
} ctl_perf_attr;

typedef struct ctl_perf_data {
	ctl_perf_attr *attrs;
	size_t n_attrs;
	ctl_perf_map *maps;       /* sorted by (pid, start, seq) */
	size_t n_maps;
	ctl_perf_frame *frames;
	size_t n_frames;
	ctl_perf_stack *stacks;
	size_t n_stacks;
	uint64_t n_samples;       /* SAMPLE records read */
	uint64_t n_dropped;       /* samples with no frame left (guest only, empty) */
	bool has_period;          /* every attribute samples PERF_SAMPLE_PERIOD */
} ctl_perf_data;

/*
 * Reads perf.data from buf (len bytes). True with *out filled (release it with
 * ctl_perf_data_release); false with why (why_size bytes, NUL-terminated)
 * saying what is wrong or unsupported, and *out empty.
 */
bool ctl_perf_read(const uint8_t *buf, size_t len, const ctl_perf_limits *lim,
		   ctl_perf_data *out, char *why, size_t why_size);

void ctl_perf_data_release(ctl_perf_data *d);

#endif
