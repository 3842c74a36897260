// SPDX-License-Identifier: Apache-2.0
/*
 * layout_print: pahole-style and JSON renderings of a type layout (see
 * layout_print.h). Nested anonymous structs and unions are shown inline with
 * offsets from the start of the outermost type, as pahole shows them.
 */
#include "cmd/symbolctl/layout_print.h"

#include <inttypes.h>
#include <string.h>

#define COLS 48   /* type (26) + ' ' + name; (21) */

static const char *kind_word(sym_layout_kind k)
{
	return k == SYM_LAYOUT_UNION ? "union" : k == SYM_LAYOUT_CLASS ? "class" : "struct";
}

static void tabs(FILE *out, int n)
{
	for (int i = 0; i < n; i++)
		fputc('\t', out);
}

/* The name column: "name[2][3]", "name:3", "(*name)(int)". */
static void name_column(const sym_layout_member_info *m, const char *args, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, args ? "(*%s)%s" : "%s", m->name, args ? args : "");
	for (uint32_t d = 0; d < m->n_dims && n < cap; d++) {
		if (m->dims[d] == UINT64_MAX)
			n += (size_t)snprintf(buf + n, cap - n, "[]");
		else
			n += (size_t)snprintf(buf + n, cap - n, "[%" PRIu64 "]", m->dims[d]);
	}
	if (m->bit_size && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, ":%u", m->bit_size);
	if (n < cap)
		snprintf(buf + n, cap - n, ";");
}

static void comment(FILE *out, const sym_layout_member_info *m, uint64_t at)
{
	if (m->flags & SYM_LAYOUT_F_UNKNOWN_OFFSET)
		fprintf(out, " /* unknown offset %5" PRIu64 " */\n", m->size);
	else if (m->bit_size)
		fprintf(out, " /* %5" PRIu64 ":%2u %2" PRIu64 " */\n", at, m->bit_offset, m->size);
	else
		fprintf(out, " /* %5" PRIu64 " %5" PRIu64 " */\n", at, m->size);
}

/* Holes between the top-level members of a struct: count and bytes. */
struct holes {
	uint64_t n, bytes, sum;   /* sum: the members' bytes */
};

static void members(FILE *out, const sym_layout *l, uint32_t first, uint32_t n, uint64_t base,
		    int level, bool is_struct, uint64_t *cacheline, struct holes *h);

static void anon_member(FILE *out, const sym_layout *l, const sym_layout_member_info *m,
			uint64_t at, int level)
{
	tabs(out, level);
	fprintf(out, "%s {\n", m->flags & SYM_LAYOUT_F_ANON_UNION ? "union" : "struct");
	uint64_t no_lines = UINT64_MAX;
	members(out, l, m->first, m->n, at, level + 1,
		!(m->flags & SYM_LAYOUT_F_ANON_UNION), &no_lines, NULL);
	tabs(out, level);
	char close[256];
	snprintf(close, sizeof(close), *m->name ? "} %s;" : "};", m->name);
	int width = COLS - 8 * (level - 1);
	fprintf(out, "%-*s", width < 0 ? 0 : width, close);
	comment(out, m, at);
}

static void plain_member(FILE *out, const sym_layout_member_info *m, uint64_t at, int level)
{
	char type[1024], name[1024];
	const char *args = NULL;
	snprintf(type, sizeof(type), "%s", m->type_name);
	char *fp = strstr(type, " (*)(");
	if (fp && type[strlen(type) - 1] == ')') {
		args = m->type_name + (fp - type) + 4;
		*fp = '\0';
	}
	name_column(m, args, name, sizeof(name));
	tabs(out, level);
	if (m->kind == SYM_LAYOUT_BASE) {
		char base[1100];
		snprintf(base, sizeof(base), "/* %s%-26s <ancestor>; */",
			 m->flags & SYM_LAYOUT_F_VIRTUAL ? "virtual " : "", type);
		fprintf(out, "%-*s", COLS, base);
	} else {
		int width = 26 - 8 * (level - 1), tl = (int)strlen(type);
		width = width < 1 ? 1 : width;
		/* a long type takes room from the name column, as pahole does */
		int nw = tl > width ? 21 - (tl - width) : 21;
		fprintf(out, "%-*s %-*s", width, type, nw < 0 ? 0 : nw, name);
	}
	comment(out, m, at);
}

static void members(FILE *out, const sym_layout *l, uint32_t first, uint32_t n, uint64_t base,
		    int level, bool is_struct, uint64_t *cacheline, struct holes *h)
{
	uint64_t end = 0;
	for (uint32_t i = 0; i < n; i++) {
		sym_layout_member_info m;
		if (!sym_layout_member(l, first + i, &m))
			return;
		uint64_t at = base + m.offset;
		if (is_struct && i && !m.bit_size && at > end && end) {
			fputc('\n', out);
			tabs(out, level);
			fprintf(out, "/* XXX %" PRIu64 " byte%s hole, try to pack */\n\n",
				at - end, at - end == 1 ? "" : "s");
			if (h) {
				h->n++;
				h->bytes += at - end;
			}
		}
		if (h && !m.bit_size && m.kind == SYM_LAYOUT_FIELD)
			h->sum += m.size;
		if (*cacheline != UINT64_MAX && at >= (*cacheline + 1) * 64) {
			*cacheline = at / 64;
			uint64_t b = *cacheline * 64;
			if (at == b)
				fprintf(out, "\t/* --- cacheline %" PRIu64 " boundary (%" PRIu64
					" bytes) --- */\n", *cacheline, b);
			else
				fprintf(out, "\t/* --- cacheline %" PRIu64 " boundary (%" PRIu64
					" bytes) was %" PRIu64 " bytes ago --- */\n",
					*cacheline, b, at - b);
		}
		if (m.n && (m.flags & (SYM_LAYOUT_F_ANON_STRUCT | SYM_LAYOUT_F_ANON_UNION)))
			anon_member(out, l, &m, at, level);
		else
			plain_member(out, &m, at, level);
		if (at + m.size > end)
			end = at + m.size;
	}
}

void layout_print_pahole(FILE *out, const sym_layout *l, uint32_t t)
{
	sym_layout_type_info ti;
	if (!sym_layout_type(l, t, &ti))
		return;
	bool td = ti.flags & SYM_LAYOUT_F_TYPEDEF_NAME;
	if (td)
		fprintf(out, "typedef %s {", kind_word(ti.kind));
	else
		fprintf(out, "%s %s", kind_word(ti.kind), ti.name);
	const char *sep = " : ";
	for (uint32_t i = 0; i < ti.n; i++) {
		sym_layout_member_info m;
		if (sym_layout_member(l, ti.first + i, &m) && m.kind == SYM_LAYOUT_BASE) {
			const char *bn = strchr(m.type_name, ' ');
			fprintf(out, "%s%s%s", sep, m.flags & SYM_LAYOUT_F_VIRTUAL ? "virtual " : "",
				bn ? bn + 1 : m.type_name);
			sep = ", ";
		}
	}
	fprintf(out, td ? "\n" : " {\n");
	uint64_t cl = 0, end = 0;
	struct holes h = {0};
	members(out, l, ti.first, ti.n, 0, 1, ti.kind != SYM_LAYOUT_UNION, &cl, &h);
	for (uint32_t i = 0; i < ti.n; i++) {
		sym_layout_member_info m;
		if (sym_layout_member(l, ti.first + i, &m) && m.offset + m.size > end)
			end = m.offset + m.size;
	}
	fprintf(out, "\n\t/* size: %" PRIu64 ", cachelines: %" PRIu64 ", members: %u */\n",
		ti.size, (ti.size + 63) / 64, ti.n);
	if (h.n)
		fprintf(out, "\t/* sum members: %" PRIu64 ", holes: %" PRIu64 ", sum holes: %" PRIu64
			" */\n", h.sum, h.n, h.bytes);
	if (ti.kind != SYM_LAYOUT_UNION && ti.size > end && ti.n)
		fprintf(out, "\t/* padding: %" PRIu64 " */\n", ti.size - end);
	if (ti.size % 64)
		fprintf(out, "\t/* last cacheline: %" PRIu64 " bytes */\n", ti.size % 64);
	fprintf(out, td ? "} %s" : "}", ti.name);
	if (ti.align)
		fprintf(out, " __attribute__((__aligned__(%u)))", ti.align);
	fprintf(out, ";\n");
}

void layout_print_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_members(FILE *out, const sym_layout *l, uint32_t first, uint32_t n, int depth)
{
	fputc('[', out);
	for (uint32_t i = 0; i < n; i++) {
		sym_layout_member_info m;
		if (!sym_layout_member(l, first + i, &m))
			break;
		fprintf(out, "%s{\"name\":", i ? "," : "");
		layout_print_json_string(out, m.name);
		fprintf(out, ",\"type\":");
		layout_print_json_string(out, m.type_name);
		fprintf(out, ",\"offset\":%" PRIu64 ",\"size\":%" PRIu64, m.offset, m.size);
		if (m.bit_size)
			fprintf(out, ",\"bit_offset\":%u,\"bit_size\":%u", m.bit_offset, m.bit_size);
		if (m.kind == SYM_LAYOUT_BASE)
			fprintf(out, ",\"base\":true");
		if (m.flags & SYM_LAYOUT_F_VIRTUAL)
			fprintf(out, ",\"virtual\":true");
		if (m.flags & SYM_LAYOUT_F_UNKNOWN_OFFSET)
			fprintf(out, ",\"offset_unknown\":true");
		if (m.n_dims) {
			fprintf(out, ",\"dims\":[");
			for (uint32_t d = 0; d < m.n_dims; d++)
				fprintf(out, d ? ",%" PRId64 : "%" PRId64,
					m.dims[d] == UINT64_MAX ? -1 : (int64_t)m.dims[d]);
			fputc(']', out);
		}
		if (m.n && depth < 64) {
			fprintf(out, ",\"members\":");
			json_members(out, l, m.first, m.n, depth + 1);
		}
		fputc('}', out);
	}
	fputc(']', out);
}

void layout_print_json(FILE *out, const sym_layout *l, uint32_t t)
{
	sym_layout_type_info ti;
	if (!sym_layout_type(l, t, &ti))
		return;
	fprintf(out, "{\"name\":");
	layout_print_json_string(out, ti.name);
	fprintf(out, ",\"kind\":\"%s\",\"size\":%" PRIu64, kind_word(ti.kind), ti.size);
	if (ti.align)
		fprintf(out, ",\"alignment\":%u", ti.align);
	fprintf(out, ",\"cu\":");
	layout_print_json_string(out, ti.cu);
	fprintf(out, ",\"members\":");
	json_members(out, l, ti.first, ti.n, 0);
	fputc('}', out);
}
