/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_histogram: a Prometheus histogram with fixed bucket bounds (seconds),
 * filled on one thread (the event loop) and written out by base_expo.
 */
#ifndef BASE_HISTOGRAM_H
#define BASE_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define BASE_HISTOGRAM_MAX_BUCKETS 20

typedef struct base_histogram {
	const double *bounds;     /* ascending upper bounds, not including +Inf */
	size_t n_bounds;
	uint64_t counts[BASE_HISTOGRAM_MAX_BUCKETS + 1]; /* per bucket, not cumulative */
	uint64_t count;
	double sum;
} base_histogram;

/* Bounds for request latencies (0.5 ms .. 30 s) and index builds (10 ms .. 5 min). */
extern const double base_latency_bounds[];
extern const size_t base_latency_n_bounds;
extern const double base_build_bounds[];
extern const size_t base_build_n_bounds;

void base_histogram_init(base_histogram *h, const double *bounds, size_t n_bounds);
void base_histogram_observe(base_histogram *h, double value);

#endif
