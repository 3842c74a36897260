/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_rooms: symbolizerd's room table (svc_room.h), one row per room that
 * serves requests, in creation order:
 *   symbolize   Symbolize
 *   layout      GetTypeLayouts
 *   upload      ShouldUpload; PUT /buildid/...; graceful shutdown waits for its PUTs
 *   profile     SymbolizeProfile
 *   debuginfod  GET|HEAD /buildid/... (and /buildid/ID/status, through the ctx's hook)
 * The order is the RPC method table's (the first method, Symbolize, also
 * counts the calls of unknown methods) and the order of the rooms' /metrics
 * families. The rows are defined in svc_rooms.c from each room's public
 * header; svc_server_options_init points the server at this table, and a
 * test may hand the server a table of its own (the daemon's rows and more).
 */
#ifndef SVC_ROOMS_H
#define SVC_ROOMS_H

#include <stddef.h>

#include "service/core/svc_room.h"

extern const svc_room svc_room_symbolize;
extern const svc_room svc_room_layout;
extern const svc_room svc_room_upload;
extern const svc_room svc_room_profile;
extern const svc_room svc_room_otlp;
extern const svc_room svc_room_debuginfod;

/* The table: a new room is one row here (svc_rooms.c). */
extern const svc_room *const svc_daemon_rooms[];
extern const size_t svc_daemon_n_rooms;

#endif
