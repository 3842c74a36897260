/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sym_dwarf: collects scopes, function names and line rows from DWARF through
 * libdw, for the index builder.
 *
 * Units are dealt out by number: shard s of n takes units u with u % n == s, so
 * n threads, each with its own Dwarf handle over the same image, split the work
 * (a Dwarf * stays on one thread).
 */
#ifndef SYM_DWARF_IMPL_H
#define SYM_DWARF_IMPL_H

#include <elfutils/libdw.h>

#include "symbolizer/sym_collect_impl.h"
#include "symbolizer/sym_error.h"

sym_errc sym_dwarf_collect(Dwarf *dw, unsigned shard, unsigned nshards, sym_collect *out,
			   sym_error *err);

#endif
