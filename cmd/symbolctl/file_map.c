// SPDX-License-Identifier: Apache-2.0
/*
 * file_map: whole-file mappings for symbolctl (see file_map.h).
 */
#include "cmd/symbolctl/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) != 0) {
		fprintf(stderr, "symbolctl: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		fprintf(stderr, "symbolctl: %s: not a regular file\n", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Empties m and opens path as a regular file (-1 after printing why). */
static int begin(file_map *m, const char *path, struct stat *st)
{
	m->data = NULL;
	m->size = 0;
	m->mapped = false;
	return open_regular(path, st);
}

bool file_map_open(file_map *m, const char *path)
{
	struct stat st;
	int fd = begin(m, path, &st);
	if (fd < 0)
		return false;
	if (st.st_size == 0) {
		close(fd);
		return true;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "symbolctl: %s: mmap: %s\n", path, strerror(errno));
		return false;
	}
	m->data = p;
	m->size = (size_t)st.st_size;
	m->mapped = true;
	return true;
}

bool file_map_read_aligned(file_map *m, const char *path)
{
	struct stat st;
	int fd = begin(m, path, &st);
	if (fd < 0)
		return false;
	size_t size = (size_t)st.st_size, got = 0;
	void *p = NULL;
	if (posix_memalign(&p, 8, size ? size : 8) != 0) {
		fprintf(stderr, "symbolctl: %s: out of memory\n", path);
		close(fd);
		return false;
	}
	while (got < size) {
		ssize_t r = read(fd, (char *)p + got, size - got);
		if (r <= 0) {
			fprintf(stderr, "symbolctl: %s: read: %s\n", path, r ? strerror(errno) : "short");
			free(p);
			close(fd);
			return false;
		}
		got += (size_t)r;
	}
	close(fd);
	m->data = p;
	m->size = size;
	return true;
}

void file_map_close(file_map *m)
{
	if (m->mapped)
		munmap(m->data, m->size);
	else
		free(m->data);
	m->data = NULL;
	m->size = 0;
}
