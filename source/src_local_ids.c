// SPDX-License-Identifier: Apache-2.0
/*
 * src_local_ids: a directory's files by Go build ID and file hash (see
 * src_local_ids_impl.h). A scan walks the tree (regular files only, symlinks
 * not followed: a .build-id entry points at a file the walk reaches anyway),
 * reads each ELF file's first and last 4 KiB for its file hash and maps it
 * for its Go note.
 */
#include "source/src_local_ids_impl.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base_clock.h"
#include "base/base_vec.h"
#include "symbolizer/sym_file_id.h"

typedef struct id_path {
	sym_build_id id;
	char *path;
} id_path;

BASE_VEC_DEFINE(id_path_vec, id_path)

struct src_local_ids {
	pthread_mutex_t mu;
	char *dir;
	id_path_vec ids;
	int64_t scanned_ms;      /* 0: never */
	size_t files;            /* looked at in the current scan */
};

src_local_ids *src_local_ids_create(const char *dir)
{
	src_local_ids *t = calloc(1, sizeof(*t));
	if (!t || !(t->dir = strdup(dir))) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	id_path_vec_init(&t->ids, 2 * SRC_LOCAL_IDS_MAX_FILES);
	return t;
}

static void clear(src_local_ids *t)
{
	for (size_t i = 0; i < id_path_vec_len(&t->ids); i++)
		free(id_path_vec_data(&t->ids)[i].path);
	id_path_vec_deinit(&t->ids);
	id_path_vec_init(&t->ids, 2 * SRC_LOCAL_IDS_MAX_FILES);
}

void src_local_ids_destroy(src_local_ids *t)
{
	if (!t)
		return;
	clear(t);
	pthread_mutex_destroy(&t->mu);
	free(t->dir);
	free(t);
}

static void add(src_local_ids *t, const sym_build_id *id, const char *path)
{
	char *p = strdup(path);
	if (!p || id_path_vec_append(&t->ids, (id_path){*id, p}) != 0)
		free(p);
}

/* The identities of one regular file (ELF only: executables and debug files). */
static void look_at(src_local_ids *t, const char *path, const struct stat *st)
{
	if (st->st_size < 64)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	void *map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	if (memcmp(map, "\177ELF", 4) == 0) {
		sym_build_id h, g;
		sym_htlhash(map, (size_t)st->st_size, &h);
		add(t, &h, path);
		char text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
		if (sym_go_build_id_text(map, (size_t)st->st_size, text) &&
		    sym_go_build_id_of_text(text, strlen(text), &g))
			add(t, &g, path);
	}
	munmap(map, (size_t)st->st_size);
}

static void walk(src_local_ids *t, const char *dir, int depth)
{
	DIR *d = depth <= SRC_LOCAL_IDS_MAX_DEPTH ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && t->files < SRC_LOCAL_IDS_MAX_FILES) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[4096];
		int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (n < 0 || (size_t)n >= sizeof(path) || lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(t, path, depth + 1);
		else if (S_ISREG(st.st_mode)) {
			t->files++;
			look_at(t, path, &st);
		}
	}
	closedir(d);
}

static char *lookup(src_local_ids *t, const sym_build_id *id)
{
	for (size_t i = 0; i < id_path_vec_len(&t->ids); i++) {
		const id_path *p = &id_path_vec_data(&t->ids)[i];
		if (sym_build_id_equal(&p->id, id))
			return strdup(p->path);
	}
	return NULL;
}

char *src_local_ids_find(src_local_ids *t, const sym_build_id *id)
{
	if (!t || id->kind == SYM_ID_GNU)
		return NULL;
	pthread_mutex_lock(&t->mu);
	char *path = t->scanned_ms ? lookup(t, id) : NULL;
	int64_t now = base_mono_ms();
	if (!path && (!t->scanned_ms || now - t->scanned_ms >= SRC_LOCAL_IDS_RESCAN_MS)) {
		clear(t);
		t->files = 0;
		walk(t, t->dir, 0);
		t->scanned_ms = now ? now : 1;
		path = lookup(t, id);
	}
	pthread_mutex_unlock(&t->mu);
	return path;
}
