/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file_map: read-only whole-file mappings for symbolctl (the library does no I/O).
 */
#ifndef SYMBOLCTL_FILE_MAP_H
#define SYMBOLCTL_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct file_map {
	void *data;
	size_t size;
	bool mapped;   /* true: munmap, false: free */
} file_map;

/* Maps path; on failure prints "symbolctl: PATH: reason" and returns false. */
bool file_map_open(file_map *m, const char *path);
/* Reads path into 8-byte aligned heap memory (for index blobs); false as above. */
bool file_map_read_aligned(file_map *m, const char *path);
void file_map_close(file_map *m);

#endif
