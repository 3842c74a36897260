// SPDX-License-Identifier: Apache-2.0
/*
 * sym_inflate: decompression of debug sections under a cap (see sym_inflate.h):
 * which sections, the new image's layout and headers, the threads; one
 * section's body is inflated by sym_inflate_body.c.
 */
#include "symbolizer/sym_inflate.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "symbolizer/sym_inflate_impl.h"

#include <elf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_vec.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

BASE_VEC_DEFINE(inflated_vec, struct inflated)

/* Debug sections the index builder reads; other compressed ones are dropped. */
static bool section_needed(const char *name)
{
	static const char *const needed[] = {
		"info", "abbrev", "line", "line_str", "str", "str_offsets", "addr",
		"ranges", "rnglists", "types", NULL,
	};
	const char *base = !strncmp(name, ".debug_", 7) ? name + 7
			 : !strncmp(name, ".zdebug_", 8) ? name + 8 : NULL;
	if (!base)
		return false;
	for (int i = 0; needed[i]; i++)
		if (!strcmp(base, needed[i]))
			return true;
	return false;
}

static uint64_t read_be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Reads the compression header of one section into *s; false if not compressed. */
static sym_errc classify(const uint8_t *image, size_t size, const GElf_Shdr *sh, const char *name,
			 struct inflated *s, sym_error *err)
{
	s->method = COMP_NONE;
	bool gnu = !strncmp(name, ".zdebug", 7);
	if (sh->sh_type == SHT_NOBITS || (!(sh->sh_flags & SHF_COMPRESSED) && !gnu))
		return SYM_OK;
	if (sh->sh_offset > size || sh->sh_size > size - sh->sh_offset)
		return sym_error_set(err, SYM_E_BAD_ELF, "section %s extends past the end of the file", name);
	const uint8_t *p = image + sh->sh_offset;
	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;
		if (sh->sh_size < sizeof(ch))
			return sym_error_set(err, SYM_E_BAD_ELF, "section %s: truncated compression header", name);
		memcpy(&ch, p, sizeof(ch));
		if (ch.ch_type == ELFCOMPRESS_ZLIB)
			s->method = COMP_ZLIB;
		else if (ch.ch_type == ELFCOMPRESS_ZSTD)
			s->method = COMP_ZSTD;
		else
			return sym_error_set(err, SYM_E_UNSUPPORTED, "section %s: unknown compression type %u",
					     name, ch.ch_type);
		s->claimed = ch.ch_size;
		s->align = ch.ch_addralign;
		s->src = p + sizeof(ch);
		s->src_size = sh->sh_size - sizeof(ch);
	} else {
		if (sh->sh_size < 12 || memcmp(p, "ZLIB", 4) != 0)
			return SYM_OK; /* named .zdebug but not compressed: leave it */
		s->method = COMP_ZLIB;
		s->claimed = read_be64(p + 4);
		s->align = 1;
		s->src = p + 12;
		s->src_size = sh->sh_size - 12;
		s->rename = true;
	}
	return SYM_OK;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * Writes the new section header table at out: copies of the old headers,
 * those of the inflated sections patched, and the section name table moved
 * to strtab_off when it grew (shstrndx SIZE_MAX: it did not).
 */
static sym_errc write_section_headers(Elf *elf, size_t shnum, const struct inflated *secs,
				      size_t nsecs, size_t shstrndx, uint64_t strtab_off,
				      uint64_t strtab_size, uint8_t *out, sym_error *err)
{
	size_t next = 0;
	for (size_t i = 0; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return sym_error_set(err, SYM_E_BAD_ELF, "libelf: section header %zu: %s", i,
					     elf_errmsg(-1));
		if (next < nsecs && secs[next].index == i) {
			sh.sh_offset = secs[next].new_offset;
			sh.sh_size = secs[next].size;
			sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			sh.sh_addralign = secs[next].align ? secs[next].align : 1;
			if (secs[next].drop) {
				sh.sh_type = SHT_NOBITS;
				sh.sh_size = 0;
			}
			if (secs[next].rename)
				sh.sh_name = (Elf64_Word)secs[next].new_name;
			next++;
		}
		if (i == shstrndx) {
			sh.sh_offset = strtab_off;
			sh.sh_size = strtab_size;
		}
		Elf64_Shdr raw = {
			.sh_name = (Elf64_Word)sh.sh_name, .sh_type = sh.sh_type, .sh_flags = sh.sh_flags,
			.sh_addr = sh.sh_addr, .sh_offset = sh.sh_offset, .sh_size = sh.sh_size,
			.sh_link = sh.sh_link, .sh_info = sh.sh_info, .sh_addralign = sh.sh_addralign,
			.sh_entsize = sh.sh_entsize};
		memcpy(out + i * sizeof(raw), &raw, sizeof(raw));
	}
	return SYM_OK;
}

/* Where the new image puts what it adds after the original bytes. */
struct layout {
	size_t shstrndx;
	GElf_Shdr strsh;           /* the section name table's header */
	bool renames;
	uint64_t strtab_off, strtab_size, shoff, total;
};

/*
 * Lays out the new image: each inflated body at a 16-byte aligned offset past
 * the original bytes, at its claimed size (in_place: not inflated yet; its
 * real size must equal the claim) or its real size.
 */
static sym_errc plan(size_t size, Elf *elf, size_t shnum, struct inflated *secs, size_t nsecs,
		     struct layout *l, sym_error *err)
{
	if (elf_getshdrstrndx(elf, &l->shstrndx) != 0)
		return sym_error_set(err, SYM_E_BAD_ELF, "libelf: no section name table");
	Elf_Scn *strscn = elf_getscn(elf, l->shstrndx);
	if (!strscn || !gelf_getshdr(strscn, &l->strsh) || l->strsh.sh_type == SHT_NOBITS ||
	    l->strsh.sh_offset > size || l->strsh.sh_size > size - l->strsh.sh_offset)
		return sym_error_set(err, SYM_E_BAD_ELF, "bad section name table");
	uint64_t off = align_up(size, 16);
	l->renames = false;
	for (size_t i = 0; i < nsecs; i++) {
		secs[i].new_offset = off;
		if (!secs[i].drop)
			off = align_up(off + (secs[i].in_place ? secs[i].claimed : secs[i].size), 16);
		l->renames |= secs[i].rename;
	}
	l->strtab_off = off;
	l->strtab_size = l->strsh.sh_size;
	if (l->renames) {
		for (size_t i = 0; i < nsecs; i++) {
			if (!secs[i].rename)
				continue;
			GElf_Shdr sh;
			const char *name = sym_elf_section_name(elf, elf_getscn(elf, secs[i].index), &sh);
			secs[i].new_name = l->strtab_size;
			l->strtab_size += strlen(name); /* ".zdebug_x" -> ".debug_x" + NUL */
		}
		off = align_up(off + l->strtab_size, 16);
	}
	l->shoff = off;
	l->total = l->shoff + (uint64_t)shnum * sizeof(Elf64_Shdr);
	return SYM_OK;
}

/* Writes the rest of the new image: the original bytes, the bodies not
 * inflated in place, the grown name table, the section headers. */
static sym_errc assemble(const uint8_t *image, size_t size, Elf *elf, size_t shnum,
			 struct inflated *secs, size_t nsecs, const struct layout *l,
			 uint8_t *img, sym_error *err)
{
	memcpy(img, image, size);
	for (size_t i = 0; i < nsecs; i++)
		if (!secs[i].drop && secs[i].size && !secs[i].in_place)
			memcpy(img + secs[i].new_offset, secs[i].buf, secs[i].size);
	if (l->renames) {
		memcpy(img + l->strtab_off, image + l->strsh.sh_offset, l->strsh.sh_size);
		for (size_t i = 0; i < nsecs; i++) {
			if (!secs[i].rename)
				continue;
			GElf_Shdr sh;
			const char *name = sym_elf_section_name(elf, elf_getscn(elf, secs[i].index), &sh);
			char *dst = (char *)img + l->strtab_off + secs[i].new_name;
			dst[0] = '.';
			memcpy(dst + 1, name + 2, strlen(name + 2) + 1);
		}
	}
	sym_errc rc = write_section_headers(elf, shnum, secs, nsecs,
					    l->renames ? l->shstrndx : SIZE_MAX, l->strtab_off,
					    l->strtab_size, img + l->shoff, err);
	if (rc)
		return rc;
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof(eh));
	eh.e_shoff = l->shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	memcpy(img, &eh, sizeof(eh));
	return SYM_OK;
}

struct inflate_pool {
	struct inflated *secs;
	size_t n;
	size_t next;
	pthread_mutex_t lock;
};

static void *inflate_worker(void *arg)
{
	struct inflate_pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		if (!p->secs[i].drop)
			sym_inflate_body(&p->secs[i]);
	}
}

/* Inflates the needed sections, on two threads when there is enough to do. */
static sym_errc inflate_all(Elf *elf, struct inflated *secs, size_t n, sym_error *err)
{
	size_t work = 0;
	for (size_t i = 0; i < n; i++)
		work += secs[i].drop ? 0 : secs[i].src_size;
	struct inflate_pool pool = {.secs = secs, .n = n};
	pthread_mutex_init(&pool.lock, NULL);
	pthread_t tid;
	bool threaded = work >= ((size_t)1 << 20) &&
			pthread_create(&tid, NULL, inflate_worker, &pool) == 0;
	inflate_worker(&pool);
	if (threaded)
		pthread_join(tid, NULL);
	pthread_mutex_destroy(&pool.lock);
	for (size_t i = 0; i < n; i++) {
		if (secs[i].rc) {
			GElf_Shdr sh;
			const char *name = sym_elf_section_name(elf, elf_getscn(elf, secs[i].index), &sh);
			if (err)
				*err = secs[i].err;
			sym_error_prefix(err, "section %s", name ? name : "?");
			return secs[i].rc;
		}
	}
	return SYM_OK;
}

/*
 * Inflates the sections and assembles the new image. When every claim is
 * plausible for its compressed size (first_allocation's rule), the image is
 * laid out from the claims first and each body inflates straight into its
 * place (pages are only touched as bytes arrive); else each body grows in
 * its own buffer and is copied in after.
 */
static sym_errc inflate_into_image(const uint8_t *data, size_t size, Elf *elf, size_t shnum,
				   struct inflated *secs, size_t n, void **out, size_t *out_size,
				   sym_error *err)
{
	bool direct = true;
	for (size_t i = 0; i < n; i++)
		direct &= secs[i].drop || secs[i].claimed / 32 <= secs[i].src_size + 4096;
	for (size_t i = 0; i < n; i++)
		secs[i].in_place = direct && !secs[i].drop;
	struct layout l;
	uint8_t *img = NULL;
	sym_errc rc;
	if (direct) {
		if ((rc = plan(size, elf, shnum, secs, n, &l, err)))
			return rc;
		if (l.total > SIZE_MAX || !(img = calloc(1, (size_t)l.total)))
			return sym_error_set(err, SYM_E_NOMEM, "out of memory for the inflated image");
		for (size_t i = 0; i < n; i++)
			if (secs[i].in_place)
				secs[i].buf = img + secs[i].new_offset;
	}
	if ((rc = inflate_all(elf, secs, n, err)))
		goto fail;
	if (!direct) {
		if ((rc = plan(size, elf, shnum, secs, n, &l, err)))
			goto fail;
		if (l.total > SIZE_MAX || !(img = calloc(1, (size_t)l.total))) {
			rc = sym_error_set(err, SYM_E_NOMEM, "out of memory for the inflated image");
			goto fail;
		}
	}
	if ((rc = assemble(data, size, elf, shnum, secs, n, &l, img, err)))
		goto fail;
	*out = img;
	*out_size = (size_t)l.total;
	return SYM_OK;
fail:
	free(img);
	return rc;
}

sym_errc sym_inflate_image(const void *data, size_t size, uint64_t max_bytes, void **out,
			   size_t *out_size, sym_error *err)
{
	*out = NULL;
	*out_size = 0;
	Elf *elf;
	sym_errc rc = sym_elf_begin(data, size, &elf, err);
	if (rc)
		return rc;
	size_t shnum = 0;
	inflated_vec secs;
	inflated_vec_init(&secs, SIZE_MAX / sizeof(struct inflated));
	uint64_t total = 0;
	if (elf_getshdrnum(elf, &shnum) != 0) {
		rc = sym_error_set(err, SYM_E_BAD_ELF, "libelf: %s", elf_errmsg(-1));
		goto out;
	}
	for (size_t i = 1; i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		const char *name = scn ? sym_elf_section_name(elf, scn, &sh) : NULL;
		if (!name)
			continue;
		struct inflated s = {.index = i};
		if ((rc = classify(data, size, &sh, name, &s, err)))
			goto out;
		if (s.method == COMP_NONE)
			continue;
		if (gelf_getclass(elf) != ELFCLASS64 ||
		    ((const unsigned char *)data)[EI_DATA] != ELFDATA2LSB) {
			rc = sym_error_set(err, SYM_E_UNSUPPORTED,
					   "compressed sections are supported in 64-bit little-endian ELF only");
			goto out;
		}
		if (section_needed(name) && (s.claimed > max_bytes || total + s.claimed > max_bytes)) {
			rc = sym_error_set(err, SYM_E_TOO_LARGE,
					   "section %s inflates to %llu bytes, past the cap of %llu",
					   name, (unsigned long long)s.claimed,
					   (unsigned long long)max_bytes);
			goto out;
		}
		if (s.align == 0 || (s.align & (s.align - 1)) || s.align > 4096)
			s.align = 1;
		s.drop = !section_needed(name);
		if (inflated_vec_append(&secs, s)) {
			rc = sym_error_set(err, SYM_E_NOMEM, "out of memory");
			goto out;
		}
		if (!s.drop)
			total += s.claimed;
	}
	if (inflated_vec_len(&secs))
		rc = inflate_into_image(data, size, elf, shnum, inflated_vec_data(&secs),
					inflated_vec_len(&secs), out, out_size, err);
out:
	for (size_t i = 0; i < inflated_vec_len(&secs); i++)
		if (!inflated_vec_data(&secs)[i].in_place)
			free(inflated_vec_data(&secs)[i].buf);
	inflated_vec_deinit(&secs);
	elf_end(elf);
	return rc;
}

sym_errc sym_inflate_estimate(const void *data, size_t size, uint64_t *debug_bytes,
			      uint64_t *inflated_bytes, sym_error *err)
{
	*debug_bytes = *inflated_bytes = 0;
	Elf *elf;
	sym_errc rc = sym_elf_begin(data, size, &elf, err);
	if (rc)
		return rc;
	size_t shnum = 0;
	if (elf_getshdrnum(elf, &shnum) != 0)
		rc = sym_error_set(err, SYM_E_BAD_ELF, "libelf: %s", elf_errmsg(-1));
	for (size_t i = 1; rc == SYM_OK && i < shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		const char *name = scn ? sym_elf_section_name(elf, scn, &sh) : NULL;
		if (!name || !section_needed(name) || sh.sh_type == SHT_NOBITS)
			continue;
		struct inflated s = {.index = i};
		sym_error ignored;
		if (classify(data, size, &sh, name, &s, &ignored) != SYM_OK)
			continue; /* the build itself will say what is wrong */
		uint64_t n = s.method == COMP_NONE ? sh.sh_size : s.claimed;
		if (s.method != COMP_NONE)
			*inflated_bytes = *inflated_bytes + n < *inflated_bytes ? UINT64_MAX
										 : *inflated_bytes + n;
		*debug_bytes = *debug_bytes + n < *debug_bytes ? UINT64_MAX : *debug_bytes + n;
	}
	elf_end(elf);
	return rc;
}
