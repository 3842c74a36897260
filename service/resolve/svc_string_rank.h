/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_string_rank: dense ordinals for the strings of one index.
 *
 * An index's string table (sym_index_strings) is its strings one after
 * another, each NUL-terminated. A bit per byte marks where a string starts
 * (offset 0 and each byte after a NUL), and running counts in the same cache
 * line turn a string's address into its ordinal, 0 to n_strings - 1, with
 * one popcount: what the response tables (svc_response) use as an array slot
 * instead of hashing the string's address; the next start gives the string's
 * length without reading it. Built once, on the worker that loads or builds
 * the index (svc_resolve_rank); about 0.17 bytes per string-table byte.
 */
#ifndef SVC_STRING_RANK_H
#define SVC_STRING_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The bitmap in blocks of one cache line: a block holds the starts of
 * SVC_STRING_RANK_SPAN bytes of the table, the strings starting before it and
 * the running count within it, so that an ordinal reads one line.
 */
#define SVC_STRING_RANK_WORDS 6
#define SVC_STRING_RANK_SPAN (64 * SVC_STRING_RANK_WORDS)

typedef struct svc_string_rank_block {
	uint32_t base;                           /* strings starting before the block */
	uint16_t before[SVC_STRING_RANK_WORDS];  /* ... in the block before word k */
	uint64_t bits[SVC_STRING_RANK_WORDS];    /* bit i of word k: a string starts at 64 k + i */
} svc_string_rank_block;

/*
 * What a response gives each function of the index: its two names (its
 * display name, and its system name: the linkage name, else the name) as
 * ordinals, offsets and lengths, and its first line, found once when the
 * index is ranked, so that a response's first sight of a function reads one
 * record instead of the index's function row and ranking two strings (and of
 * a file, one record instead of ranking its name).
 * A length of SVC_STRING_RANK_LONG means not recorded (a string that long,
 * or a name that starts none of the table's strings): rank it when used.
 */
#define SVC_STRING_RANK_LONG UINT16_MAX

/* svc_string_rank_function.only and svc_string_rank_file.only: no other
 * function's or file's record names the string (so a response's first sight
 * of the function or file is the string's first too). Set only when every
 * name of the index is recorded. */
enum {
	SVC_STRING_RANK_ONLY_DISPLAY = 1,
	SVC_STRING_RANK_ONLY_SYSTEM = 2,
	SVC_STRING_RANK_ONLY_NAME = 1,      /* of a file */
};

typedef struct svc_string_rank_function {
	uint32_t display, system;           /* ordinals */
	uint32_t display_off, system_off;   /* where they start in the string table */
	uint32_t decl_line;
	uint16_t display_len, system_len;
	uint8_t only;                       /* SVC_STRING_RANK_ONLY_* */
} svc_string_rank_function;

/* The same for each file of the index's file table (sym_index_file). */
typedef struct svc_string_rank_file {
	uint32_t name;                      /* ordinal */
	uint32_t name_off;                  /* where it starts in the string table */
	uint16_t name_len;
	uint8_t only;                       /* SVC_STRING_RANK_ONLY_NAME */
} svc_string_rank_file;

typedef struct svc_string_rank {
	const char *base;     /* the string table; NULL when none was built */
	size_t size;
	svc_string_rank_block *blocks;  /* size / SVC_STRING_RANK_SPAN + 1 of them */
	uint32_t n_strings;
	bool terminated;      /* the table's last byte is a NUL */
	/* By function id and by file id (svc_string_rank_index only; NULL, 0
	 * otherwise). */
	svc_string_rank_function *functions;
	uint32_t n_functions;
	svc_string_rank_file *files;
	uint32_t n_files;
	size_t bytes;         /* memory held by blocks and the records */
} svc_string_rank;

/* Builds the ordinals of the string table [base, base + size); false (r
 * zeroed) when out of memory or when size is 0 or past 32-bit counts. */
bool svc_string_rank_build(svc_string_rank *r, const char *base, size_t size);
void svc_string_rank_free(svc_string_rank *r);
/* The same over an index's string table (sym_index_strings), with the
 * names of each of its functions and files (functions, files: left NULL
 * when out of memory). */
struct sym_index;
bool svc_string_rank_index(svc_string_rank *r, const struct sym_index *index);

/* The bits set in x (without a libgcc call where the CPU baseline has no popcnt). */
static inline uint32_t svc_string_rank_popcount(uint64_t x)
{
#ifdef __POPCNT__
	return (uint32_t)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Where s falls in r: its offset, its block and its bitmap word's index and
 * bits, and its bit; false outside the table or not at a string's start. */
struct svc_string_rank_at {
	uintptr_t off;
	const svc_string_rank_block *b;
	unsigned w, bit;
	uint64_t bits;
};

static inline bool svc_string_rank_at(const svc_string_rank *r, const char *s,
				      struct svc_string_rank_at *a)
{
	a->off = (uintptr_t)s - (uintptr_t)r->base;
	if (a->off >= r->size)
		return false;
	a->b = &r->blocks[a->off / SVC_STRING_RANK_SPAN];
	unsigned in = (unsigned)(a->off % SVC_STRING_RANK_SPAN);
	a->w = in >> 6;
	a->bit = in & 63;
	a->bits = a->b->bits[a->w];
	if (!((a->bits >> a->bit) & 1))
		return false;
	return true;
}

/* The ordinal of the string at a (found by svc_string_rank_at). */
static inline uint32_t svc_string_rank_ordinal(const struct svc_string_rank_at *a)
{
	return a->b->base + a->b->before[a->w] +
	       svc_string_rank_popcount(a->bits & ((1ull << a->bit) - 1));
}

/* The ordinal of s when it is the start of a string of the table; false for
 * any other address (outside the table, or inside a string). */
static inline bool svc_string_rank_of(const svc_string_rank *r, const char *s, uint32_t *ord)
{
	struct svc_string_rank_at a;
	if (!svc_string_rank_at(r, s, &a))
		return false;
	*ord = svc_string_rank_ordinal(&a);
	return true;
}

/* The length of the string at off when no string starts in its first word
 * after it (a long string): from the next start, else the table's end. */
size_t svc_string_rank_len_far(const svc_string_rank *r, size_t off);

/*
 * svc_string_rank_of, and also the string's length (its bytes up to its NUL,
 * or to the table's end for an unterminated last one) from where the next
 * string starts, without reading the string.
 */
static inline bool svc_string_rank_slice(const svc_string_rank *r, const char *s, uint32_t *ord,
					 size_t *len)
{
	struct svc_string_rank_at a;
	if (!svc_string_rank_at(r, s, &a))
		return false;
	*ord = svc_string_rank_ordinal(&a);
	const svc_string_rank_block *b = a.b;
	uintptr_t off = a.off;
	unsigned w = a.w, bit = a.bit;
	uint64_t after = a.bits & ~((2ull << bit) - 1);   /* 0 for bit 63 */
	if (after) {
		*len = (size_t)__builtin_ctzll(after) - bit - 1;
		return true;
	}
	/* The next word (in this block, or first in the next), when the table has one. */
	if ((off | 63) + 1 < r->size) {
		after = w + 1 < SVC_STRING_RANK_WORDS ? b->bits[w + 1] : b[1].bits[0];
		if (after) {
			*len = (size_t)__builtin_ctzll(after) + 63 - bit;
			return true;
		}
	}
	*len = svc_string_rank_len_far(r, off);
	return true;
}

#endif
