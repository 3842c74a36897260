// SPDX-License-Identifier: Apache-2.0
/*
 * svc_flight: the single-flight table and waiter lists (svc_flight.h), on
 * base_hash_map keyed by build ID.
 */
#include "service/core/svc_flight.h"

void svc_flight_table_init(svc_flight_table *t)
{
	svc_flight_map_init(&t->map);
}

void svc_flight_table_deinit(svc_flight_table *t)
{
	svc_flight_map_deinit(&t->map);
}

svc_flight *svc_flight_find(const svc_flight_table *t, const sym_build_id *id)
{
	svc_flight *const *f = svc_flight_map_get(&t->map, id);
	return f ? *f : NULL;
}

bool svc_flight_add(svc_flight_table *t, svc_flight *f, const sym_build_id *id)
{
	f->id = *id;
	f->head = f->tail = NULL;
	svc_flight **slot = svc_flight_map_put(&t->map, id, NULL);
	if (!slot)
		return false;
	*slot = f;
	return true;
}

void svc_flight_remove(svc_flight_table *t, svc_flight *f)
{
	svc_flight **slot = svc_flight_map_get(&t->map, &f->id);
	if (slot && *slot == f)
		svc_flight_map_remove(&t->map, &f->id);
}

size_t svc_flight_count(const svc_flight_table *t)
{
	return svc_flight_map_size(&t->map);
}

svc_flight *svc_flight_any(const svc_flight_table *t)
{
	size_t pos = 0;
	svc_flight_map_entry *e = svc_flight_map_next(&t->map, &pos);
	return e ? e->value : NULL;
}

void svc_flight_join(svc_flight *f, svc_flight_waiter *w)
{
	w->flight = f;
	w->next = NULL;
	w->prev = f->tail;
	if (f->tail)
		f->tail->next = w;
	else
		f->head = w;
	f->tail = w;
}

void svc_flight_leave(svc_flight_waiter *w)
{
	svc_flight *f = w->flight;
	if (!f)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		f->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		f->tail = w->prev;
	w->flight = NULL;
	w->prev = w->next = NULL;
}

svc_flight_waiter *svc_flight_pop(svc_flight *f)
{
	svc_flight_waiter *w = f->head;
	if (w)
		svc_flight_leave(w);
	return w;
}
