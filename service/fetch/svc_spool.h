/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_spool: the temporary files of DATA/tmp, where bodies too large to hold
 * in memory land as they arrive: upstream downloads (svc_upstream_http.c) and
 * upload bodies (service/http's svc_body_spool.c). A spool file is unlinked
 * from the start (O_TMPFILE; else mkstemp's "dl-*" unlinked at once), so it
 * goes with its last descriptor, a crash included; the fetcher empties the
 * directory of any "dl-*" a crash left between create and unlink.
 */
#ifndef SVC_SPOOL_H
#define SVC_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* An unlinked temporary file in dir, open for reading and writing; -1 with
 * errno set. */
int svc_spool_open(const char *dir);

/* Writes all len bytes of p to fd (EINTR retried); 0, or the errno of the
 * failed write (EIO for a write of 0 bytes). */
int svc_spool_write(int fd, const void *p, size_t len);

#endif
