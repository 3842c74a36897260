// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_perf_resolve: the last step of reading a perf.data file. Mappings
 * without a build ID in their MMAP2 record take the one HEADER_BUILD_ID gives
 * their file name (the kernel's "[kernel.kallsyms]_text" that of
 * "[kernel.kallsyms]"); each frame is given the mapping it falls in: a kernel
 * frame among the kernel's and modules' mappings, a user frame among its
 * process's, else its parent's (FORK, up to 16 generations). Where mappings
 * overlap, the one starting last wins (a module inside the kernel's range),
 * then the one recorded last. Each stack gets its process's name (the last
 * COMM of its main thread, else of any thread). Part of the perf.data reader
 * (ctl_perf_impl.h).
 */
#include <stdlib.h>

#include "cmd/symbolctl/ctl_perf_impl.h"

#define FORK_DEPTH 16
#define OVERLAP_SCAN 64   /* mappings looked at below the last one starting at or before ip */

static int map_cmp(const void *a, const void *b)
{
	const ctl_perf_map *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_id_cmp(const void *a, const void *b)
{
	return strcmp(((const perf_build_id *)a)->file, ((const perf_build_id *)b)->file);
}

static int comm_cmp(const void *a, const void *b)
{
	const perf_comm *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int fork_cmp(const void *a, const void *b)
{
	const perf_fork *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const perf_build_id *build_id_of(const perf_reader *r, const char *file)
{
	perf_build_id key = {.file = file};
	return perf_find(&key, perf_build_ids_data(&r->build_ids), perf_build_ids_len(&r->build_ids),
		       sizeof(key), build_id_cmp);
}

/* The mapping (index + 1) of pid that holds ip, 0 for none. */
static uint32_t map_of(const perf_reader *r, uint32_t pid, uint64_t ip)
{
	const ctl_perf_map *m = perf_maps_data(&r->maps);
	size_t lo = 0, hi = perf_maps_len(&r->maps);
	while (lo < hi) {   /* the first mapping after (pid, ip) */
		size_t mid = lo + (hi - lo) / 2;
		if (m[mid].pid < pid || (m[mid].pid == pid && m[mid].start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < OVERLAP_SCAN && m[i - 1].pid == pid; i--, k++)
		if (ip < m[i - 1].limit)
			return (uint32_t)i;
	return 0;
}

static bool parent_of(const perf_reader *r, uint32_t pid, uint32_t *ppid)
{
	perf_fork key = {.pid = pid};
	const perf_fork *f = perf_find(&key, perf_forks_data(&r->forks), perf_forks_len(&r->forks),
				     sizeof(key), fork_cmp);
	if (!f || f->ppid == pid)
		return false;
	*ppid = f->ppid;
	return true;
}

static const char *comm_of(const perf_reader *r, uint32_t pid)
{
	const perf_comm *c = perf_comms_data(&r->comms);
	size_t lo = 0, hi = perf_comms_len(&r->comms);
	while (lo < hi) {   /* the first comm after pid's */
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].pid <= pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	const char *any = NULL;
	for (size_t i = lo; i > 0 && c[i - 1].pid == pid; i--) {
		if (c[i - 1].tid == pid)
			return c[i - 1].comm;
		if (!any)
			any = c[i - 1].comm;
	}
	return any;
}

static void give_build_ids(perf_reader *r)
{
	ctl_perf_map *m = perf_maps_data(&r->maps);
	for (size_t i = 0; i < perf_maps_len(&r->maps); i++) {
		if (m[i].build_id_len)
			continue;
		const perf_build_id *b = build_id_of(r, m[i].file);
		if (!b && m[i].pid == CTL_PERF_KERNEL_PID &&
		    !strncmp(m[i].file, "[kernel.kallsyms]", 17))
			b = build_id_of(r, "[kernel.kallsyms]");
		if (b) {
			memcpy(m[i].build_id, b->id, b->len);
			m[i].build_id_len = b->len;
		}
	}
}

bool perf_resolve(perf_reader *r)
{
	perf_sort(perf_maps_data(&r->maps), perf_maps_len(&r->maps), sizeof(ctl_perf_map), map_cmp);
	perf_sort(perf_build_ids_data(&r->build_ids), perf_build_ids_len(&r->build_ids),
	      sizeof(perf_build_id), build_id_cmp);
	perf_sort(perf_comms_data(&r->comms), perf_comms_len(&r->comms), sizeof(perf_comm), comm_cmp);
	perf_sort(perf_forks_data(&r->forks), perf_forks_len(&r->forks), sizeof(perf_fork), fork_cmp);
	give_build_ids(r);
	ctl_perf_frame *f = perf_frames_data(&r->frames);
	ctl_perf_stack *s = perf_stacks_data(&r->stacks);
	ctl_perf_map *m = perf_maps_data(&r->maps);
	for (size_t i = 0; i < perf_stacks_len(&r->stacks); i++) {
		s[i].comm = comm_of(r, s[i].pid);
		for (size_t j = s[i].first; j < s[i].first + s[i].n; j++) {
			uint32_t pid = f[j].kernel ? CTL_PERF_KERNEL_PID : s[i].pid;
			uint32_t found = map_of(r, pid, f[j].ip);
			for (int d = 0; !found && !f[j].kernel && d < FORK_DEPTH; d++) {
				if (!parent_of(r, pid, &pid))
					break;
				found = map_of(r, pid, f[j].ip);
			}
			f[j].map = found;
			if (found)
				m[found - 1].used = true;
		}
	}
	return true;
}
