// SPDX-License-Identifier: Apache-2.0
/*
 * svc_spool: the temporary files of DATA/tmp (svc_spool.h), one
 * implementation for the downloads and the upload bodies.
 */
#include "service/fetch/svc_spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int svc_spool_open(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/dl-XXXXXX", dir) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int svc_spool_write(int fd, const void *p, size_t len)
{
	const char *c = p;
	while (len) {
		ssize_t w = write(fd, c, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		c += w;
		len -= (size_t)w;
	}
	return 0;
}
