// SPDX-License-Identifier: Apache-2.0
/*
 * symbolctl layout: struct and union layouts of a local ELF file's DWARF
 * (symbolizer/sym_layout.h), printed as pahole prints them or as JSON;
 * --field resolves member paths to offsets.
 */
#include <limits.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/symbolctl/exit_codes.h"
#include "cmd/symbolctl/commands.h"
#include "cmd/symbolctl/ctl_flags.h"
#include "cmd/symbolctl/debug_file.h"
#include "cmd/symbolctl/rpc_call.h"
#include "cmd/symbolctl/file_map.h"
#include "cmd/symbolctl/layout_print.h"
#include "cmd/symbolctl/layout_remote.h"
#include "symbolizer/sym_layout.h"

#define MAX_LAYOUTS 64

struct opts {
	const char *exe, *alt, *blob_out, *server, *build_id;
	int wait_s;
	const char **types, **fields;
	int n_types, n_fields;
	bool json, all, sizes;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: symbolctl layout -e FILE [--alt FILE] [--json] TYPE... [--field PATH]...\n"
		"       symbolctl layout -e FILE [--alt FILE] --all [--json] | --sizes\n"
		"       symbolctl layout --server URL --build-id HEX [--wait S] TYPE... [--field PATH]...\n"
		"         (symbolizerd's GetTypeLayouts; printed as --json; asks again while\n"
		"          PENDING, up to S seconds, default 60)\n"
		"Prints struct/union layouts from FILE's DWARF as pahole does (or JSON).\n"
		"  TYPE          'struct task_struct', 'task_struct', a typedef, 'ns::Box<int>'\n"
		"  --field PATH  TYPE.member.member: offset, bit offset, size and type\n"
		"  --all         every type;  --sizes  'name<TAB>size' per type (pahole --sizes)\n"
		"  --alt FILE    dwz supplementary file (default: by build ID under\n"
		"                /usr/lib/debug/.build-id, or the link's path)\n"
		"  --save FILE   also write the layout blob to FILE\n"
		"\n"
		"1 means a type was not found; 4 that FILE could not be read or indexed.\n"
		CTL_EXIT_HELP);
}

static bool add_field(void *obj, const char *value, char *err, size_t err_size)
{
	(void)err, (void)err_size;
	struct opts *o = obj;
	o->fields[o->n_fields++] = value;  /* room for every argument */
	return true;
}

static const base_flag layout_flags[] = {
	{"-e", "FILE", BASE_FLAG_STRING, offsetof(struct opts, exe), 0, NULL, "the ELF file"},
	{"--alt", "FILE", BASE_FLAG_STRING, offsetof(struct opts, alt), 0, NULL, "dwz file"},
	{"--field", "PATH", BASE_FLAG_CUSTOM, 0, 0, add_field, "TYPE.member.member (repeatable)"},
	{"--json", NULL, BASE_FLAG_BOOL, offsetof(struct opts, json), 0, NULL, "JSON"},
	{"--all", NULL, BASE_FLAG_BOOL, offsetof(struct opts, all), 0, NULL, "every type"},
	{"--sizes", NULL, BASE_FLAG_BOOL, offsetof(struct opts, sizes), 0, NULL,
	 "name and size per type"},
	{"--save", "FILE", BASE_FLAG_STRING, offsetof(struct opts, blob_out), 0, NULL,
	 "also write the layout blob"},
	{"--server", "URL", BASE_FLAG_STRING, offsetof(struct opts, server), 0, NULL, "the daemon"},
	CTL_RPC_PROTOCOL_FLAG,
	{"--build-id", "HEX", BASE_FLAG_STRING, offsetof(struct opts, build_id), 0, NULL,
	 "the file's build ID"},
	{"--wait", "S", BASE_FLAG_INT, offsetof(struct opts, wait_s), INT_MAX, NULL,
	 "seconds to ask again while PENDING"},
};

/* -1 to go on, else the exit status. o->types and o->fields: free them. */
static int parse(int argc, char **argv, struct opts *o)
{
	o->fields = calloc((size_t)argc + 1, sizeof(char *));
	if (!o->fields)
		return CTL_EXIT_IO;
	const base_flag_group g = {"Flags", layout_flags,
				   sizeof(layout_flags) / sizeof(layout_flags[0]), o};
	char **types;
	int rc = ctl_flags_parse("layout", &g, 1, 0, argc, argv, &types, &o->n_types, usage);
	o->types = (const char **)types;
	if (rc >= 0)
		return rc;
	if (o->server && o->build_id && (o->n_types || o->n_fields))
		return -1;
	if (!o->exe || (!o->n_types && !o->n_fields && !o->all && !o->sizes)) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	return -1;
}

struct alt_ctx {
	const char *exe, *alt;
	file_map map;
	bool loaded;
};

/* The dwz file: --alt, else /usr/lib/debug/.build-id/xx/rest.debug, else the link's path. */
static bool resolve_alt(void *arg, const sym_build_id *id, const char *path, const void **data,
			size_t *size)
{
	struct alt_ctx *a = arg;
	char byid[4096], rel[4096];
	const char *cands[3];
	int n = 0;
	if (a->alt) {
		cands[n++] = a->alt;
	} else {
		char hex[SYM_BUILD_ID_HEX_MAX];
		sym_build_id_to_hex(id, hex);
		snprintf(byid, sizeof(byid), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		cands[n++] = byid;
		const char *slash = strrchr(a->exe, '/');
		if (path[0] != '/' && slash)
			snprintf(rel, sizeof(rel), "%.*s/%s", (int)(slash - a->exe), a->exe, path);
		else
			snprintf(rel, sizeof(rel), "%s", path);
		cands[n++] = rel;
	}
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(cands[i], "rb");
		if (!f)
			continue;
		fclose(f);
		if (file_map_open(&a->map, cands[i])) {
			a->loaded = true;
			*data = a->map.data;
			*size = a->map.size;
			return true;
		}
	}
	return false;
}

static void print_field(const struct opts *o, const sym_layout *l, const char *path)
{
	sym_layout_field f;
	sym_error err = {0};
	if (sym_layout_field_path(l, path, &f, &err)) {
		if (o->json) {
			printf("{\"path\":");
			layout_print_json_string(stdout, path);
			printf(",\"found\":false,\"error\":");
			layout_print_json_string(stdout, err.msg);
			printf("}");
		} else {
			printf("%s: %s\n", path, err.msg);
		}
		return;
	}
	if (o->json) {
		printf("{\"path\":");
		layout_print_json_string(stdout, path);
		printf(",\"found\":true,\"offset\":%" PRIu64 ",\"bit_offset\":%u,\"bit_size\":%u,"
		       "\"size\":%" PRIu64 ",\"type\":", f.offset, f.bit_offset, f.bit_size, f.size);
		layout_print_json_string(stdout, f.type_name);
		printf("}");
	} else if (f.bit_size) {
		printf("%s: offset %" PRIu64 " bit %u bits %u size %" PRIu64 " type %s\n", path,
		       f.offset, f.bit_offset, f.bit_size, f.size, f.type_name);
	} else {
		printf("%s: offset %" PRIu64 " size %" PRIu64 " type %s\n", path, f.offset, f.size,
		       f.type_name);
	}
}

static int print_type(const struct opts *o, const sym_layout *l, const char *name, bool first)
{
	uint32_t ts[MAX_LAYOUTS];
	size_t n = sym_layout_find(l, name, ts, MAX_LAYOUTS);
	if (n > MAX_LAYOUTS)
		n = MAX_LAYOUTS;
	if (o->json) {
		printf("%s{\"query\":", first ? "" : ",");
		layout_print_json_string(stdout, name);
		printf(",\"found\":%s,\"layouts\":[", n ? "true" : "false");
		for (size_t i = 0; i < n; i++) {
			if (i)
				printf(",");
			layout_print_json(stdout, l, ts[i]);
		}
		printf("]}");
		return n ? CTL_EXIT_OK : CTL_EXIT_NOT_FOUND;
	}
	if (!n) {
		fprintf(stderr, "symbolctl: %s: no such type\n", name);
		return CTL_EXIT_NOT_FOUND;
	}
	for (size_t i = 0; i < n; i++) {
		sym_layout_type_info ti;
		if (n > 1 && sym_layout_type(l, ts[i], &ti))
			printf("/* layout %zu of %zu, from %s */\n", i + 1, n, ti.cu);
		layout_print_pahole(stdout, l, ts[i]);
	}
	return 0;
}

static int print_all(const struct opts *o, const sym_layout *l)
{
	uint32_t n = sym_layout_type_count(l);
	if (o->json)
		printf("{\"types\":[");
	for (uint32_t t = 0; t < n; t++) {
		sym_layout_type_info ti;
		sym_layout_type(l, t, &ti);
		if (o->sizes)
			printf("%s\t%" PRIu64 "\n", ti.name, ti.size);
		else if (o->json)
			(t ? printf(",\n") : 0), layout_print_json(stdout, l, t);
		else
			layout_print_pahole(stdout, l, t);
	}
	if (o->json)
		printf("]}\n");
	return 0;
}

static int print_queries(const struct opts *o, const sym_layout *l)
{
	int rc = 0;
	if (o->json)
		printf("{\"types\":[");
	for (int i = 0; i < o->n_types; i++)
		rc |= print_type(o, l, o->types[i], i == 0);
	if (o->json)
		printf("],\"fields\":[");
	for (int i = 0; i < o->n_fields; i++) {
		if (o->json && i)
			printf(",");
		print_field(o, l, o->fields[i]);
	}
	if (o->json)
		printf("]}\n");
	return rc;
}

static int save_blob(const char *path, const void *blob, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(blob, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		return CTL_EXIT_IO;
	}
	return 0;
}

int cmd_layout(int argc, char **argv)
{
	struct opts o = {.wait_s = 60};
	int rc = parse(argc, argv, &o);
	if (rc >= 0) {
		free(o.types);
		free(o.fields);
		return rc;
	}
	if (o.server) {
		ctl_lower_build_id(o.build_id);
		rc = layout_remote(o.server, o.build_id, o.types, o.n_types, o.fields, o.n_fields,
				   o.wait_s);
		free(o.types);
		free(o.fields);
		return rc;
	}
	struct alt_ctx alt = {.exe = o.exe, .alt = o.alt};
	file_map exe = {0};
	void *blob = NULL;
	size_t size = 0;
	sym_layout *l = NULL;
	sym_error err = {0};
	/* The same lookup as addr2line -e: a stripped FILE's debug file by build ID
	 * and .gnu_debuglink under /usr/lib/debug (debug_file_open). */
	static const char *const dirs[] = {"/usr/lib/debug"};
	if (debug_file_open("layout", o.exe, dirs, 1, false, false, &exe, &alt.exe)) {
		rc = CTL_EXIT_IO;
		goto out;
	}
	sym_layout_options bo = {.alt_resolver = resolve_alt, .alt_ctx = &alt};
	if (sym_layout_build(exe.data, exe.size, &bo, &blob, &size, &err) ||
	    sym_layout_load(blob, size, &l, &err)) {
		fprintf(stderr, "symbolctl: %s: %s\n", o.exe, err.msg);
		rc = CTL_EXIT_IO;
		goto out;
	}
	if (o.blob_out && save_blob(o.blob_out, blob, size))
		rc = CTL_EXIT_IO;
	else
		rc = o.all || o.sizes ? print_all(&o, l) : print_queries(&o, l);
out:
	sym_layout_destroy(l);
	free(blob);
	file_map_close(&exe);
	if (alt.loaded)
		file_map_close(&alt.map);
	free(o.types);
	free(o.fields);
	return rc;
}
