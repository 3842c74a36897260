/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_layout_encode: a GetTypeLayouts response from a loaded layout index
 * (symbolizer/sym_layout.h) and the request's type names and field paths,
 * packed into the call's response buffer. Any thread (a worker's job or the
 * loop); the message is built in an arena and freed with it.
 */
#ifndef SVC_LAYOUT_ENCODE_H
#define SVC_LAYOUT_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "symbolizer/sym_layout.h"

struct evbuffer;

/*
 * Packs the answer into out: with l, every type and field of req; without
 * (l NULL), status (a MappingResult.Status), error and retry_after_ms alone.
 * False when out of memory.
 */
bool svc_layout_encode(const Symbolizer__V1__GetTypeLayoutsRequest *req, const sym_layout *l,
		       int status, const char *error, uint32_t retry_after_ms,
		       struct evbuffer *out);

#endif
