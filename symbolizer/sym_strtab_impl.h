/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_strtab: a string interner that yields offsets into one byte table, the
 * string table of the index. Offset 0 is always "". The table has a hard cap
 * on its size (the index addresses it with 32-bit offsets).
 */
#ifndef SYM_STRTAB_IMPL_H
#define SYM_STRTAB_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* A slot of the interning table: the string's offset + 1 (0 = empty) and the
 * low 32 bits of its hash, so a probe compares bytes only when the hashes agree
 * and growing needs no rehash of the strings. */
struct sym_strtab_slot {
	uint32_t off1;
	uint32_t hash;
};

typedef struct sym_strtab {
	char *bytes;
	size_t size, cap;
	struct sym_strtab_slot *slots;  /* open addressing, linear probing */
	size_t nslots, used;
} sym_strtab;

#define SYM_STRTAB_MAX ((size_t)UINT32_MAX - 1)
#define SYM_STR_NONE UINT32_MAX

int sym_strtab_init(sym_strtab *t);
void sym_strtab_deinit(sym_strtab *t);

/* Interns s[0..len); returns its offset, or SYM_STR_NONE on allocation failure or cap. */
uint32_t sym_strtab_add(sym_strtab *t, const char *s, size_t len);

static inline uint32_t sym_strtab_add_cstr(sym_strtab *t, const char *s)
{
	size_t n = 0;
	if (s)
		while (s[n])
			n++;
	return sym_strtab_add(t, s ? s : "", n);
}

static inline const char *sym_strtab_get(const sym_strtab *t, uint32_t off)
{
	return t->bytes + off;
}

#endif
