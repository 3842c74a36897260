// SPDX-License-Identifier: Apache-2.0
/*
 * llvm_format: llvm-symbolizer style output (see llvm_format.h).
 */
#include "cmd/symbolctl/llvm_format.h"

#include <ctype.h>

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "??";
}

void llvm_format_frames(FILE *out, const llvm_frame *frames, size_t n)
{
	if (n == 0) {
		fputs("??\n??:0:0\n\n", out);
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s\n%s:%u:%u\n", or_unknown(frames[i].function),
			or_unknown(frames[i].file), frames[i].line, frames[i].column);
	fputc('\n', out);
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
