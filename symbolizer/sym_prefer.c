// SPDX-License-Identifier: Apache-2.0
/*
 * sym_prefer: symbol-table names for outermost DWARF frames (see sym_prefer_impl.h).
 */
#include "symbolizer/sym_prefer_impl.h"

#include <stdlib.h>
#include <string.h>

#define CLONE " [clone "

/* Length of s without its trailing " [clone .x]" groups (libiberty's clone suffixes). */
static size_t without_clones(const char *s, size_t n)
{
	for (;;) {
		if (n < 2 || s[n - 1] != ']')
			return n;
		size_t i = n - 1;
		while (i > 0 && s[i] != '[')
			i--;
		if (i < 1 || strncmp(s + i - 1, CLONE, sizeof(CLONE) - 1) != 0)
			return n;
		n = i - 1;
	}
}

/* End of the name part of a demangled function name s[0..n): before "(params) const". */
static size_t name_end(const char *s, size_t n)
{
	static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
	for (bool again = true; again;) {
		again = false;
		for (size_t k = 0; k < sizeof(quals) / sizeof(quals[0]); k++) {
			size_t l = strlen(quals[k]);
			if (n > l && !strncmp(s + n - l, quals[k], l)) {
				n -= l;
				again = true;
			}
		}
	}
	if (n == 0 || s[n - 1] != ')')
		return n;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return i;
	}
	return n;
}

/*
 * Whether qual[0..qi) ends with an anonymous class component "(anonymous ...)"
 * or a lambda template argument "<lambda(...)>" (libiberty: "{lambda(...)#N}").
 */
static bool ends_anonymous(const char *qual, size_t qi, size_t *start)
{
	if (qi > 0 && qual[qi - 1] == '>') {
		int depth = 0;
		for (size_t i = qi; i-- > 0;) {
			if (qual[i] == '>')
				depth++;
			else if (qual[i] == '<' && --depth == 0) {
				*start = i;
				return !strncmp(qual + i, "<lambda(", 8);
			}
		}
		return false;
	}
	static const char *const anon[] = {"(anonymous struct)", "(anonymous class)",
					   "(anonymous union)"};
	for (size_t k = 0; k < 3; k++) {
		size_t l = strlen(anon[k]);
		if (qi >= l && !strncmp(qual + qi - l, anon[k], l)) {
			*start = qi - l;
			return true;
		}
	}
	return false;
}

/* Start of the <...> list that ends at s[n - 1] == '>', or n when unbalanced. */
static size_t list_start(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == '>')
			depth++;
		else if (s[i] == '<' && --depth == 0)
			return i;
	}
	return n;
}

/*
 * Template arguments naming a lambda: GCC's DWARF writes the lambda's function
 * with its parameters (f(int)::<lambda(int)>), libiberty without (f::{lambda(int)#1}):
 * such lists are compared as wildcards. Others must be equal (identical code
 * folding makes Buffer<int> and Buffer<unsigned> one address).
 */
static bool skip_lambda_args(const char *qual, size_t *qi, const char *d, size_t *di,
			     bool any_args)
{
	if (*qi == 0 || *di == 0 || qual[*qi - 1] != '>' || d[*di - 1] != '>')
		return false;
	size_t qs = list_start(qual, *qi), ds = list_start(d, *di);
	if (qs == *qi || ds == *di)
		return false;
	bool lambda = any_args;
	for (size_t i = qs; i + 7 <= *qi && !lambda; i++)
		lambda = !strncmp(qual + i, "lambda(", 7);
	if (!lambda)
		return false;
	*qi = qs;
	*di = ds;
	return true;
}

/* Skips an ABI tag ("[abi:cxx11]", which DWARF names lack) ending at d[*di - 1]. */
static bool skip_abi_tag(const char *d, size_t *di)
{
	if (*di == 0 || d[*di - 1] != ']')
		return false;
	size_t i = *di - 1;
	while (i > 0 && d[i] != '[')
		i--;
	if (strncmp(d + i, "[abi:", 5) != 0)
		return false;
	*di = i;
	return true;
}

/*
 * Skips the parameters of an enclosing function ("f(int)::Local" where DWARF
 * writes "f::Local"), ending at d[*di - 1].
 */
static bool skip_params(const char *qual, size_t qi, const char *d, size_t *di)
{
	if (*di == 0 || d[*di - 1] != ')' || d[*di] != ':' || qual[qi - 1] == ')')
		return false;
	int depth = 0;
	for (size_t i = *di; i-- > 0;) {
		if (d[i] == ')')
			depth++;
		else if (d[i] == '(' && --depth == 0) {
			*di = i;
			return true;
		}
	}
	return false;
}

bool sym_prefer_matches(const char *qual, const char *demangled, bool any_args, size_t *name_len)
{
	size_t dn = without_clones(demangled, strlen(demangled));
	size_t de = name_end(demangled, dn);
	size_t qi = strlen(qual), di = de;
	*name_len = dn;
	/* Backwards over both, spaces ignored ("> >" and ">>" are one spelling). */
	while (qi > 0) {
		size_t anon;
		if (qual[qi - 1] == ' ') {
			qi--;
			continue;
		}
		if (di > 0 && demangled[di - 1] == ' ') {
			di--;
			continue;
		}
		if (skip_lambda_args(qual, &qi, demangled, &di, any_args) ||
		    skip_abi_tag(demangled, &di) || skip_params(qual, qi, demangled, &di))
			continue;
		if (di > 0 && demangled[di - 1] == '}' && ends_anonymous(qual, qi, &anon)) {
			int depth = 0;
			while (di > 0) {
				char c = demangled[--di];
				if (c == '}')
					depth++;
				else if (c == '{' && --depth == 0)
					break;
			}
			qi = anon;
			continue;
		}
		if (di == 0 || demangled[di - 1] != qual[qi - 1])
			return false;
		qi--;
		di--;
	}
	if (di == 0)
		return true;
	char b = demangled[di - 1];
	return b == ' ' || b == '*' || b == '&' || b == ':';
}

static int cmp_lo(const void *pa, const void *pb)
{
	const sym_span *a = pa, *b = pb;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The symbol span covering addr in sorted spans, or NULL. */
static const sym_span *covering(const sym_span *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && v[lo - 1].hi > addr ? &v[lo - 1] : NULL;
}

sym_errc sym_prefer_symbol_names(sym_collect *all, const base_vec *symbol_spans, sym_error *err)
{
	size_t n = symbol_spans->len;
	if (!n || !all->scope_spans.len)
		return SYM_OK;
	sym_span *syms = malloc(n * sizeof(*syms));
	bool *done = calloc(all->funcs.len ? all->funcs.len : 1, sizeof(*done));
	sym_errc rc = SYM_OK;
	if (!syms || !done) {
		rc = sym_error_set(err, SYM_E_NOMEM, "out of memory choosing names");
		goto out;
	}
	memcpy(syms, symbol_spans->data, n * sizeof(*syms));
	qsort(syms, n, sizeof(*syms), cmp_lo);
	for (size_t i = 0; i < all->scope_spans.len; i++) {
		const sym_span *sp = &BASE_VEC_AT(&all->scope_spans, sym_span, i);
		const struct sym_ix_scope *sc = &BASE_VEC_AT(&all->scopes, struct sym_ix_scope, sp->a);
		if (sc->parent != SYM_IX_NONE || done[sc->func])
			continue;
		struct sym_ix_func *f = &BASE_VEC_AT(&all->funcs, struct sym_ix_func, sc->func);
		bool label = f->linkage && f->linkage == f->name; /* an assembler unit's */
		const sym_span *y = f->linkage && !label ? NULL : covering(syms, n, sp->lo);
		if (!y)
			continue;
		const struct sym_ix_scope *ys = &BASE_VEC_AT(&all->scopes, struct sym_ix_scope, y->a);
		const struct sym_ix_func *yf = &BASE_VEC_AT(&all->funcs, struct sym_ix_func, ys->func);
		const char *d = sym_strtab_get(&all->strs, yf->display);
		size_t len = strlen(d);
		if (label ? y->lo != sp->lo || yf->linkage :
			    !yf->linkage || !sym_prefer_matches(sym_strtab_get(&all->strs, f->display),
								d, !y->c, &len))
			continue;
		char *copy = strndup(d, len);  /* d moves if the table grows */
		uint32_t off = copy ? sym_strtab_add(&all->strs, copy, len) : SYM_STR_NONE;
		free(copy);
		if (off == SYM_STR_NONE) {
			rc = sym_error_set(err, SYM_E_NOMEM, "out of memory choosing names");
			goto out;
		}
		f->display = off;
		done[sc->func] = true;
	}
out:
	free(syms);
	free(done);
	return rc;
}
