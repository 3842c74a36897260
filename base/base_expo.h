/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_expo: writes the Prometheus text exposition format (version 0.0.4)
 * into a base_buf. Each module renders the families it owns with these, and
 * the HTTP room joins them for /metrics: every family gets its HELP and TYPE
 * lines, label values are escaped as the format requires.
 */
#ifndef BASE_EXPO_H
#define BASE_EXPO_H

#include <stdint.h>

#include "base/base_buf.h"
#include "base/base_histogram.h"

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void base_expo_family(base_buf *b, const char *name, const char *type, const char *help);

/* Appends s as a label value (without the quotes): \\, \" and \n escaped. */
void base_expo_escape(base_buf *b, const char *s);

/* A sample line: name{labels} value. labels is "k=\"v\",..." or "" for none. */
void base_expo_u64(base_buf *b, const char *name, const char *labels, uint64_t v);
void base_expo_double(base_buf *b, const char *name, const char *labels, double v);

/* The _bucket (cumulative), _sum and _count lines of a histogram. */
void base_expo_histogram(base_buf *b, const char *name, const char *labels,
			 const base_histogram *h);

#endif
