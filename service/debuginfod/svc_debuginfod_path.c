// SPDX-License-Identifier: Apache-2.0
/*
 * svc_debuginfod_path: the path of a debuginfod request, percent-decoded first
 * (so %2e%2e and %00 are judged as what they mean), then validated: a build ID
 * of lowercase hex (svc_build_id), a known kind (debuginfo, executable,
 * section/NAME, source/PATH, or status: our own, not debuginfod's), a printable
 * section name without '/', a source path without control bytes made
 * canonical (".." resolved lexically, never above the root; the path never
 * reaches the file system: it is looked up in the debug info's file table and
 * the catalogue) (svc_debuginfod_impl.h).
 */
#include "service/debuginfod/svc_debuginfod_impl.h"

#include <string.h>
#include <sys/queue.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/base_path.h"
#include "service/core/svc_build_id.h"
#include "service/debuginfod/svc_debuginfod.h"
#include "symbolizer/sym_build_id.h"

/* Percent-decodes src into out; false on a bad escape, a NUL or overflow. */
static bool decode(const char *src, char *out, size_t cap)
{
	size_t n = 0;
	for (const char *p = src; *p; p++) {
		int c = (unsigned char)*p;
		if (c == '%') {
			int hi = sym_hex_digit(p[1]), lo = hi < 0 ? -1 : sym_hex_digit(p[2]);
			if (lo < 0)
				return false;
			c = hi * 16 + lo;
			p += 2;
		}
		if (c == 0 || n + 1 >= cap)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return true;
}

static bool valid_section(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > SVC_DEBUGINFOD_SECTION_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == '/')
			return false;
	return true;
}

static bool parse(const char *rest, char *hex, sym_build_id *id, int *kind, char *arg)
{
	const char *slash = strchr(rest, '/');
	if (!slash || !svc_build_id_parse(rest, (size_t)(slash - rest), id))
		return false;
	sym_build_id_to_hex(id, hex);   /* lowercase, whatever case came in */
	const char *what = slash + 1;
	if (strcmp(what, "debuginfo") == 0)
		*kind = K_DEBUGINFO;
	else if (strcmp(what, "executable") == 0)
		*kind = K_EXECUTABLE;
	else if (strcmp(what, "status") == 0)
		*kind = K_STATUS;
	else if (strncmp(what, "section/", 8) == 0 && valid_section(what + 8)) {
		*kind = K_SECTION;
		strcpy(arg, what + 8);
	} else if (strncmp(what, "source/", 7) == 0) {
		/* "source" + the absolute path: its '/' is the separator. No
		 * control bytes: the path goes back in a header and in logs. */
		*kind = K_SOURCE;
		for (const char *c = what + 6; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return false;
		return base_path_canon(what + 6, arg, SVC_DEBUGINFOD_SOURCE_MAX + 1) &&
		       strcmp(arg, "/") != 0;
	} else
		return false;
	return true;
}

bool svc_debuginfod_parse_path(const char *encoded, char *hex, sym_build_id *id, int *kind,
			       char *arg)
{
	char decoded[SYM_BUILD_ID_HEX_MAX + 16 + SVC_DEBUGINFOD_SOURCE_MAX + 1];
	return decode(encoded, decoded, sizeof(decoded)) && parse(decoded, hex, id, kind, arg);
}

bool svc_debuginfod_query_kind(const char *query, const char *hex, sym_build_id *id)
{
	struct evkeyvalq q;
	TAILQ_INIT(&q);
	if (!query || evhttp_parse_query_str(query, &q) != 0)
		return true;
	const char *k = evhttp_find_header(&q, "kind");
	sym_id_kind kind = SYM_ID_GNU;
	bool ok = !k || sym_id_kind_parse(k, strlen(k), &kind);
	if (ok && kind != SYM_ID_GNU)
		ok = sym_build_id_from_hex_kind(kind, hex, strlen(hex), id);
	evhttp_clear_headers(&q);
	return ok;
}
