// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_perf_sample: one PERF_RECORD_SAMPLE of a perf.data file, decoded with
 * its event's sample_type (fields in the kernel's order: identifier, ip, tid,
 * time, addr, id, stream_id, cpu, period, read, callchain; what follows is not
 * needed) and added to the table of distinct (pid, event, stack) triples: the
 * frames of a stack seen before are dropped again and its count and period
 * grow. Callchain markers (PERF_CONTEXT_KERNEL/USER/...) set whether the
 * frames after them are kernel or user ones; hypervisor and guest frames are
 * left out. Part of the perf.data reader (ctl_perf_impl.h).
 */
#include <stdio.h>

#include "cmd/symbolctl/ctl_perf_impl.h"

uint64_t perf_stack_key_hash(const perf_stack_key *k)
{
	return k->hash;
}

bool perf_stack_key_eq(const perf_stack_key *a, const perf_stack_key *b)
{
	if (a->hash != b->hash || a->pid != b->pid || a->attr != b->attr || a->n != b->n)
		return false;
	const ctl_perf_frame *f = perf_frames_data(&a->r->frames);
	for (size_t i = 0; i < a->n; i++)
		if (f[a->first + i].ip != f[b->first + i].ip ||
		    f[a->first + i].kernel != f[b->first + i].kernel)
			return false;
	return true;
}

/* Bytes of the sample at *off: k more must be there. */
static bool room(size_t n, size_t off, uint64_t k)
{
	return off <= n && k <= n - off;
}

static bool skip_read(const uint8_t *p, size_t n, size_t *off, uint64_t rf)
{
	uint64_t each = 8 + (rf & PERF_FORMAT_ID ? 8 : 0) + (rf & PERF_FORMAT_LOST ? 8 : 0);
	uint64_t head = (rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? 8 : 0) +
			(rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? 8 : 0);
	uint64_t nr = 1;
	if (rf & PERF_FORMAT_GROUP) {
		if (!room(n, *off, 8))
			return false;
		nr = perf_u64(p + *off);
		*off += 8;
	}
	if (!room(n, *off, head) || nr > (n - *off - head) / each)
		return false;
	*off += head + nr * each;
	return true;
}

/* The attribute of a sample by its event ID; false when no attribute has it. */
static bool attr_of_id(const perf_reader *r, uint64_t id, uint32_t *attr)
{
	const perf_id_attr *a = perf_id_attrs_data(&r->ids);
	size_t lo = 0, hi = perf_id_attrs_len(&r->ids);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == perf_id_attrs_len(&r->ids) || a[lo].id != id)
		return false;
	*attr = a[lo].attr;
	return true;
}

/* The frames of the sample pushed onto r->frames; false (told) past a cap. */
static bool push_frames(perf_reader *r, const uint8_t *chain, uint64_t nr, uint16_t misc)
{
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	int ctx = mode == PERF_RECORD_MISC_KERNEL ? 1 : mode == PERF_RECORD_MISC_USER ? 0 : -1;
	size_t kept = 0;
	for (uint64_t i = 0; i < nr && kept < r->lim->max_depth; i++) {
		uint64_t ip = perf_u64(chain + 8 * i);
		if (ip >= PERF_CONTEXT_MAX) {
			ctx = ip == PERF_CONTEXT_KERNEL ? 1 : ip == PERF_CONTEXT_USER ? 0 : -1;
			continue;
		}
		if (ctx < 0)
			continue;   /* hypervisor or guest */
		ctl_perf_frame *f = perf_frames_push(&r->frames);
		if (!f)
			return perf_fail(r, "more than %zu frames in distinct stacks",
					 r->lim->max_frames);
		*f = (ctl_perf_frame){.ip = ip, .kernel = (uint8_t)ctx};
		kept++;
	}
	return true;
}

/* The frames just pushed (from first on) as a stack of pid: new, or counted again. */
static bool add_stack(perf_reader *r, uint32_t pid, uint32_t attr, size_t first,
		      uint64_t period)
{
	size_t n = perf_frames_len(&r->frames) - first;
	if (n == 0) {
		r->n_dropped++;
		return true;
	}
	const ctl_perf_frame *f = perf_frames_data(&r->frames) + first;
	uint64_t h = 1469598103934665603ull ^ pid ^ ((uint64_t)attr << 32);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (f[i].ip + f[i].kernel)) * 1099511628211ull;
	perf_stack_key k = {r, h ^ (h >> 31), pid, attr, first, n};
	bool fresh;
	size_t *slot = perf_stack_table_put(&r->table, &k, &fresh);
	if (!slot)
		return perf_fail(r, "out of memory for the stack table");
	if (!fresh) {
		r->frames.v.len = first;   /* seen before: its frames are there already */
		ctl_perf_stack *s = &perf_stacks_data(&r->stacks)[*slot];
		s->count++;
		s->period += period;
		return true;
	}
	ctl_perf_stack *s = perf_stacks_push(&r->stacks);
	if (!s) {
		perf_stack_table_remove(&r->table, &k);
		return perf_fail(r, "more than %zu distinct stacks", r->lim->max_stacks);
	}
	*s = (ctl_perf_stack){.pid = pid, .attr = attr, .first = first, .n = n, .count = 1,
			      .period = period};
	*slot = perf_stacks_len(&r->stacks) - 1;
	return true;
}

bool perf_sample(perf_reader *r, const uint8_t *p, size_t n, uint16_t misc)
{
	size_t off = 0;
	uint32_t attr = 0;
	uint64_t id = 0, period = 1, ip = 0;
	bool have_id = false;
	const ctl_perf_attr *a = &r->attrs[0];
	if (!r->same_layout) {   /* PERF_SAMPLE_IDENTIFIER first, checked at the header */
		if (!room(n, 0, 8))
			return perf_fail(r, "SAMPLE record too short for its identifier");
		if (!attr_of_id(r, perf_u64(p), &attr))
			return perf_fail(r, "SAMPLE record of unknown event id %llu",
					 (unsigned long long)perf_u64(p));
		a = &r->attrs[attr];
	}
	uint64_t st = a->sample_type;
	static const struct {
		uint64_t bit;
		unsigned size;
	} fixed[] = {{PERF_SAMPLE_IDENTIFIER, 8}, {PERF_SAMPLE_IP, 8}, {PERF_SAMPLE_TID, 8},
		     {PERF_SAMPLE_TIME, 8},       {PERF_SAMPLE_ADDR, 8}, {PERF_SAMPLE_ID, 8},
		     {PERF_SAMPLE_STREAM_ID, 8},  {PERF_SAMPLE_CPU, 8},  {PERF_SAMPLE_PERIOD, 8}};
	uint32_t pid = 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (!(st & fixed[i].bit))
			continue;
		if (!room(n, off, fixed[i].size))
			return perf_fail(r, "SAMPLE record truncated");
		uint64_t v = perf_u64(p + off);
		if (fixed[i].bit == PERF_SAMPLE_IDENTIFIER || fixed[i].bit == PERF_SAMPLE_ID) {
			id = v;
			have_id = true;
		} else if (fixed[i].bit == PERF_SAMPLE_IP) {
			ip = v;
		} else if (fixed[i].bit == PERF_SAMPLE_TID) {
			pid = perf_u32(p + off);
		} else if (fixed[i].bit == PERF_SAMPLE_PERIOD) {
			period = v;
		}
		off += fixed[i].size;
	}
	if (r->same_layout && r->n_attrs > 1 && have_id && !attr_of_id(r, id, &attr))
		return perf_fail(r, "SAMPLE record of unknown event id %llu",
				 (unsigned long long)id);
	if ((st & PERF_SAMPLE_READ) && !skip_read(p, n, &off, a->read_format))
		return perf_fail(r, "SAMPLE record: read values run past the record");
	r->n_samples++;
	size_t first = perf_frames_len(&r->frames);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (!room(n, off, 8))
			return perf_fail(r, "SAMPLE record: callchain truncated");
		uint64_t nr = perf_u64(p + off);
		off += 8;
		if (nr > (n - off) / 8)
			return perf_fail(r, "SAMPLE record: callchain of %llu entries runs past "
					 "the record", (unsigned long long)nr);
		if (!push_frames(r, p + off, nr, misc))
			return false;
	} else if (st & PERF_SAMPLE_IP) {
		uint8_t one[8];
		memcpy(one, &ip, 8);
		if (!push_frames(r, one, 1, misc))
			return false;
	}
	return add_stack(r, pid, attr, first, period);
}
