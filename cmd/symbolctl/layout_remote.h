/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layout_remote: symbolctl layout --server: GetTypeLayouts through symbolizerd,
 * printed as `symbolctl layout --json` prints a local file's layouts.
 */
#ifndef SYMBOLCTL_LAYOUT_REMOTE_H
#define SYMBOLCTL_LAYOUT_REMOTE_H

/* 0 on success; asks again while PENDING, up to wait_s seconds. */
int layout_remote(const char *server, const char *build_id, const char **types, int n_types,
		  const char **fields, int n_fields, int wait_s);

#endif
