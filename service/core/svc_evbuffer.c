// SPDX-License-Identifier: Apache-2.0
/*
 * svc_evbuffer: malloc'ed bytes given to an evbuffer (svc_evbuffer.h).
 */
#include "service/core/svc_evbuffer.h"

#include <stdlib.h>

#include <event2/buffer.h>

static void free_given(const void *data, size_t len, void *arg)
{
	(void)data, (void)len;
	free(arg);
}

bool svc_evbuffer_give(struct evbuffer *b, void *data, size_t len)
{
	return evbuffer_add_reference(b, data, len, free_given, data) == 0;
}
