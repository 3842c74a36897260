// SPDX-License-Identifier: Apache-2.0
/*
 * svc_url_display: an upstream URL with its userinfo redacted
 * (svc_url_display.h). The authority is what follows "scheme://" up to the
 * first '/', '?' or '#'; its userinfo is everything up to its last '@'.
 */
#include "service/core/svc_url_display.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the authority starts, and the length of its userinfo with the '@'
 * (0 when none). */
static size_t userinfo(const char *url, size_t *start)
{
	const char *sep = strstr(url, "://");
	const char *a = sep ? sep + 3 : url;
	size_t alen = strcspn(a, "/?#");
	size_t ui = 0;
	for (size_t i = 0; i < alen; i++)
		if (a[i] == '@')
			ui = i + 1;
	*start = (size_t)(a - url);
	return ui;
}

bool svc_url_has_userinfo(const char *url)
{
	size_t start;
	return userinfo(url, &start) != 0;
}

char *svc_url_display(const char *url, char *out, size_t n)
{
	size_t start;
	size_t ui = userinfo(url, &start);
	if (!ui)
		snprintf(out, n, "%s", url);
	else
		snprintf(out, n, "%.*s***@%s", (int)start, url, url + start + ui);
	return out;
}

char *svc_url_display_dup(const char *url)
{
	size_t n = strlen(url) + 5;
	char *out = malloc(n);
	return out ? svc_url_display(url, out, n) : NULL;
}
