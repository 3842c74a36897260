/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_layout_load_impl: the loaded layout handle, shared by sym_layout_load.c
 * and sym_layout_query.c only (not part of the symbolizer's API).
 */
#ifndef SYM_LAYOUT_LOAD_IMPL_H
#define SYM_LAYOUT_LOAD_IMPL_H

#include "symbolizer/sym_layout.h"
#include "symbolizer/sym_layout_format_impl.h"

struct sym_layout {
	void *owned;     /* an aligned copy when the caller's blob was not */
	const sym_layout_header *h;
	const sym_layout_type_rec *types;
	const sym_layout_member_rec *members;
	const uint64_t *dims;
	const uint32_t *by_name;
	const sym_layout_alias_rec *aliases;
	const char *strs;
};

/* The type owning member id m (validated ids only). */
const sym_layout_type_rec *sym_layout_type_of(const sym_layout *l, uint32_t m);

#endif
