// SPDX-License-Identifier: Apache-2.0
/*
 * src_pread: whole reads at an offset (src_pread.h).
 */
#include "source/src_pread.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

sym_errc src_pread(int fd, void *buf, size_t len, uint64_t off, sym_error *err)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return sym_error_set(err, SYM_E_IO, "read: %s", strerror(errno));
		if (r == 0)
			return sym_error_set(err, SYM_E_INVALID, "truncated (end of file)");
		done += (size_t)r;
	}
	return SYM_OK;
}
