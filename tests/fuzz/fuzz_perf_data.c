// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_perf_data: symbolctl's perf.data reader (cmd/symbolctl/ctl_perf_data.h)
 * on outside bytes, with caps scaled down so the fuzzer stays fast; a file it
 * accepts must hold together (every stack's frames inside the frame array,
 * every frame's mapping inside the mapping array and covering its address)
 * and must turn into a pprof profile (ctl_perf_profile.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "cmd/symbolctl/ctl_perf_data.h"
#include "cmd/symbolctl/ctl_perf_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const ctl_perf_limits lim = {.max_maps = 256, .max_stacks = 256, .max_frames = 4096,
				     .max_depth = 128, .max_attrs = 16};
	ctl_perf_data d;
	char why[256];
	if (!ctl_perf_read(data, size, &lim, &d, why, sizeof(why))) {
		if (!why[0])
			abort();   /* a refusal says why */
		return 0;
	}
	for (size_t i = 0; i < d.n_stacks; i++) {
		const ctl_perf_stack *s = &d.stacks[i];
		if (s->n == 0 || s->first > d.n_frames || s->n > d.n_frames - s->first ||
		    s->count == 0)
			abort();
	}
	for (size_t i = 0; i < d.n_frames; i++) {
		const ctl_perf_frame *f = &d.frames[i];
		if (f->map > d.n_maps)
			abort();
		if (f->map && (f->ip < d.maps[f->map - 1].start || f->ip >= d.maps[f->map - 1].limit))
			abort();
	}
	uint8_t *prof = NULL;
	size_t len = 0;
	if (!ctl_perf_profile(&d, &prof, &len, why, sizeof(why)) && !why[0])
		abort();
	free(prof);
	ctl_perf_data_release(&d);
	return 0;
}
