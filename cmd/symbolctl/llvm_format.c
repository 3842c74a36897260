// SPDX-License-Identifier: Apache-2.0
/*
 * llvm_format: llvm-symbolizer style output (see llvm_format.h).
 */
#include "cmd/symbolctl/llvm_format.h"

#include <ctype.h>
#include <string.h>

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "??";
}

/* v in decimal at p; returns the end. */
static char *put_u32(char *p, uint32_t v)
{
	char tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

bool llvm_format_append(base_buf *out, const llvm_frame *frames, size_t n)
{
	if (n == 0)
		return base_buf_append(out, "??\n??:0:0\n\n", 11);
	for (size_t i = 0; i < n; i++) {
		const char *fn = or_unknown(frames[i].function), *file = or_unknown(frames[i].file);
		size_t lf = strlen(fn), ll = strlen(file);
		/* name \n file : line : column \n, the numbers at most 10 digits each */
		if (!base_buf_reserve(out, lf + ll + 2 * 10 + 4 + 1))
			return false;
		char *p = (char *)out->data + out->len;
		memcpy(p, fn, lf);
		p += lf;
		*p++ = '\n';
		memcpy(p, file, ll);
		p += ll;
		*p++ = ':';
		p = put_u32(p, frames[i].line);
		*p++ = ':';
		p = put_u32(p, frames[i].column);
		*p++ = '\n';
		out->len = (size_t)(p - (char *)out->data);
	}
	return base_buf_append(out, "\n", 1);
}

void llvm_format_frames(FILE *out, const llvm_frame *frames, size_t n)
{
	base_buf b;
	base_buf_init(&b, SIZE_MAX);
	if (llvm_format_append(&b, frames, n))
		fwrite(b.data, 1, b.len, out);
	else
		fputs("??\n??:0:0\n\n", out); /* out of memory: still one answer */
	base_buf_deinit(&b);
}

int llvm_format_parse_address(const char *s, uint64_t *out)
{
	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t v = 0;
	int digits = 0;
	for (; isxdigit((unsigned char)*s); s++, digits++) {
		if (digits >= 16)
			return -1;
		int d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
		v = v << 4 | (uint64_t)d;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (!digits || *s)
		return -1;
	*out = v;
	return 0;
}
