/* SPDX-License-Identifier: Apache-2.0 */
/*
 * progress: the one-line progress display of symbolctl's long commands (fetch,
 * fetch --server): items done of a total, bytes, rate, elapsed time and ETA,
 * redrawn in place on stderr with '\r' at most ten times a second and cleared
 * at the end. Off (NULL, every call a no-op) when stdout or stderr is not a
 * terminal, or when the command was given --no-progress: a pipe or a log file
 * never sees it. Single-threaded: called from the command's own thread.
 */
#ifndef SYMBOLCTL_PROGRESS_H
#define SYMBOLCTL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;

typedef struct progress progress;

/* what names the work ("fetch"); total items (0: unknown). NULL when off. */
progress *progress_create(const char *what, uint64_t total, bool off);
/* Clears the line and frees; NULL is a no-op. */
void progress_destroy(progress *p);

/* Records the work done so far; redraws when the last draw is 100 ms old. */
void progress_set(progress *p, uint64_t done, uint64_t bytes);
/* Redraws now if due (elapsed time and ETA move even when nothing ends). */
void progress_tick(progress *p);
/* Wipes the line before the caller prints to stdout; the next set or tick redraws. */
void progress_clear(progress *p);
/* Ticks from a libevent loop every 100 ms until destroyed; false when it cannot. */
bool progress_attach(progress *p, struct event_base *base);

#endif
