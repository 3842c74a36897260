// SPDX-License-Identifier: Apache-2.0
/*
 * base_expo: Prometheus text exposition writer (base_expo.h).
 */
#include "base/base_expo.h"

#include <inttypes.h>

void base_expo_family(base_buf *b, const char *name, const char *type, const char *help)
{
	base_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void base_expo_escape(base_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			base_buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			base_buf_append(b, "\\n", 2);
		else
			base_buf_append(b, s, 1);
	}
}

static void labelled(base_buf *b, const char *name, const char *labels)
{
	if (labels && labels[0])
		base_buf_printf(b, "%s{%s} ", name, labels);
	else
		base_buf_printf(b, "%s ", name);
}

void base_expo_u64(base_buf *b, const char *name, const char *labels, uint64_t v)
{
	labelled(b, name, labels);
	base_buf_printf(b, "%" PRIu64 "\n", v);
}

void base_expo_double(base_buf *b, const char *name, const char *labels, double v)
{
	labelled(b, name, labels);
	base_buf_printf(b, "%.3f\n", v);
}

void base_expo_histogram(base_buf *b, const char *name, const char *labels,
			 const base_histogram *h)
{
	uint64_t cum = 0;
	const char *sep = labels[0] ? "," : "";
	for (size_t i = 0; i < h->n_bounds; i++) {
		cum += h->counts[i];
		base_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels, sep,
				h->bounds[i], cum);
	}
	cum += h->counts[h->n_bounds];
	base_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, sep, cum);
	if (labels[0]) {
		base_buf_printf(b, "%s_sum{%s} %.6f\n%s_count{%s} %" PRIu64 "\n", name, labels,
				h->sum, name, labels, h->count);
	} else {
		base_buf_printf(b, "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->sum, name,
				h->count);
	}
}
