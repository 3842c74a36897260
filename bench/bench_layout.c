// SPDX-License-Identifier: Apache-2.0
/*
 * bench_layout: the layout index (symbolizer/sym_layout.h) of one ELF file:
 * build time, blob size, types, and warm query latency (20 type lookups with
 * a field path each, the batch a profiling agent asks for, best of 200).
 * Peak memory is measured around it by bench_layout.sh (/usr/bin/time -v).
 *
 *   bench_layout FILE [TYPE.field ...]   (default: the eBPF profiler's Python set)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "symbolizer/sym_layout.h"

static const char *python_paths[] = {
	"PyObject.ob_type", "PyVarObject.ob_size", "PyTypeObject.tp_name",
	"PyCodeObject.co_argcount", "PyCodeObject.co_flags", "PyCodeObject.co_firstlineno",
	"PyCodeObject.co_filename", "PyCodeObject.co_name", "PyCodeObject.co_linetable",
	"PyCodeObject.co_qualname", "PyThreadState.interp", "PyThreadState.cframe",
	"_PyCFrame.current_frame", "_PyInterpreterFrame.f_code", "_PyInterpreterFrame.previous",
	"_PyInterpreterFrame.prev_instr", "PyTupleObject.ob_item", "PyBytesObject.ob_sval",
	"PyASCIIObject.length", "PyInterpreterState.threads.head",
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_layout FILE [TYPE.field ...]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(argv[1]);
		return 1;
	}
	void *img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	void *blob;
	size_t bs;
	sym_error err = {0};
	int64_t t0 = base_mono_ns();
	if (sym_layout_build(img, (size_t)st.st_size, NULL, &blob, &bs, &err)) {
		fprintf(stderr, "bench_layout: %s\n", err.msg);
		return 1;
	}
	double build_s = base_seconds_since(t0);
	sym_layout *l;
	if (sym_layout_load(blob, bs, &l, &err)) {
		fprintf(stderr, "bench_layout: %s\n", err.msg);
		return 1;
	}
	const char **paths = argc > 2 ? (const char **)argv + 2 : python_paths;
	int n = argc > 2 ? argc - 2 : (int)(sizeof(python_paths) / sizeof(python_paths[0]));
	double best = 1e9;
	int found = 0;
	for (int pass = 0; pass < 200; pass++) {
		int64_t q0 = base_mono_ns();
		found = 0;
		for (int i = 0; i < n; i++) {
			sym_layout_field f;
			found += sym_layout_field_path(l, paths[i], &f, NULL) == SYM_OK;
		}
		double s = base_seconds_since(q0);
		if (s < best)
			best = s;
	}
	printf("build_seconds %.3f\nblob_bytes %zu\ntypes %u\n", build_s, bs,
	       sym_layout_type_count(l));
	printf("query_batch %d paths (%d found): %.1f us\n", n, found, best * 1e6);
	sym_layout_destroy(l);
	free(blob);
	munmap(img, (size_t)st.st_size);
	return 0;
}
