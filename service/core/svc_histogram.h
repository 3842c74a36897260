/*
 * svc_histogram: a Prometheus histogram with fixed bucket bounds (seconds),
 * filled on one thread (the event loop) and rendered by svc_metrics.
 */
#ifndef SVC_HISTOGRAM_H
#define SVC_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define SVC_HISTOGRAM_MAX_BUCKETS 20

typedef struct svc_histogram {
	const double *bounds;     /* ascending upper bounds, not including +Inf */
	size_t n_bounds;
	uint64_t counts[SVC_HISTOGRAM_MAX_BUCKETS + 1]; /* per bucket, not cumulative */
	uint64_t count;
	double sum;
} svc_histogram;

/* Bounds for request latencies (0.5 ms .. 30 s) and index builds (10 ms .. 5 min). */
extern const double svc_latency_bounds[];
extern const size_t svc_latency_n_bounds;
extern const double svc_build_bounds[];
extern const size_t svc_build_n_bounds;

void svc_histogram_init(svc_histogram *h, const double *bounds, size_t n_bounds);
void svc_histogram_observe(svc_histogram *h, double value);

#endif
