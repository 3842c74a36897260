// SPDX-License-Identifier: Apache-2.0
/*
 * sym_goname: Go's printed function names (see sym_goname.h).
 */
#include "symbolizer/sym_goname_impl.h"

#include <string.h>

bool sym_goname_print(const char *name, char *buf, size_t cap)
{
	const char *open = strchr(name, '[');
	const char *close = strrchr(name, ']');
	if (!open || !close || close <= open)
		return false;
	size_t head = (size_t)(open - name), tail = strlen(close + 1);
	if (close == open + 4 && !strncmp(open, "[...]", 5))
		return false;   /* already printed form */
	if (head + 5 + tail + 1 > cap)
		return false;
	memcpy(buf, name, head);
	memcpy(buf + head, "[...]", 5);
	memcpy(buf + head + 5, close + 1, tail + 1);
	return true;
}
