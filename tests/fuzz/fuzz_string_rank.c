// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_string_rank: the string ordinals the service builds over an index's
 * string table (service/resolve/svc_string_rank.c), which comes from a blob
 * on disk or in a store. Any bytes as the table: every byte's answer agrees
 * with a plain count (a string starts at 0 and after each NUL but the last
 * byte's; its ordinal is the number of starts before it), ordinals are below
 * n_strings, nothing outside the table has one, and a string's length from
 * svc_string_rank_slice is its bytes up to its NUL (or the table's end).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/resolve/svc_string_rank.h"

/* Checked in every build type (NDEBUG too). */
#define MUST(c) \
	do { \
		if (!(c)) \
			abort(); \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy, so that addresses past it are not another table's. */
	char *table = malloc(size ? size : 1);
	if (!table)
		return 0;
	if (size)
		memcpy(table, data, size);
	svc_string_rank r;
	if (!svc_string_rank_build(&r, table, size)) {
		MUST(size == 0 && r.base == NULL);
		free(table);
		return 0;
	}
	uint32_t starts = 0, ord;
	for (size_t i = 0; i < size; i++) {
		bool start = i == 0 || table[i - 1] == '\0';
		bool got = svc_string_rank_of(&r, table + i, &ord);
		MUST(got == start);
		if (got) {
			MUST(ord == starts);
			starts++;
			uint32_t ord2;
			size_t len;
			MUST(svc_string_rank_slice(&r, table + i, &ord2, &len) && ord2 == ord);
			const char *nul = memchr(table + i, '\0', size - i);
			MUST(len == (nul ? (size_t)(nul - table) - i : size - i));
		} else {
			size_t len;
			MUST(!svc_string_rank_slice(&r, table + i, &ord, &len));
		}
	}
	MUST(starts == r.n_strings);
	MUST(!svc_string_rank_of(&r, table + size, &ord));
	MUST(!svc_string_rank_of(&r, (const char *)((uintptr_t)table - 1), &ord));
	svc_string_rank_free(&r);
	free(table);
	return 0;
}
