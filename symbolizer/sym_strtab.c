// SPDX-License-Identifier: Apache-2.0
/*
 * sym_strtab: string interning for the index builder (see sym_strtab_impl.h).
 * The strings' hash (base_hash_bytes, eight bytes a step) into an
 * open-addressed table of offsets, each with its hash (a probe reads the
 * table's bytes only when the hashes agree).
 */
#include "symbolizer/sym_strtab_impl.h"

#include <stdlib.h>
#include <string.h>

#include "base/base_buf.h"
#include "base/base_hash.h"
#include "base/base_utf8.h"

int sym_strtab_init(sym_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 4096;
	t->bytes = malloc(t->cap);
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->bytes || !t->slots) {
		sym_strtab_deinit(t);
		return -1;
	}
	t->bytes[0] = '\0';
	t->size = 1;
	return 0;
}

void sym_strtab_deinit(sym_strtab *t)
{
	free(t->bytes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Doubles the table: each slot moves by its stored hash (nslots <= 2^32). */
static int rehash(sym_strtab *t)
{
	size_t n = t->nslots * 2;
	if (n > (size_t)UINT32_MAX + 1)
		return -1;
	struct sym_strtab_slot *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		struct sym_strtab_slot v = t->slots[i];
		if (!v.off1)
			continue;
		size_t j = v.hash & (n - 1);
		while (slots[j].off1)
			j = (j + 1) & (n - 1);
		slots[j] = v;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static uint32_t add_utf8(sym_strtab *t, const char *s, size_t len)
{
	uint32_t h = (uint32_t)base_hash_bytes(s, len);
	size_t mask = t->nslots - 1, j = h & mask;
	for (uint32_t v; (v = t->slots[j].off1) != 0; j = (j + 1) & mask) {
		const char *c = t->bytes + v - 1;
		/* s has no NUL, so a shorter stored string differs within len bytes;
		 * those bytes are inside the table (v - 1 + len < size). */
		if (t->slots[j].hash == h && v - 1 + len < t->size && memcmp(c, s, len) == 0 &&
		    c[len] == '\0')
			return v - 1;
	}
	if (len + 1 > SYM_STRTAB_MAX - t->size)
		return SYM_STR_NONE;
	if (t->size + len + 1 > t->cap) {
		/* The table's (bytes, size, cap) as a base_buf capped at SYM_STRTAB_MAX. */
		base_buf b = {.data = (uint8_t *)t->bytes, .len = t->size, .cap = t->cap,
			      .max = SYM_STRTAB_MAX};
		bool ok = base_buf_reserve(&b, len + 1);
		t->bytes = (char *)b.data;
		t->cap = b.cap;
		if (!ok)
			return SYM_STR_NONE;
	}
	uint32_t off = (uint32_t)t->size;
	memcpy(t->bytes + off, s, len);
	t->bytes[off + len] = '\0';
	t->size += len + 1;
	t->slots[j] = (struct sym_strtab_slot){off + 1, h};
	if (++t->used * 2 > t->nslots && rehash(t))
		return SYM_STR_NONE;
	return off;
}

uint32_t sym_strtab_add(sym_strtab *t, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	/* A string with an embedded NUL is stored up to the NUL. */
	const char *nul = memchr(s, '\0', len);
	if (nul)
		len = (size_t)(nul - s);
	if (len == 0)
		return 0;
	if (base_utf8_valid(s, len))
		return add_utf8(t, s, len);
	/* Responses carry these strings as proto3 `string`s: invalid bytes
	 * (garbage .debug_str, a hostile file) become U+FFFD here, once. */
	if (len > SYM_STRTAB_MAX / 3)
		return SYM_STR_NONE;
	char *fixed = malloc(BASE_UTF8_REPAIR_MAX(len));
	if (!fixed)
		return SYM_STR_NONE;
	uint32_t off = add_utf8(t, fixed, base_utf8_repair(s, len, fixed));
	free(fixed);
	return off;
}
