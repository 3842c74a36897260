/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_perf_file: a perf.data file on disk as the gzipped pprof profile
 * `symbolctl pprof --perf` symbolizes (ctl_perf_data.h, ctl_perf_profile.h).
 */
#ifndef SYMBOLCTL_CTL_PERF_FILE_H
#define SYMBOLCTL_CTL_PERF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * CTL_EXIT_OK with *prof (malloc'ed) and *len, else CTL_EXIT_IO with the
 * reason on stderr (unreadable, not perf.data, unsupported, no samples).
 * Unless quiet, a line on stderr counts what was read.
 */
int ctl_perf_file_profile(const char *path, bool quiet, uint8_t **prof, size_t *len);

#endif
