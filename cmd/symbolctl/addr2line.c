// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl addr2line: symbolizes addresses of a local ELF file through the
 * symbolizer library, in llvm-symbolizer's output format. Builds the index in
 * memory (or loads a saved one with --index), then answers addresses from the
 * arguments or, one per line, from stdin, flushing each answer. A file without
 * DWARF is answered from its separate debug file when one is found (see
 * debug_file.h), as llvm-symbolizer and eu-addr2line do.
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_answer.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/debug_file.h"
#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/file_map.h"
#include "cmd/symbolctl/llvm_format.h"
#include "symbolizer/sym_index.h"

#define MAX_DEBUG_DIRS 32

struct opts {
	const char *exe, *alt, *index_in, *index_out;
	const char *section;          /* --section: addresses are offsets within it */
	uint64_t sec_base, sec_size;  /* its address and size in the index */
	bool no_inlines, no_demangle, no_debug_lookup, verbose;
	const char *debug_dirs[MAX_DEBUG_DIRS];
	size_t n_debug_dirs;
	size_t *n_bad;                /* lines that are not an address (exit status 1) */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl addr2line -e FILE [--alt FILE] [--no-inlines] [--no-demangle]\n"
		"                           [--index-out BLOB] [--debug-dir DIR]... [--no-debug-lookup]\n"
		"                           [--section NAME] [--verbose] [ADDR...]\n"
		"       symbolctl addr2line --index BLOB [--no-inlines] [--no-demangle]\n"
		"                           [--section NAME] [ADDR...]\n"
		"\n"
		"Symbolizes hex addresses (0x optional) of an ELF file, a binary or a separate\n"
		"debug file, printing llvm-symbolizer's default format. Without ADDR, reads one\n"
		"address per line from stdin and answers each as it arrives. A FILE without\n"
		"DWARF (stripped) is answered from its separate debug file when one is found:\n"
		"by build ID (DIR/.build-id/xx/rest.debug), then by .gnu_debuglink (next to\n"
		"FILE, in its .debug/ subdir, then under DIR + FILE's directory; the CRC-32\n"
		"must match), as llvm-symbolizer and eu-addr2line do; else from its symbols.\n"
		"\n"
		"  -e, --exe, --obj FILE  the ELF file\n"
		"  --alt FILE             dwz supplementary file (default: found by the build ID in\n"
		"                         .gnu_debugaltlink under DIR/.build-id, or its path)\n"
		"  --debug-dir DIR        where debug files live (repeatable; default /usr/lib/debug)\n"
		"  --no-debug-lookup      answer from FILE itself, never from a separate debug file\n"
		"  -v, --verbose          say on stderr which file the answers come from\n"
		"  --no-inlines           one frame per address: the function the code belongs to\n"
		"  --no-demangle          print linkage (mangled) names\n"
		"  --section NAME         addresses are offsets within section NAME (.text of a\n"
		"                         kernel module: the address minus\n"
		"                         /sys/module/M/sections/.text), as eu-addr2line --section\n"
		"  --index-out BLOB       save the index blob built from FILE\n"
		"  --index BLOB           answer from a saved index blob instead of FILE\n"
		"\n"
		"An address nothing covers is answered ?? as llvm-symbolizer does (not an\n"
		"error: exit status 1 is not used here).\n" CTL_EXIT_HELP);
}

static bool add_debug_dir(void *obj, const char *value, char *err, size_t err_size)
{
	struct opts *o = obj;
	if (o->n_debug_dirs == MAX_DEBUG_DIRS) {
		snprintf(err, err_size, "more than %d of them", MAX_DEBUG_DIRS);
		return false;
	}
	o->debug_dirs[o->n_debug_dirs++] = value;
	return true;
}

static const base_flag addr2line_flags[] = {
	{"--exe -e --obj", "FILE", BASE_FLAG_STRING, offsetof(struct opts, exe), 0, NULL,
	 "the ELF file"},
	{"--alt", "FILE", BASE_FLAG_STRING, offsetof(struct opts, alt), 0, NULL, "dwz file"},
	{"--no-inlines", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_inlines), 0, NULL,
	 "one frame per address"},
	{"--no-demangle", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_demangle), 0, NULL,
	 "linkage names"},
	{"--index", "BLOB", BASE_FLAG_STRING, offsetof(struct opts, index_in), 0, NULL,
	 "answer from a saved index"},
	{"--index-out", "BLOB", BASE_FLAG_STRING, offsetof(struct opts, index_out), 0, NULL,
	 "save the index"},
	{"--debug-dir", "DIR", BASE_FLAG_CUSTOM, 0, 0, add_debug_dir,
	 "where debug files live (repeatable)"},
	{"--no-debug-lookup", NULL, BASE_FLAG_BOOL, offsetof(struct opts, no_debug_lookup), 0, NULL,
	 "answer from FILE itself"},
	{"--section", "NAME", BASE_FLAG_STRING, offsetof(struct opts, section), 0, NULL,
	 "addresses are offsets within NAME"},
	{"--verbose -v", NULL, BASE_FLAG_BOOL, offsetof(struct opts, verbose), 0, NULL,
	 "which file the answers come from"},
};

/* The flags (up to the first address) into o, the addresses into *addrs;
 * -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct opts *o, char ***addrs, int *n_addrs)
{
	const base_flag_group g = {"Flags", addr2line_flags,
				   sizeof(addr2line_flags) / sizeof(addr2line_flags[0]), o};
	int rc = ctl_flags_parse("addr2line", &g, 1, BASE_FLAG_STOP_AT_POSITIONAL, argc, argv,
				 addrs, n_addrs, usage);
	if (rc >= 0)
		return rc;
	rc = CTL_EXIT_USAGE;
	if (!o->exe == !o->index_in) {
		fprintf(stderr, "symbolctl addr2line: give exactly one of -e FILE and --index BLOB\n");
		return rc;
	}
	if (o->index_out && !o->exe) {
		fprintf(stderr, "symbolctl addr2line: --index-out needs -e FILE\n");
		return rc;
	}
	if (o->n_debug_dirs == 0)
		o->debug_dirs[o->n_debug_dirs++] = "/usr/lib/debug";
	return -1;
}

/* The dwz file: --alt, else DIR/.build-id/xx/rest.debug, else the link's path. */
struct alt_ctx {
	const char *exe, *alt;
	const struct opts *o;
	file_map map;
	bool loaded;
};

/* Candidate k of the dwz file into buf: --alt; else each debug dir's build-id
 * path, then the link's path (relative to the file read). False past the last. */
static bool alt_candidate(const struct alt_ctx *a, const sym_build_id *id, const char *path,
			  size_t k, char *buf, size_t n)
{
	if (a->alt) {
		snprintf(buf, n, "%s", a->alt);
		return k == 0;
	}
	if (k < a->o->n_debug_dirs) {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(id, hex);
		snprintf(buf, n, "%s/.build-id/%.2s/%s.debug", a->o->debug_dirs[k], hex, hex + 2);
		return true;
	}
	if (k > a->o->n_debug_dirs)
		return false;
	const char *slash = strrchr(a->exe, '/');
	if (path[0] == '/' || !slash)
		snprintf(buf, n, "%s", path);
	else
		snprintf(buf, n, "%.*s/%s", (int)(slash - a->exe), a->exe, path);
	return true;
}

static bool resolve_alt(void *arg, const sym_build_id *id, const char *path, const void **data,
			size_t *size)
{
	struct alt_ctx *a = arg;
	char p[4096];
	for (size_t k = 0; alt_candidate(a, id, path, k, p, sizeof(p)); k++) {
		FILE *probe = fopen(p, "rb");
		if (!probe)
			continue;
		fclose(probe);
		if (file_map_open(&a->map, p)) {
			a->loaded = true;
			*data = a->map.data;
			*size = a->map.size;
			return true;
		}
	}
	return false;
}

static int write_blob(const char *path, const void *blob, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(blob, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

static bool write_stdout(void *arg, const void *data, size_t len)
{
	bool *write_failed = arg;
	*write_failed = fwrite(data, 1, len, stdout) != len;
	return !*write_failed;
}

/* Answers lines[0..n) on stdout (ctl_answer: one batch, a few large writes). */
static int answer_lines(const sym_index *idx, const struct opts *o, char *const *lines, size_t n,
			base_buf *scratch)
{
	ctl_answer_opts ao = {.idx = idx, .section = o->section != NULL, .sec_base = o->sec_base,
			      .sec_size = o->sec_size, .no_inlines = o->no_inlines,
			      .no_demangle = o->no_demangle};
	bool write_failed = false;
	if (!ctl_answer_lines(&ao, lines, n, scratch, write_stdout, &write_failed, o->n_bad)) {
		if (!write_failed)
			fprintf(stderr, "symbolctl addr2line: out of memory\n");
		return -1;
	}
	return 0;
}

/* The complete lines of in (NUL-terminated in place, \r\n as \n) into *lines. */
static size_t split_lines(char *buf, size_t len, char ***lines, size_t *cap, size_t *used)
{
	size_t n = 0;
	char *start = buf, *end = buf + len, *nl;
	while ((nl = memchr(start, '\n', (size_t)(end - start))) != NULL) {
		*nl = '\0';
		if (nl > start && nl[-1] == '\r')
			nl[-1] = '\0';
		if (n == *cap) {
			size_t c = *cap ? *cap * 2 : 1024;
			char **l = realloc(*lines, c * sizeof(*l));
			if (!l)
				break;
			*lines = l;
			*cap = c;
		}
		(*lines)[n++] = start;
		start = nl + 1;
	}
	*used = (size_t)(start - buf);
	return n;
}

/*
 * Reads addresses from stdin with read(2) and answers every complete line in
 * hand, flushing only before the next read could block: a pipe that sends one
 * line at a time gets each answer before it sends the next, and a file of a
 * million lines is a few large batches and writes.
 */
static int answer_stdin(const sym_index *idx, const struct opts *o)
{
	enum { CHUNK = 1 << 20, MAX_LINE = 1 << 20 };
	/* Lines as they arrive; one byte past the room read into is for a NUL. */
	base_buf in, out;
	base_buf_init(&in, CHUNK + 2 * (size_t)MAX_LINE + 1);
	base_buf_init(&out, SIZE_MAX);
	char **lines = NULL;
	size_t lines_cap = 0;
	int rc = -1;
	if (!base_buf_ensure(&in, CHUNK + 1))
		goto out;
	for (;;) {
		if (fflush(stdout) != 0)
			goto out;
		size_t cap = in.cap - 1;
		if (in.len == cap) {
			if (in.len >= MAX_LINE) {
				fprintf(stderr, "symbolctl: input line longer than %d bytes\n", MAX_LINE);
				goto out;
			}
			if (!base_buf_ensure(&in, cap * 2 + 1))
				goto out;
			cap = in.cap - 1;
		}
		char *buf = (char *)in.data;
		ssize_t r = read(STDIN_FILENO, buf + in.len, cap - in.len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			buf[in.len] = '\0';
			char *last = buf;
			/* a last line without a newline */
			if (in.len && answer_lines(idx, o, &last, 1, &out))
				goto out;
			break;
		}
		in.len += (size_t)r;
		size_t used;
		size_t n = split_lines(buf, in.len, &lines, &lines_cap, &used);
		if (answer_lines(idx, o, lines, n, &out))
			goto out;
		in.len -= used;
		memmove(buf, buf + used, in.len);
	}
	rc = 0;
out:
	free(lines);
	base_buf_deinit(&in);
	base_buf_deinit(&out);
	return rc;
}

/* o->exe, or its debug file (debug_file_open: the one lookup of symbolctl). */
static int open_source(const struct opts *o, struct alt_ctx *alt, file_map *exe)
{
	return debug_file_open("addr2line", o->exe, o->debug_dirs, o->n_debug_dirs,
			       o->no_debug_lookup, o->verbose, exe, &alt->exe);
}

static int build_index(const struct opts *o, struct alt_ctx *alt, file_map *exe, void **blob,
		       size_t *size)
{
	if (open_source(o, alt, exe))
		return -1;
	sym_build_options bo = {.alt_resolver = resolve_alt, .alt_ctx = alt,
				.input_is_file_mapping = exe->mapped};
	sym_error err;
	if (sym_index_build(exe->data, exe->size, &bo, blob, size, &err) != SYM_OK) {
		fprintf(stderr, "symbolctl: %s: %s\n", alt->exe, err.msg);
		return -1;
	}
	if (o->index_out && write_blob(o->index_out, *blob, *size))
		return -1;
	return 0;
}

int cmd_addr2line(int argc, char **argv)
{
	size_t n_bad = 0;
	struct opts o = {.n_bad = &n_bad};
	char **addrs = NULL;
	int n_addrs = 0;
	int prc = parse_opts(argc, argv, &o, &addrs, &n_addrs);
	if (prc >= 0) {
		free(addrs);
		return prc;
	}
	struct alt_ctx alt = {.exe = o.exe, .alt = o.alt, .o = &o};
	file_map exe = {0}, saved = {0};
	void *blob = NULL;
	size_t size = 0;
	int rc = CTL_EXIT_IO;
	if (o.index_in) {
		if (!file_map_read_aligned(&saved, o.index_in))
			goto out;
		blob = saved.data;
		size = saved.size;
	} else if (build_index(&o, &alt, &exe, &blob, &size)) {
		goto out;
	}
	sym_index *idx;
	sym_error err;
	if (sym_index_load(blob, size, &idx, &err) != SYM_OK) {
		fprintf(stderr, "symbolctl: %s: %s\n", o.index_in ? o.index_in : o.exe, err.msg);
		goto out;
	}
	if (o.section && !sym_index_section(idx, o.section, &o.sec_base, &o.sec_size)) {
		fprintf(stderr, "symbolctl addr2line: %s: no allocated section %s\n",
			o.index_in ? o.index_in : o.exe, o.section);
		rc = CTL_EXIT_NOT_FOUND;
		goto out_idx;
	}
	if (n_addrs) {
		base_buf out;
		base_buf_init(&out, SIZE_MAX);
		int arc = answer_lines(idx, &o, addrs, (size_t)n_addrs, &out);
		base_buf_deinit(&out);
		if (arc)
			goto out_idx;
	} else {
		if (answer_stdin(idx, &o))
			goto out_idx;
	}
	rc = fflush(stdout) != 0 ? CTL_EXIT_IO : n_bad ? CTL_EXIT_NOT_FOUND : CTL_EXIT_OK;
out_idx:
	sym_index_destroy(idx);
out:
	if (!o.index_in)
		free(blob);
	free(addrs);
	file_map_close(&saved);
	file_map_close(&exe);
	if (alt.loaded)
		file_map_close(&alt.map);
	return rc;
}
