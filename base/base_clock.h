/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_clock: the one clock of the project. Monotonic time for timeouts,
 * deadlines, latencies and TTLs kept in memory; wall-clock time only for what
 * is stored and must survive a restart (negative-cache expiry in the store).
 */
#ifndef BASE_CLOCK_H
#define BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic nanoseconds (CLOCK_MONOTONIC), for intervals. */
static inline int64_t base_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Monotonic milliseconds, for deadlines and in-memory expiries. */
static inline int64_t base_mono_ms(void)
{
	return base_mono_ns() / 1000000;
}

/* Seconds since a base_mono_ns() reading, for histograms and logs. */
static inline double base_seconds_since(int64_t start_ns)
{
	return (double)(base_mono_ns() - start_ns) / 1e9;
}

/* Monotonic seconds, for benchmarks' elapsed times. */
static inline double base_mono_s(void)
{
	return (double)base_mono_ns() / 1e9;
}

/* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID), for benchmarks. */
static inline double base_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall-clock milliseconds since the epoch (CLOCK_REALTIME), for stored times. */
static inline int64_t base_real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
