// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_perf_data: the perf.data file (ctl_perf_data.h): its header, event
 * attributes and their IDs, the HEADER_BUILD_ID feature section and the loop
 * over the data section's records (MMAP, MMAP2, COMM, FORK here; SAMPLE in
 * ctl_perf_sample.c), then ctl_perf_resolve.c. Layouts as in the kernel tree's
 * tools/perf/Documentation/perf.data-file-format.txt and
 * include/uapi/linux/perf_event.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/symbolctl/ctl_perf_impl.h"

const ctl_perf_limits ctl_perf_default_limits = {
	.max_maps = 1u << 20, .max_stacks = 1u << 22, .max_frames = 1u << 26,
	.max_depth = 4096, .max_attrs = 4096,
};

#define HEADER_SIZE 104          /* struct perf_file_header */
#define ATTR_SIZE_VER0 64        /* the first struct perf_event_attr */
#define HEADER_BUILD_ID 2        /* feature bit */
#define MAX_IDS (1u << 20)

enum {
	PERF_RECORD_MMAP = 1,
	PERF_RECORD_COMM = 3,
	PERF_RECORD_FORK = 7,
	PERF_RECORD_SAMPLE = 9,
	PERF_RECORD_MMAP2 = 10,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_COMPRESSED = 81,
};
#define PERF_RECORD_MISC_MMAP_DATA (1u << 13)
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1u << 14)
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1u << 15)

bool perf_fail(perf_reader *r, const char *fmt, ...)
{
	if (r->why[0])
		return false;   /* the first failure is the one told */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, r->why_size, fmt, ap);
	va_end(ap);
	return false;
}

/* A section {offset, size} at header offset at, inside the file. */
static bool section(perf_reader *r, size_t at, const char *what, uint64_t *off, uint64_t *size)
{
	*off = perf_u64(r->buf + at);
	*size = perf_u64(r->buf + at + 8);
	if (*off > r->len || *size > r->len - *off)
		return perf_fail(r, "%s section (offset %llu, size %llu) runs past the end of the "
				 "file (%zu bytes)", what, (unsigned long long)*off,
				 (unsigned long long)*size, r->len);
	return true;
}

static int id_cmp(const void *a, const void *b)
{
	uint64_t x = ((const perf_id_attr *)a)->id, y = ((const perf_id_attr *)b)->id;
	return x < y ? -1 : x > y;
}

/* The event IDs of attribute i (its perf_file_section at p) into r->ids. */
static bool read_ids(perf_reader *r, const uint8_t *p, uint32_t i)
{
	uint64_t off = perf_u64(p), size = perf_u64(p + 8);
	if (off > r->len || size > r->len - off || size % 8)
		return perf_fail(r, "ids of event attribute %u run past the end of the file", i);
	for (uint64_t k = 0; k < size / 8; k++)
		if (perf_id_attrs_append(&r->ids, (perf_id_attr){perf_u64(r->buf + off + 8 * k), i}))
			return perf_fail(r, "more than %u event ids", MAX_IDS);
	return true;
}

static bool read_attrs(perf_reader *r)
{
	uint64_t attr_size = perf_u64(r->buf + 16), off, size;
	if (!section(r, 24, "attrs", &off, &size))
		return false;
	if (attr_size < 16 + ATTR_SIZE_VER0 || attr_size > 1 << 16)
		return perf_fail(r, "attribute size %llu is not one perf writes",
				 (unsigned long long)attr_size);
	if (size == 0 || size % attr_size)
		return perf_fail(r, "attrs section of %llu bytes is not a whole number of %llu-byte "
				 "attributes", (unsigned long long)size, (unsigned long long)attr_size);
	r->n_attrs = size / attr_size;
	if (r->n_attrs > r->lim->max_attrs)
		return perf_fail(r, "%zu event attributes (at most %zu)", r->n_attrs,
				 r->lim->max_attrs);
	r->attrs = calloc(r->n_attrs, sizeof(*r->attrs));
	if (!r->attrs)
		return perf_fail(r, "out of memory for %zu attributes", r->n_attrs);
	bool all_identifier = true;
	r->same_layout = true;
	for (size_t i = 0; i < r->n_attrs; i++) {
		const uint8_t *p = r->buf + off + i * attr_size;
		ctl_perf_attr *a = &r->attrs[i];
		uint64_t flags = perf_u64(p + 40);
		*a = (ctl_perf_attr){.type = perf_u32(p), .config = perf_u64(p + 8),
				     .sample_period = perf_u64(p + 16),
				     .sample_type = perf_u64(p + 24), .read_format = perf_u64(p + 32),
				     .freq = (flags >> 10) & 1, .sample_id_all = (flags >> 18) & 1};
		if (a->sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER))
			return perf_fail(r, "recorded with --call-graph dwarf (user stack copies, "
					 "no callchains): unwinding them is not supported; record "
					 "with -g (or --call-graph fp or lbr)");
		all_identifier = all_identifier && (a->sample_type & PERF_SAMPLE_IDENTIFIER);
		if (a->sample_type != r->attrs[0].sample_type ||
		    a->read_format != r->attrs[0].read_format)
			r->same_layout = false;
		if (!read_ids(r, p + attr_size - 16, (uint32_t)i))
			return false;
	}
	if (!r->same_layout && !all_identifier)
		return perf_fail(r, "events with different sample layouts and no "
				 "PERF_SAMPLE_IDENTIFIER: samples cannot be told apart");
	perf_sort(perf_id_attrs_data(&r->ids), perf_id_attrs_len(&r->ids), sizeof(perf_id_attr),
	      id_cmp);
	return true;
}

/* The HEADER_BUILD_ID feature section [off, off + size): build_id_event records. */
static bool read_build_ids(perf_reader *r, uint64_t off, uint64_t size)
{
	for (uint64_t at = off; at < off + size;) {
		const uint8_t *p = r->buf + at;
		uint64_t left = off + size - at;
		if (left < 8)
			return perf_fail(r, "HEADER_BUILD_ID: record at offset %llu truncated",
					 (unsigned long long)at);
		uint16_t misc, rsize;
		memcpy(&misc, p + 4, 2);
		memcpy(&rsize, p + 6, 2);
		if (rsize < 8 + 4 + 24 + 1 || rsize > left || !memchr(p + 36, 0, rsize - 36u))
			return perf_fail(r, "HEADER_BUILD_ID: record at offset %llu has a bad size "
					 "(%u) or an unterminated file name",
					 (unsigned long long)at, rsize);
		perf_build_id *b = perf_build_ids_push(&r->build_ids);
		if (!b)
			return perf_fail(r, "more than %zu HEADER_BUILD_ID entries", r->lim->max_maps);
		uint8_t len = misc & PERF_RECORD_MISC_BUILD_ID_SIZE ? p[32] : 20;
		*b = (perf_build_id){.file = (const char *)p + 36,
				     .len = len > CTL_PERF_BUILD_ID_MAX ? CTL_PERF_BUILD_ID_MAX : len,
				     .kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
					       PERF_RECORD_MISC_KERNEL};
		memcpy(b->id, p + 12, CTL_PERF_BUILD_ID_MAX);
		at += rsize;
	}
	return true;
}

static bool read_features(perf_reader *r, uint64_t data_off, uint64_t data_size)
{
	const uint8_t *bits = r->buf + 72;   /* adds_features: 256 bits */
	if (!(bits[0] & (1u << HEADER_BUILD_ID)))
		return true;
	unsigned index = (bits[0] & 1u) + ((bits[0] >> 1) & 1u);   /* set bits before it */
	uint64_t at = data_off + data_size + 16ull * index;
	if (at > r->len || r->len - at < 16)
		return perf_fail(r, "feature sections run past the end of the file");
	uint64_t off, size;
	return section(r, (size_t)at, "HEADER_BUILD_ID", &off, &size) &&
	       read_build_ids(r, off, size);
}

/* The NUL-terminated string at p[at..n), or NULL. */
static const char *str_at(const uint8_t *p, size_t n, size_t at)
{
	return at < n && memchr(p + at, 0, n - at) ? (const char *)p + at : NULL;
}

/* MMAP (is2 false) or MMAP2: the record's body p[0..n). */
static bool read_mmap(perf_reader *r, const uint8_t *p, size_t n, uint16_t misc, bool is2)
{
	size_t name_at = is2 ? 64 : 32;
	const char *file = str_at(p, n, name_at);
	if (!file)
		return perf_fail(r, "MMAP%s record truncated or its file name unterminated",
				 is2 ? "2" : "");
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if ((misc & PERF_RECORD_MISC_MMAP_DATA) ||
	    (mode != PERF_RECORD_MISC_KERNEL && mode != PERF_RECORD_MISC_USER))
		return true;   /* data, guest or hypervisor mappings: no frames of ours */
	uint64_t start = perf_u64(p + 8), len = perf_u64(p + 16);
	if (len == 0)
		return true;
	ctl_perf_map *m = perf_maps_push(&r->maps);
	if (!m)
		return perf_fail(r, "more than %zu MMAP records", r->lim->max_maps);
	*m = (ctl_perf_map){.start = start, .limit = start + len < start ? UINT64_MAX : start + len,
			    .pgoff = perf_u64(p + 24), .file = file, .seq = r->seq,
			    .pid = mode == PERF_RECORD_MISC_KERNEL ? CTL_PERF_KERNEL_PID
								    : perf_u32(p)};
	if (is2 && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m->build_id_len = p[32] > CTL_PERF_BUILD_ID_MAX ? CTL_PERF_BUILD_ID_MAX : p[32];
		memcpy(m->build_id, p + 36, CTL_PERF_BUILD_ID_MAX);
	}
	return true;
}

static bool read_record(perf_reader *r, uint32_t type, uint16_t misc, const uint8_t *p, size_t n)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return perf_sample(r, p, n, misc);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return read_mmap(r, p, n, misc, type == PERF_RECORD_MMAP2);
	case PERF_RECORD_COMM: {
		const char *comm = str_at(p, n, 8);
		if (!comm)
			return perf_fail(r, "COMM record truncated or its name unterminated");
		if (perf_comms_append(&r->comms, (perf_comm){perf_u32(p), perf_u32(p + 4), r->seq,
							     comm}))
			return perf_fail(r, "more than %zu COMM records", r->lim->max_maps);
		return true;
	}
	case PERF_RECORD_FORK:
		if (n < 8)
			return perf_fail(r, "FORK record truncated");
		if (perf_u32(p) != perf_u32(p + 4) &&
		    perf_forks_append(&r->forks, (perf_fork){perf_u32(p), perf_u32(p + 4)}))
			return perf_fail(r, "more than %zu FORK records", r->lim->max_maps);
		return true;
	case PERF_RECORD_COMPRESSED:
		return perf_fail(r, "compressed records (perf record -z) are not supported: "
				 "record without -z or decompress with perf inject");
	default:
		return true;   /* EXIT, LOST, THROTTLE, FINISHED_ROUND, ...: nothing for us */
	}
}

static bool read_records(perf_reader *r, uint64_t off, uint64_t size)
{
	for (uint64_t at = off, end = off + size; at < end;) {
		if (end - at < 8)
			return perf_fail(r, "record at offset %llu truncated", (unsigned long long)at);
		const uint8_t *p = r->buf + at;
		uint16_t misc, rsize;
		memcpy(&misc, p + 4, 2);
		memcpy(&rsize, p + 6, 2);
		if (rsize < 8 || rsize > end - at)
			return perf_fail(r, "record at offset %llu: size %u %s",
					 (unsigned long long)at, rsize,
					 rsize < 8 ? "is below its header's" : "runs past the data section");
		uint32_t type = perf_u32(p);
		r->seq++;
		if (!read_record(r, type, misc, p + 8, rsize - 8u))
			return false;
		at += rsize;
		if (type == PERF_RECORD_AUXTRACE) {   /* its trace data follows it */
			uint64_t aux = rsize >= 16 ? perf_u64(p + 8) : 0;
			if (aux > end - at)
				return perf_fail(r, "AUXTRACE record at offset %llu: %llu bytes of "
						 "trace run past the data section",
						 (unsigned long long)(at - rsize), (unsigned long long)aux);
			at += aux;
		}
	}
	return true;
}

static bool read_header(perf_reader *r, uint64_t *data_off, uint64_t *data_size)
{
	if (r->len < 16)
		return perf_fail(r, "not a perf.data file: %zu bytes", r->len);
	if (!memcmp(r->buf, "2ELIFREP", 8))
		return perf_fail(r, "a big-endian perf.data file: not supported");
	if (!memcmp(r->buf, "PERFFILE", 8))
		return perf_fail(r, "a version 1 perf.data file: not supported (record it again)");
	if (memcmp(r->buf, "PERFILE2", 8))
		return perf_fail(r, "not a perf.data file (no PERFILE2 magic)");
	uint64_t hsize = perf_u64(r->buf + 8);
	if (hsize == 16)
		return perf_fail(r, "perf.data written to a pipe: not supported (record to a file, "
				 "or perf inject -o FILE)");
	if (hsize < HEADER_SIZE || r->len < HEADER_SIZE)
		return perf_fail(r, "perf.data header truncated (%zu bytes, header says %llu)",
				 r->len, (unsigned long long)hsize);
	return section(r, 40, "data", data_off, data_size);
}

bool ctl_perf_read(const uint8_t *buf, size_t len, const ctl_perf_limits *lim,
		   ctl_perf_data *out, char *why, size_t why_size)
{
	*out = (ctl_perf_data){0};
	perf_reader r = {.buf = buf, .len = len, .lim = lim, .why = why, .why_size = why_size};
	why[0] = '\0';
	perf_maps_init(&r.maps, lim->max_maps);
	perf_frames_init(&r.frames, lim->max_frames);
	perf_stacks_init(&r.stacks, lim->max_stacks);
	perf_stack_table_init(&r.table);
	perf_comms_init(&r.comms, lim->max_maps);
	perf_forks_init(&r.forks, lim->max_maps);
	perf_build_ids_init(&r.build_ids, lim->max_maps);
	perf_id_attrs_init(&r.ids, MAX_IDS);
	uint64_t data_off = 0, data_size = 0;
	bool ok = read_header(&r, &data_off, &data_size) && read_attrs(&r) &&
		  read_features(&r, data_off, data_size) && read_records(&r, data_off, data_size) &&
		  perf_resolve(&r);
	perf_stack_table_deinit(&r.table);
	perf_comms_deinit(&r.comms);
	perf_forks_deinit(&r.forks);
	perf_build_ids_deinit(&r.build_ids);
	perf_id_attrs_deinit(&r.ids);
	if (!ok) {
		perf_maps_deinit(&r.maps);
		perf_frames_deinit(&r.frames);
		perf_stacks_deinit(&r.stacks);
		free(r.attrs);
		return false;
	}
	out->attrs = r.attrs;
	out->n_attrs = r.n_attrs;
	out->maps = perf_maps_take(&r.maps, &out->n_maps);
	out->frames = perf_frames_take(&r.frames, &out->n_frames);
	out->stacks = perf_stacks_take(&r.stacks, &out->n_stacks);
	out->n_samples = r.n_samples;
	out->n_dropped = r.n_dropped;
	out->has_period = true;
	for (size_t i = 0; i < r.n_attrs; i++)
		out->has_period = out->has_period && (r.attrs[i].sample_type & PERF_SAMPLE_PERIOD);
	return true;
}

void ctl_perf_data_release(ctl_perf_data *d)
{
	free(d->attrs);
	free(d->maps);
	free(d->frames);
	free(d->stacks);
	*d = (ctl_perf_data){0};
}
