/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_perf_impl.h: internal to the perf.data reader (ctl_perf_data.c reads the
 * file and its records, ctl_perf_sample.c a SAMPLE record into the table of
 * distinct stacks, ctl_perf_resolve.c gives frames their mappings). Not for
 * other files of symbolctl: they use ctl_perf_data.h.
 */
#ifndef SYMBOLCTL_CTL_PERF_IMPL_H
#define SYMBOLCTL_CTL_PERF_IMPL_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_hash_map.h"
#include "base/base_vec.h"
#include "cmd/symbolctl/ctl_perf_data.h"

/* include/uapi/linux/perf_event.h, the bits this reader uses. */
#define PERF_SAMPLE_IP (1ull << 0)
#define PERF_SAMPLE_TID (1ull << 1)
#define PERF_SAMPLE_TIME (1ull << 2)
#define PERF_SAMPLE_ADDR (1ull << 3)
#define PERF_SAMPLE_READ (1ull << 4)
#define PERF_SAMPLE_CALLCHAIN (1ull << 5)
#define PERF_SAMPLE_ID (1ull << 6)
#define PERF_SAMPLE_CPU (1ull << 7)
#define PERF_SAMPLE_PERIOD (1ull << 8)
#define PERF_SAMPLE_STREAM_ID (1ull << 9)
#define PERF_SAMPLE_REGS_USER (1ull << 12)
#define PERF_SAMPLE_STACK_USER (1ull << 13)
#define PERF_SAMPLE_IDENTIFIER (1ull << 16)
#define PERF_FORMAT_TOTAL_TIME_ENABLED (1ull << 0)
#define PERF_FORMAT_TOTAL_TIME_RUNNING (1ull << 1)
#define PERF_FORMAT_ID (1ull << 2)
#define PERF_FORMAT_GROUP (1ull << 3)
#define PERF_FORMAT_LOST (1ull << 4)
#define PERF_CONTEXT_HV ((uint64_t)-32)
#define PERF_CONTEXT_KERNEL ((uint64_t)-128)
#define PERF_CONTEXT_USER ((uint64_t)-512)
#define PERF_CONTEXT_MAX ((uint64_t)-4095)
#define PERF_RECORD_MISC_CPUMODE_MASK 7u
#define PERF_RECORD_MISC_KERNEL 1u
#define PERF_RECORD_MISC_USER 2u

/* One COMM record: the latest name of a thread. */
typedef struct perf_comm {
	uint32_t pid, tid, seq;
	const char *comm;
} perf_comm;

/* One FORK record of a new process: its parent's mappings are its own. */
typedef struct perf_fork {
	uint32_t pid, ppid;
} perf_fork;

/* One entry of the HEADER_BUILD_ID feature section. */
typedef struct perf_build_id {
	const char *file;
	uint8_t id[CTL_PERF_BUILD_ID_MAX];
	uint8_t len;
	bool kernel;
} perf_build_id;

/* Attribute of an event ID (PERF_SAMPLE_ID / IDENTIFIER), sorted by id. */
typedef struct perf_id_attr {
	uint64_t id;
	uint32_t attr;
} perf_id_attr;

BASE_VEC_DEFINE(perf_maps, ctl_perf_map)
BASE_VEC_DEFINE(perf_frames, ctl_perf_frame)
BASE_VEC_DEFINE(perf_stacks, ctl_perf_stack)
BASE_VEC_DEFINE(perf_comms, perf_comm)
BASE_VEC_DEFINE(perf_forks, perf_fork)
BASE_VEC_DEFINE(perf_build_ids, perf_build_id)
BASE_VEC_DEFINE(perf_id_attrs, perf_id_attr)

struct perf_reader;

/* A distinct stack: its frames are read through the reader's vector. */
typedef struct perf_stack_key {
	const struct perf_reader *r;
	uint64_t hash;
	uint32_t pid, attr;
	size_t first, n;
} perf_stack_key;

uint64_t perf_stack_key_hash(const perf_stack_key *k);
bool perf_stack_key_eq(const perf_stack_key *a, const perf_stack_key *b);
BASE_HASH_MAP(perf_stack_table, perf_stack_key, size_t, perf_stack_key_hash, perf_stack_key_eq)

typedef struct perf_reader {
	const uint8_t *buf;
	size_t len;
	const ctl_perf_limits *lim;
	char *why;
	size_t why_size;
	ctl_perf_attr *attrs;
	size_t n_attrs;
	bool same_layout;          /* every attribute has attrs[0]'s sample layout */
	perf_id_attrs ids;
	perf_maps maps;
	perf_frames frames;
	perf_stacks stacks;
	perf_stack_table table;
	perf_comms comms;
	perf_forks forks;
	perf_build_ids build_ids;
	uint32_t seq;
	uint64_t n_samples, n_dropped;
} perf_reader;

/* Sets r->why from fmt; returns false. */
bool perf_fail(perf_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Little-endian loads (the buffer's bounds are checked by the caller). */
static inline uint64_t perf_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t perf_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* qsort and bsearch on a vector that may be empty (its data NULL: not theirs to take). */
static inline void perf_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void *perf_find(const void *key, const void *base, size_t n, size_t size,
			      int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, base, n, size, cmp) : NULL;
}

/* A SAMPLE record's body (after its 8-byte header) into the stack table. */
bool perf_sample(perf_reader *r, const uint8_t *p, size_t n, uint16_t misc);

/* After all records: build IDs, each frame's mapping, each stack's comm. */
bool perf_resolve(perf_reader *r);

#endif
