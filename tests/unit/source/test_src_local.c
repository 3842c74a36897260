// SPDX-License-Identifier: Apache-2.0
/*
 * test_src_local: the source interface (src_source.h) through its first
 * implementation, a local debug directory in the .build-id layout: a hit for
 * each kind, a miss, a file under another build ID's name, a debug-file name
 * holding an executable, the size cap, the NULL scan slot; and src_check_file
 * on its own. The files are the c_stripped fixture and its .debug file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/src_source.h"
#include "test.h"

struct files {
	uint8_t *exe, *dbg;
	size_t exe_size, dbg_size;
	sym_build_id id;         /* both files' */
	char dir[64];
};

static bool files_load(struct files *f)
{
	memset(f, 0, sizeof(*f));
	f->exe = test_read_fixture("c_stripped", &f->exe_size);
	f->dbg = test_read_fixture("c_stripped.debug", &f->dbg_size);
	sym_elf_info info;
	if (!f->exe || !f->dbg || sym_elf_probe(f->exe, f->exe_size, &info, NULL) != SYM_OK ||
	    info.build_id.len < 2)
		return false;
	f->id = info.build_id;
	strcpy(f->dir, "/tmp/src_local_XXXXXX");
	return mkdtemp(f->dir) != NULL;
}

static void files_free(struct files *f)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(f->exe);
	free(f->dbg);
}

/* DIR/.build-id/xx/rest<suffix> <- data */
static bool place(const char *dir, const sym_build_id *id, const char *suffix, const void *data,
		  size_t size)
{
	char hex[SYM_BUILD_ID_HEX_MAX], path[512];
	sym_build_id_to_hex(id, hex);
	snprintf(path, sizeof(path), "%s/.build-id", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, hex);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return false;
	bool ok = fwrite(data, 1, size, fp) == size;
	return fclose(fp) == 0 && ok;
}

TEST(find_debuginfo_hit)
{
	struct files f;
	REQUIRE(files_load(&f));
	REQUIRE(place(f.dir, &f.id, ".debug", f.dbg, f.dbg_size));
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_FOUND);
	CHECK_EQ_U(file.kind, SRC_KIND_DEBUGINFO);
	CHECK_EQ_U(file.size, f.dbg_size);
	CHECK(file.data && memcmp(file.data, f.dbg, f.dbg_size) == 0);
	CHECK(sym_build_id_equal(&file.info.build_id, &f.id));
	CHECK_STREQ(file.origin, f.dir);
	src_file_release(&file);
	CHECK(file.data == NULL);
	/* Asked for the executable, a debug file is not where the binary goes. */
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_EXECUTABLE, 1u << 30, &file, &err), SRC_NOT_FOUND);
	src_destroy(s);
	files_free(&f);
}

TEST(find_executable_hit)
{
	struct files f;
	REQUIRE(files_load(&f));
	REQUIRE(place(f.dir, &f.id, "", f.exe, f.exe_size));
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_EXECUTABLE, 1u << 30, &file, &err), SRC_FOUND);
	CHECK_EQ_U(file.kind, SRC_KIND_EXECUTABLE);
	CHECK_EQ_U(file.size, f.exe_size);
	src_file_release(&file);
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	src_destroy(s);
	files_free(&f);
}

TEST(find_miss_is_no_error)
{
	struct files f;
	REQUIRE(files_load(&f));
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	CHECK_EQ_U(err.code, SYM_OK); /* absent: nothing went wrong */
	CHECK(file.data == NULL);
	sym_build_id one = {.len = 1, .bytes = {0xab}};
	CHECK_EQ_U(src_find(s, &one, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	src_destroy(s);
	files_free(&f);
}

TEST(find_fifo_and_device_refused)
{
	struct files f;
	REQUIRE(files_load(&f));
	char hex[SYM_BUILD_ID_HEX_MAX], path[512];
	sym_build_id_to_hex(&f.id, hex);
	REQUIRE(place(f.dir, &f.id, "", f.exe, f.exe_size)); /* makes the directories */
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", f.dir, hex, hex + 2);
	REQUIRE(mkfifo(path, 0600) == 0);
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	/* No writer: a blocking open would never return. */
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	/* A device (by a symlink: symlinks are followed, the target must be regular). */
	REQUIRE(unlink(path) == 0);
	REQUIRE(symlink("/dev/zero", path) == 0);
	memset(&err, 0, sizeof(err));
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	CHECK(strstr(err.msg, "not a regular file") != NULL);
	/* The executable next to them is still found. */
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_EXECUTABLE, 1u << 30, &file, &err), SRC_FOUND);
	src_file_release(&file);
	src_destroy(s);
	files_free(&f);
}

TEST(find_at_inside_only)
{
	struct files f;
	REQUIRE(files_load(&f));
	char inside[512], outside[600];
	snprintf(inside, sizeof(inside), "%s/sub", f.dir);
	REQUIRE(mkdir(inside, 0755) == 0);
	snprintf(inside, sizeof(inside), "%s/sub/file.debug", f.dir);
	FILE *fp = fopen(inside, "wb");
	REQUIRE(fp && fwrite(f.dbg, 1, f.dbg_size, fp) == f.dbg_size && fclose(fp) == 0);
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find_at(s, inside, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err),
		   SRC_FOUND);
	CHECK_EQ_U(file.size, f.dbg_size);
	src_file_release(&file);
	/* ".." out of the directory, and another build ID: not found. */
	snprintf(outside, sizeof(outside), "%s/sub/../../etc/passwd", f.dir);
	CHECK_EQ_U(src_find_at(s, outside, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err),
		   SRC_NOT_FOUND);
	sym_build_id other = f.id;
	other.bytes[0] ^= 1;
	CHECK_EQ_U(src_find_at(s, inside, &other, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err),
		   SRC_NOT_FOUND);
	CHECK(strstr(err.msg, "build ID mismatch") != NULL);
	src_destroy(s);
	files_free(&f);
}

TEST(find_wrong_build_id_is_rejected)
{
	struct files f;
	REQUIRE(files_load(&f));
	sym_build_id other;
	REQUIRE(sym_build_id_from_hex("0011223344556677", 16, &other));
	REQUIRE(place(f.dir, &other, ".debug", f.dbg, f.dbg_size)); /* our file, another name */
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find(s, &other, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	CHECK_EQ_U(err.code, SYM_E_BAD_ELF);
	CHECK(strstr(err.msg, "build ID mismatch") != NULL);
	CHECK(strstr(err.msg, "/.build-id/00/11223344556677.debug") != NULL);
	CHECK(file.data == NULL);
	/* An executable under a debug file's name: no debug info. */
	REQUIRE(place(f.dir, &f.id, ".debug", f.exe, f.exe_size));
	memset(&err, 0, sizeof(err));
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, 1u << 30, &file, &err), SRC_NOT_FOUND);
	CHECK(strstr(err.msg, "no debug info") != NULL);
	src_destroy(s);
	files_free(&f);
}

TEST(find_over_the_cap)
{
	struct files f;
	REQUIRE(files_load(&f));
	REQUIRE(place(f.dir, &f.id, ".debug", f.dbg, f.dbg_size));
	src_source *s = src_local_create(f.dir, NULL);
	REQUIRE(s);
	src_file file;
	sym_error err = {0};
	CHECK_EQ_U(src_find(s, &f.id, SRC_KIND_DEBUGINFO, f.dbg_size - 1, &file, &err),
		   SRC_TOO_LARGE);
	CHECK_EQ_U(err.code, SYM_E_TOO_LARGE);
	CHECK(file.data == NULL);
	src_destroy(s);
	files_free(&f);
}

static bool count_scan(void *arg, const sym_build_id *id, src_kind kind, const char *where)
{
	(*(int *)arg)++;
	return true;
}

TEST(scan_slot_empty_and_destroy_null)
{
	src_source *s = src_local_create("/nonexistent", NULL);
	REQUIRE(s);
	CHECK(s->ops->scan == NULL);
	CHECK_STREQ(s->ops->name, "local");
	int n = 0;
	sym_error err = {0};
	CHECK_EQ_U(src_scan(s, count_scan, &n, &err), SYM_E_UNSUPPORTED);
	CHECK_EQ_U(n, 0);
	CHECK(strstr(err.msg, "local") != NULL);
	src_destroy(s);
	src_destroy(NULL);
	src_file_release(NULL);
}

TEST(check_file)
{
	struct files f;
	REQUIRE(files_load(&f));
	src_kind kind;
	sym_elf_info info;
	sym_error err = {0};
	CHECK_EQ_U(src_check_file(f.dbg, f.dbg_size, &f.id, &kind, &info, &err), SYM_OK);
	CHECK_EQ_U(kind, SRC_KIND_DEBUGINFO);
	CHECK_EQ_U(src_check_file(f.exe, f.exe_size, &f.id, &kind, &info, &err), SYM_OK);
	CHECK_EQ_U(kind, SRC_KIND_EXECUTABLE);
	sym_build_id other = {.len = 2, .bytes = {1, 2}};
	CHECK_EQ_U(src_check_file(f.dbg, f.dbg_size, &other, &kind, &info, &err), SYM_E_BAD_ELF);
	CHECK(strstr(err.msg, "build ID mismatch") != NULL);
	CHECK(src_check_file("not an elf", 10, &f.id, &kind, &info, &err) != SYM_OK);
	CHECK_STREQ(src_kind_name(SRC_KIND_DEBUGINFO), "debuginfo");
	CHECK_STREQ(src_kind_name(SRC_KIND_EXECUTABLE), "executable");
	files_free(&f);
}

TEST_MAIN()
