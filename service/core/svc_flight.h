/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_flight: single flight by build ID. A table of the work in progress, at
 * most one flight per build ID, each with the waiters that want its result,
 * in the order they came. The owner embeds svc_flight as the first member of
 * its own flight record and svc_flight_waiter as the first member of its
 * waiter records, and decides what a flight does and what a waiter gets; this
 * only keeps who waits on what. A waiter may leave before the end (its
 * caller gave up); the flight goes on.
 *
 * Used by the resolver (service/resolve/) and the fetcher (service/fetch/).
 * One thread (the loop): no locking.
 */
#ifndef SVC_FLIGHT_H
#define SVC_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base_hash_map.h"
#include "symbolizer/sym_build_id.h"

typedef struct svc_flight svc_flight;

typedef struct svc_flight_waiter {
	svc_flight *flight;       /* NULL once popped or left */
	struct svc_flight_waiter *prev, *next;
} svc_flight_waiter;

struct svc_flight {
	sym_build_id id;
	svc_flight_waiter *head, *tail;
};

BASE_HASH_MAP(svc_flight_map, sym_build_id, svc_flight *, sym_build_id_hash, sym_build_id_equal)

typedef struct svc_flight_table {
	svc_flight_map map;
} svc_flight_table;

void svc_flight_table_init(svc_flight_table *t);
/* Frees the table only: the owner ends (and frees) its flights first. */
void svc_flight_table_deinit(svc_flight_table *t);

/* The flight of a build ID, or NULL. */
svc_flight *svc_flight_find(const svc_flight_table *t, const sym_build_id *id);

/* Sets f up for id (no waiters) and maps it; false when out of memory (f is
 * not in the table then). id must have no flight yet. */
bool svc_flight_add(svc_flight_table *t, svc_flight *f, const sym_build_id *id);

/* Takes f out of the table (its waiters stay with it). */
void svc_flight_remove(svc_flight_table *t, svc_flight *f);

size_t svc_flight_count(const svc_flight_table *t);

/* Some flight of the table, NULL when it is empty (to end them all at shutdown). */
svc_flight *svc_flight_any(const svc_flight_table *t);

/* w waits on f, after those already waiting. */
void svc_flight_join(svc_flight *f, svc_flight_waiter *w);

/* w stops waiting (no-op when it no longer waits). */
void svc_flight_leave(svc_flight_waiter *w);

static inline bool svc_flight_has_waiters(const svc_flight *f)
{
	return f->head != NULL;
}

/* Takes the first waiter off f (NULL when none). Waiters may leave, and others
 * join, while the caller serves the ones it popped. */
svc_flight_waiter *svc_flight_pop(svc_flight *f);

#endif
