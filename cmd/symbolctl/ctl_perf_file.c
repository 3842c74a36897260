// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_perf_file: `symbolctl pprof --perf FILE`'s input: the perf.data file
 * mapped read-only, read (ctl_perf_data.h) and turned into a gzipped pprof
 * profile (ctl_perf_profile.h) that pprof.c sends to the daemon as it would a
 * profile read from disk. A mapping a frame fell in whose build ID neither
 * its MMAP2 record nor HEADER_BUILD_ID gave (perf writes those only of files
 * with sampled IPs, not of callers) takes the one of the file at its path on
 * this machine, as perf report does. What was read is said on stderr in one
 * line.
 */
#include "cmd/symbolctl/ctl_perf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/symbolctl/ctl_perf_data.h"
#include "cmd/symbolctl/ctl_perf_profile.h"
#include "cmd/symbolctl/exit_codes.h"
#include "symbolizer/sym_elf.h"

/* The GNU build ID of the ELF file at path into m; false when none (quietly). */
static bool build_id_on_disk(ctl_perf_map *m)
{
	int fd = open(m->file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool ok = false;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			sym_elf_info info;
			sym_error err;
			ok = sym_elf_probe(p, (size_t)st.st_size, &info, &err) == SYM_OK &&
			     info.build_id.len && info.build_id.len <= CTL_PERF_BUILD_ID_MAX;
			if (ok) {
				memcpy(m->build_id, info.build_id.bytes, info.build_id.len);
				m->build_id_len = info.build_id.len;
			}
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return ok;
}

static size_t fill_build_ids(ctl_perf_data *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n_maps; i++)
		if (d->maps[i].used && !d->maps[i].build_id_len && d->maps[i].file[0] == '/' &&
		    d->maps[i].pid != CTL_PERF_KERNEL_PID)
			n += build_id_on_disk(&d->maps[i]);
	return n;
}

int ctl_perf_file_profile(const char *path, bool quiet, uint8_t **prof, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CTL_EXIT_IO;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path,
			S_ISREG(st.st_mode) ? "an empty file, not a perf.data file" : "not a regular file");
		close(fd);
		return CTL_EXIT_IO;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		fprintf(stderr, "symbolctl pprof: %s: mmap: %s\n", path, strerror(errno));
		return CTL_EXIT_IO;
	}
	ctl_perf_data d;
	char why[256];
	int rc = CTL_EXIT_OK;
	if (!ctl_perf_read(map, (size_t)st.st_size, &ctl_perf_default_limits, &d, why, sizeof(why))) {
		fprintf(stderr, "symbolctl pprof: %s: %s\n", path, why);
		rc = CTL_EXIT_IO;
	} else {
		size_t from_disk = fill_build_ids(&d);
		if (!quiet)
			fprintf(stderr, "symbolctl pprof: %s: %llu samples (%llu without frames), "
					"%zu distinct stacks, %zu build IDs read from files on disk\n",
				path, (unsigned long long)d.n_samples, (unsigned long long)d.n_dropped,
				d.n_stacks, from_disk);
		if (d.n_stacks == 0) {
			fprintf(stderr, "symbolctl pprof: %s: no samples with frames\n", path);
			rc = CTL_EXIT_IO;
		} else if (!ctl_perf_profile(&d, prof, len, why, sizeof(why))) {
			fprintf(stderr, "symbolctl pprof: %s: %s\n", path, why);
			rc = CTL_EXIT_IO;
		}
		ctl_perf_data_release(&d);
	}
	munmap(map, (size_t)st.st_size);
	return rc;
}
