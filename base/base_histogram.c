// SPDX-License-Identifier: Apache-2.0
/*
 * base_histogram: fixed-bucket histograms (base_histogram.h).
 */
#include "base/base_histogram.h"

#include <string.h>

const double base_latency_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
				     0.1,    0.25,  0.5,    1,     2.5,  5,     10,  30};
const size_t base_latency_n_bounds = sizeof(base_latency_bounds) / sizeof(double);
const double base_build_bounds[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
const size_t base_build_n_bounds = sizeof(base_build_bounds) / sizeof(double);

void base_histogram_init(base_histogram *h, const double *bounds, size_t n_bounds)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->n_bounds = n_bounds > BASE_HISTOGRAM_MAX_BUCKETS ? BASE_HISTOGRAM_MAX_BUCKETS : n_bounds;
}

void base_histogram_observe(base_histogram *h, double value)
{
	size_t i = 0;
	while (i < h->n_bounds && value > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum += value;
}
