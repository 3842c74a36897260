/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_perf_profile: a read perf.data file (ctl_perf_data.h) as a pprof
 * profile, the input of the SymbolizeProfile RPC: one sample per distinct
 * (process, event, stack) with values [samples/count, period] (cpu/nanoseconds
 * for cpu-clock and task-clock, else events/count), labels pid and comm; one
 * location per (mapping, address) with the runtime address (callers' return
 * addresses as perf gave them: the daemon looks up address - 1 for non-leaf
 * frames); one mapping per perf mapping a frame fell in, with its runtime
 * range, file offset, file name and build ID (lowercase hex). No functions or
 * lines: symbolizing fills them in.
 */
#ifndef SYMBOLCTL_CTL_PERF_PROFILE_H
#define SYMBOLCTL_CTL_PERF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/symbolctl/ctl_perf_data.h"

/* The profile, gzipped, in *out (malloc'ed); false with why when out of memory. */
bool ctl_perf_profile(const ctl_perf_data *d, uint8_t **out, size_t *out_len, char *why,
		      size_t why_size);

/* in[0..len) as one gzip member in *out (malloc'ed); false when out of memory or
 * past 2 GiB. */
bool ctl_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len);

#endif
