/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_evbuffer: malloc'ed bytes handed to a libevent buffer without a copy,
 * the buffer freeing them once they are drained (an answer's body built
 * elsewhere: a response's sections, a transcoded JSON body, a file read
 * whole).
 */
#ifndef SVC_EVBUFFER_H
#define SVC_EVBUFFER_H

#include <stdbool.h>
#include <stddef.h>

struct evbuffer;

/* Appends the len bytes at data (malloc'ed) to b by reference; b frees data
 * when done with it. False: not taken (out of memory), data still the
 * caller's. */
bool svc_evbuffer_give(struct evbuffer *b, void *data, size_t len);

#endif
