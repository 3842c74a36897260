// SPDX-License-Identifier: Apache-2.0
/*
 * sym_index_build: the builder's orchestration (API in sym_index.h).
 *
 * probe -> inflate compressed sections, lay out and relocate an ET_REL file
 * (sym_reloc) -> open with libelf/libdw (and the dwz
 * file from the caller's resolver) -> walk DWARF units on worker threads, each
 * with its own Dwarf handle, the symbol tables on one more beside them;
 * without DWARF, a Go binary's pclntab (sym_gopclntab_collect.h) -> add
 * symbol-table scopes -> merge -> write.
 */
#include "symbolizer/sym_alt_impl.h"
#include "symbolizer/sym_index.h"
#include "symbolizer/sym_dwarf_impl.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "symbolizer/sym_reloc_impl.h"
#include "symbolizer/sym_prefer_impl.h"
#include "symbolizer/sym_index_write_impl.h"
#include "symbolizer/sym_symtab_impl.h"
#include "symbolizer/sym_gopclntab_collect_impl.h"

#include <elfutils/libdw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DEFAULT_MAX_INFLATE ((uint64_t)2 << 30)
#define MAX_THREADS 8
/* Below this much DWARF one thread is faster than starting more. */
#define PARALLEL_MIN_DWARF_BYTES ((size_t)4 << 20)

/* An ELF image ready for libdw: inflated copy (owned) or the caller's bytes. */
struct image {
	const void *data;
	size_t size;
	void *owned;
};

static void image_deinit(struct image *im)
{
	free(im->owned);
	memset(im, 0, sizeof(*im));
}

static sym_errc image_init(struct image *im, const void *data, size_t size, uint64_t cap,
			   sym_error *err)
{
	memset(im, 0, sizeof(*im));
	sym_errc rc = sym_reloc_prepare(data, size, cap, &im->owned, &im->size, err);
	if (rc)
		return rc;
	if (!im->owned) {
		im->data = data;
		im->size = size;
	} else {
		im->data = im->owned;
	}
	return SYM_OK;
}

/* One thread's share: its own Elf and Dwarf handles over the shared images. */
struct shard {
	const struct image *main, *alt;
	uint64_t min_code_addr;
	size_t reopen_spans;
	bool release_pages;   /* main's bytes are the caller's file mapping */
	_Atomic uint32_t *next_unit;  /* shared by the shards: the next unit to take */
	sym_collect *out;
	sym_error err;
	sym_errc rc;
};

static sym_errc open_dwarf(const struct image *im, Elf **elf, Dwarf **dw, sym_error *err)
{
	*dw = NULL;
	sym_errc rc = sym_elf_begin(im->data, im->size, elf, err);
	if (rc)
		return rc;
	*dw = dwarf_begin_elf(*elf, DWARF_C_READ, NULL);
	if (!*dw) {
		rc = sym_error_set(err, SYM_E_BAD_DWARF, "libdw: %s", dwarf_errmsg(-1));
		elf_end(*elf);
		*elf = NULL;
	}
	return rc;
}

static void *shard_run(void *arg)
{
	struct shard *s = arg;
	Elf *elf = NULL, *alt_elf = NULL;
	Dwarf *alt_dw = NULL;
	s->rc = sym_elf_begin(s->main->data, s->main->size, &elf, &s->err);
	if (!s->rc && s->alt) {
		s->rc = open_dwarf(s->alt, &alt_elf, &alt_dw, &s->err);
		if (s->rc)
			sym_error_prefix(&s->err, "dwz supplementary file");
	}
	if (!s->rc) {
		s->out->min_code_addr = s->min_code_addr;
		sym_dwarf_source src = {.elf = elf, .alt = alt_dw, .reopen_spans = s->reopen_spans,
					.next_unit = s->next_unit};
		if (s->release_pages) {
			src.mapping = s->main->data;
			src.mapping_size = s->main->size;
		}
		s->rc = sym_dwarf_collect(&src, s->out, &s->err);
	}
	if (alt_dw)
		dwarf_end(alt_dw);
	if (alt_elf)
		elf_end(alt_elf);
	if (elf)
		elf_end(elf);
	return NULL;
}

/* Lowest address of code; DWARF ranges below it describe discarded code. */
static uint64_t min_code_address(Elf *elf)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh) || eh.e_type == ET_REL)
		return 0;
	uint64_t min = UINT64_MAX;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size &&
		    sh.sh_addr && sh.sh_addr < min)
			min = sh.sh_addr;
	}
	return min == UINT64_MAX ? 0 : min;
}

static size_t dwarf_bytes(Elf *elf)
{
	size_t total = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name = sym_elf_section_name(elf, scn, &sh);
		if (name && !strncmp(name, ".debug_", 7) && sh.sh_type != SHT_NOBITS)
			total += sh.sh_size;
	}
	return total;
}

/*
 * Threads for the walk: the option, else one per CPU for enough DWARF. A dwz
 * file walks on one: an imported unit's scopes belong to its first importer.
 */
static unsigned thread_count(const sym_build_options *o, Elf *elf, const sym_elf_info *info)
{
	unsigned n;
	if (o && o->threads) {
		n = o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
	} else if (dwarf_bytes(elf) < PARALLEL_MIN_DWARF_BYTES) {
		n = 1;
	} else {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		n = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (unsigned)cpus;
	}
	if (n == 1 || info->has_alt)
		return 1;
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && sym_dwarf_has_partial_units(dw))
		n = 1;
	if (dw)
		dwarf_end(dw);
	return n;
}

/*
 * After the walk, a file mapping's .debug_* pages are dropped (the walk
 * dropped each unit's .debug_info; line tables, strings and the rest stayed):
 * the tail of the build then runs without them resident.
 */
static void release_debug_sections(Elf *elf, const struct image *im)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = (uintptr_t)im->data;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name = sym_elf_section_name(elf, scn, &sh);
		if (!name || strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS ||
		    sh.sh_offset > im->size || sh.sh_size > im->size - sh.sh_offset)
			continue;
		uintptr_t lo = (base + sh.sh_offset + page - 1) & ~(page - 1);
		uintptr_t hi = (base + sh.sh_offset + sh.sh_size) & ~(page - 1);
		if (lo < hi)
			madvise((void *)lo, hi - lo, MADV_DONTNEED);
	}
}

/* Gets and checks the dwz file; its image is inflated into *alt. */
static sym_errc resolve_alt(const sym_elf_info *info, const sym_build_options *o, uint64_t cap,
			    struct image *alt, sym_error *err)
{
	const void *data;
	size_t size;
	sym_errc rc = sym_alt_find(info, o ? o->alt_resolver : NULL, o ? o->alt_ctx : NULL, &data,
				   &size, err);
	if (rc)
		return rc;
	rc = image_init(alt, data, size, cap, err);
	if (rc)
		sym_alt_error_prefix(info, err);
	return rc;
}

/* Runs the shards' DWARF walks (thread 0 on the caller) and joins them. */
static void run_shards(struct shard *shards, unsigned nshards)
{
	pthread_t tids[MAX_THREADS];
	bool started[MAX_THREADS] = {0};
	for (unsigned i = 1; i < nshards; i++) {
		if (shards[i].rc)
			continue;
		started[i] = pthread_create(&tids[i], NULL, shard_run, &shards[i]) == 0;
		if (!started[i])
			shards[i].rc = sym_error_set(&shards[i].err, SYM_E_NOMEM, "cannot start a thread");
	}
	if (!shards[0].rc)
		shard_run(&shards[0]);
	for (unsigned i = 1; i < nshards; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
}

/*
 * Walks the DWARF of the image on up to thread_count() threads and merges
 * what they found into all, in unit order. Refused DWARF is no error while
 * symbols remain to answer from (*from_dwarf tells whether any unit was read).
 */
static sym_errc collect_dwarf(struct image *main_im, struct image *alt_im, const sym_elf_info *info,
			      Elf *elf, const sym_build_options *opts, uint64_t min_code,
			      sym_collect *all, bool *from_dwarf, sym_error *err)
{
	unsigned nshards = thread_count(opts, elf, info);
	struct shard *shards = calloc(nshards, sizeof(*shards));
	sym_collect *outs = calloc(nshards, sizeof(*outs));
	if (!shards || !outs) {
		free(shards);
		free(outs);
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	}
	_Atomic uint32_t next_unit = 0;
	for (unsigned i = 0; i < nshards; i++) {
		shards[i] = (struct shard){.main = main_im, .alt = info->has_alt ? alt_im : NULL,
					   .min_code_addr = min_code,
					   .next_unit = &next_unit,
					   .out = &outs[i],
					   .reopen_spans = opts ? opts->reopen_spans : 0,
					   .release_pages = opts && opts->input_is_file_mapping &&
							    !main_im->owned};
		if (sym_collect_init(&outs[i]))
			shards[i].rc = sym_error_set(&shards[i].err, SYM_E_NOMEM, "out of memory");
	}
	run_shards(shards, nshards);
	sym_errc rc = SYM_OK;
	for (unsigned i = 0; i < nshards && !rc; i++) {
		bool fatal = shards[i].rc && (shards[i].rc != SYM_E_BAD_DWARF ||
					      (i == 0 && !info->has_symtab && !info->has_dynsym));
		if (fatal) {
			rc = shards[i].rc;
			if (err)
				*err = shards[i].err;
		} else if (!shards[i].rc) {
			*from_dwarf = true;
		}
	}
	if (!rc && sym_collect_merge_units(all, outs, nshards))
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory merging");
	for (unsigned i = 0; i < nshards; i++)
		sym_collect_deinit(&outs[i]);
	free(outs);
	free(shards);
	return rc;
}

/* The allocated sections with contents or a size, names interned in strs. */
static sym_errc collect_sections(Elf *elf, sym_strtab *strs, base_vec *out, sym_error *err)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && out->len < SYM_IX_MAX_SECTIONS) {
		GElf_Shdr sh;
		const char *name = sym_elf_section_name(elf, scn, &sh);
		if (!name || !*name || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		struct sym_ix_section *s = base_vec_push(out);
		uint32_t off = sym_strtab_add_cstr(strs, name);
		if (!s || off == SYM_STR_NONE)
			return sym_error_set(err, SYM_E_NOMEM, "out of memory reading sections");
		*s = (struct sym_ix_section){.addr = sh.sh_addr, .size = sh.sh_size, .name = off};
	}
	return SYM_OK;
}

/*
 * A Go binary's pclntab into all, for a file whose DWARF gave nothing. A
 * missing pclntab is no error; a malformed one is while no symbols remain.
 */
static sym_errc collect_gopclntab(Elf *elf, const struct image *im, const sym_elf_info *info,
				  sym_collect *all, bool *from_pclntab, sym_error *err)
{
	sym_gopcln_image *go = malloc(sizeof(*go));
	if (!go)
		return sym_error_set(err, SYM_E_NOMEM, "out of memory");
	sym_error e = {0};
	sym_errc rc = sym_gopcln_find(elf, im->data, im->size, info, go, &e);
	if (!rc)
		rc = sym_gopcln_collect(&go->tab, all, &e);
	free(go);
	if (!rc) {
		*from_pclntab = true;
		return SYM_OK;
	}
	if (rc == SYM_E_NO_SYMBOLS || (rc != SYM_E_NOMEM && (info->has_symtab || info->has_dynsym)))
		return SYM_OK;
	if (err)
		*err = e;
	return rc;
}

/*
 * The symbol tables' functions, read on a thread of their own beside the
 * DWARF walk (each name demangled: a tenth of a C++ file's build, which ran
 * alone after the walk), with an Elf handle of its own over the image.
 */
struct symtab_task {
	const struct image *im;
	sym_collect *out;
	sym_errc rc;
	sym_error err;
	pthread_t tid;
	bool started;
};

static void *symtab_run(void *arg)
{
	struct symtab_task *t = arg;
	Elf *elf = NULL;
	t->rc = sym_elf_begin(t->im->data, t->im->size, &elf, &t->err);
	if (!t->rc)
		t->rc = sym_symtab_collect(elf, t->out, &t->err);
	if (elf)
		elf_end(elf);
	return NULL;
}

static void symtab_start(struct symtab_task *t)
{
	t->started = pthread_create(&t->tid, NULL, symtab_run, t) == 0;
}

/* Joins the task, or runs it here when it never started. */
static sym_errc symtab_finish(struct symtab_task *t, sym_error *err)
{
	if (t->started)
		pthread_join(t->tid, NULL);
	else
		symtab_run(t);
	t->started = false;
	if (t->rc && err)
		*err = t->err;
	return t->rc;
}

/* Adds the symbol tables' functions and writes the blob. */
static sym_errc finish_index(Elf *elf, const sym_elf_info *info, sym_collect *all,
			     sym_collect *syms, bool from_dwarf, bool from_pclntab, void **blob,
			     size_t *blob_size, sym_error *err)
{
	sym_errc rc;
	base_vec symbol_spans, sections;
	base_vec_init(&symbol_spans, sizeof(sym_span), SYM_MAX_SPANS);
	base_vec_init(&sections, sizeof(struct sym_ix_section), SYM_IX_MAX_SECTIONS);
	/* A kernel image: where _stext and _text are, for a KASLR slide (pprof's GetBase). */
	static const char *const kernel_syms[2] = {"_stext", "_text"};
	uint64_t kernel[2] = {0, 0};
	if (info->type == ET_EXEC)
		sym_symtab_find(elf, kernel_syms, kernel, 2);
	if ((rc = collect_sections(elf, &all->strs, &sections, err))) {
		/* err says why */
	} else if (sym_collect_merge(all, syms, &symbol_spans)) {
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory merging symbols");
	} else if ((rc = sym_prefer_symbol_names(all, &symbol_spans, err))) {
		/* err says why */
	} else if (all->scope_spans.len == 0 && symbol_spans.len == 0 && all->line_spans.len == 0) {
		rc = sym_error_set(err, SYM_E_NO_SYMBOLS,
				   "no DWARF code ranges, line rows or function symbols");
	} else {
		sym_index_input in = {.c = all, .symbol_spans = &symbol_spans, .elf = info,
				      .from_dwarf = from_dwarf, .from_pclntab = from_pclntab,
				      .sections = sections.data,
				      .n_sections = (uint32_t)sections.len, .elf_type = info->type,
				      .kernel_stext = kernel[0], .kernel_text = kernel[1]};
		rc = sym_index_write(&in, blob, blob_size, err);
	}
	base_vec_deinit(&sections);
	base_vec_deinit(&symbol_spans);
	return rc;
}

sym_errc sym_index_build(const void *elf_data, size_t elf_size, const sym_build_options *opts,
			 void **blob, size_t *blob_size, sym_error *err)
{
	*blob = NULL;
	*blob_size = 0;
	uint64_t cap = opts && opts->max_decompressed_bytes ? opts->max_decompressed_bytes
							    : DEFAULT_MAX_INFLATE;
	sym_elf_info info;
	sym_errc rc = sym_elf_probe(elf_data, elf_size, &info, err);
	if (rc)
		return rc;
	struct image main_im = {0}, alt_im = {0};
	Elf *elf = NULL;
	sym_collect all, syms;
	bool all_ok = sym_collect_init(&all) == 0, syms_ok = sym_collect_init(&syms) == 0;
	bool from_dwarf = false;
	if (!all_ok || !syms_ok) {
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = image_init(&main_im, elf_data, elf_size, cap, err)))
		goto out;
	if ((rc = sym_elf_begin(main_im.data, main_im.size, &elf, err)))
		goto out;
	uint64_t min_code = min_code_address(elf);
	all.min_code_addr = syms.min_code_addr = min_code;
	struct symtab_task symtab = {.im = &main_im, .out = &syms};
	if (info.has_debug_info) {
		if (info.has_alt && (rc = resolve_alt(&info, opts, cap, &alt_im, err)))
			goto out;
		symtab_start(&symtab);
		rc = collect_dwarf(&main_im, &alt_im, &info, elf, opts, min_code, &all, &from_dwarf,
				   err);
		sym_errc symtab_rc = symtab_finish(&symtab, rc ? NULL : err);
		if (rc || (rc = symtab_rc))
			goto out;
		if (opts && opts->input_is_file_mapping && !main_im.owned)
			release_debug_sections(elf, &main_im);
	} else if ((rc = symtab_finish(&symtab, err))) {
		goto out;
	}
	bool from_pclntab = false;
	if (!from_dwarf &&
	    (rc = collect_gopclntab(elf, &main_im, &info, &all, &from_pclntab, err)))
		goto out;
	rc = finish_index(elf, &info, &all, &syms, from_dwarf, from_pclntab, blob, blob_size, err);
out:
	if (all_ok)
		sym_collect_deinit(&all);
	if (syms_ok)
		sym_collect_deinit(&syms);
	if (elf)
		elf_end(elf);
	image_deinit(&alt_im);
	image_deinit(&main_im);
	return rc;
}
