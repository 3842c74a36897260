// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_log: the fetcher's log lines (breakers opening and closing,
 * rejected files, a full queue), to the caller's sink or stderr
 * (svc_fetch_impl.h). A leaf every file of the room may call.
 */
#include "service/fetch/svc_fetch_impl.h"

#include <stdarg.h>
#include <stdio.h>

void svc_fetch_log(svc_fetcher *f, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (f->log)
		f->log(f->log_arg, line);
	else
		fprintf(stderr, "fetch: %s\n", line);
}
