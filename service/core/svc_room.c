// SPDX-License-Identifier: Apache-2.0
/*
 * svc_room: a table of room rows and their objects (svc_room.h): created in
 * order, stopped and destroyed in reverse, rendered in order.
 */
#include "service/core/svc_room.h"

#include <stdlib.h>
#include <string.h>

bool svc_room_route_matches(const svc_room_route *route, unsigned method, const char *path)
{
	return (route->methods & method) && svc_room_route_path_matches(route, path);
}

bool svc_room_route_path_matches(const svc_room_route *route, const char *path)
{
	size_t n = strlen(route->path);
	if (n && route->path[n - 1] == '/')
		return strncmp(path, route->path, n) == 0;
	return strcmp(path, route->path) == 0;
}

bool svc_room_set_create(svc_room_set *set, const svc_room *const *rows, size_t n_rows,
			 const svc_room_ctx *ctx, svc_error *err)
{
	memset(set, 0, sizeof(*set));
	if (!(set->objs = calloc(n_rows ? n_rows : 1, sizeof(*set->objs)))) {
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	set->rows = rows;
	set->n_rows = n_rows;
	for (size_t i = 0; i < n_rows; i++) {
		err->code = SVC_OK;
		if (!(set->objs[i] = rows[i]->create(ctx, err))) {
			if (err->code == SVC_OK)
				svc_error_set(err, SVC_E_NOMEM, "room %s: out of memory", rows[i]->name);
			return false;
		}
	}
	return true;
}

void svc_room_set_stop(svc_room_set *set)
{
	for (size_t i = set->n_rows; i-- > 0;)
		if (set->objs && set->objs[i] && set->rows[i]->stop)
			set->rows[i]->stop(set->objs[i]);
}

void svc_room_set_destroy(svc_room_set *set)
{
	for (size_t i = set->n_rows; i-- > 0;)
		if (set->objs && set->objs[i] && set->rows[i]->destroy)
			set->rows[i]->destroy(set->objs[i]);
	free(set->objs);
	memset(set, 0, sizeof(*set));
}

void svc_room_set_render_metrics(const svc_room_set *set, base_buf *b)
{
	for (size_t i = 0; i < set->n_rows; i++)
		if (set->objs[i] && set->rows[i]->render_metrics)
			set->rows[i]->render_metrics(set->objs[i], b);
}

unsigned svc_room_set_in_flight(const svc_room_set *set)
{
	unsigned n = 0;
	for (size_t i = 0; i < set->n_rows; i++)
		if (set->objs[i] && set->rows[i]->in_flight)
			n += set->rows[i]->in_flight(set->objs[i]);
	return n;
}

void *svc_room_set_object(const svc_room_set *set, const svc_room *row)
{
	for (size_t i = 0; i < set->n_rows; i++)
		if (set->rows[i] == row)
			return set->objs[i];
	return NULL;
}

size_t svc_room_set_n_methods(const svc_room_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n_rows; i++)
		n += set->rows[i]->n_methods;
	return n;
}

size_t svc_room_set_n_routes(const svc_room_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n_rows; i++)
		n += set->rows[i]->n_routes;
	return n;
}
