/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_pprof_local: a pprof profile symbolized in this process, with no daemon
 * (`symbolctl pprof --debug-dir DIR`), through the daemon's fill step.
 */
#ifndef SYMBOLCTL_CTL_PPROF_LOCAL_H
#define SYMBOLCTL_CTL_PPROF_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Symbolizes prof[0..len) with the debug files under dirs[0..n_dirs) (by build
 * ID) or at the mappings' paths. CTL_EXIT_OK or CTL_EXIT_NOT_FOUND (some
 * mapping not found, told on stderr) with *out (malloc'ed; gzipped when the
 * input was); else CTL_EXIT_IO, told.
 */
int ctl_pprof_local(const uint8_t *prof, size_t len, const char *const *dirs, size_t n_dirs,
		    bool no_inline, bool no_demangle, uint8_t **out, size_t *out_len);

#endif
