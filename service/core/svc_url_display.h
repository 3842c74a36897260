/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_url_display: an upstream URL as it may be shown (logs, errors sent to
 * callers, /metrics labels, the source recorded in the store): its userinfo
 * ("user:password@") replaced by "***@". Every place that prints an upstream
 * goes through this one helper; the URL with credentials is used only for the
 * request itself (svc_fetch_url).
 */
#ifndef SVC_URL_DISPLAY_H
#define SVC_URL_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>

/* True when url carries userinfo (something@ in its authority). */
bool svc_url_has_userinfo(const char *url);

/* Writes the display form of url into out (n > 0 bytes, always terminated,
 * cut when longer); returns out. */
char *svc_url_display(const char *url, char *out, size_t n);

/* The display form in a malloc'ed string; NULL when out of memory. */
char *svc_url_display_dup(const char *url);

#endif
